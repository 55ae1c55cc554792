package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A call received from the peer (a forward call on a server, a backward call on a client).
 * The handler answers with {@link #reply} now or later, from any thread, exactly once.
 * The call's bytes stay valid until the reply is sent or {@link #message()} is released.
 */
public interface IncomingCall {
    /** The RPC call bytes, starting at the XID. */
    ReceivedMessage message();

    int xid();

    /** The connection the call arrived on (for backward calls from a server handler). */
    Connection connection();

    /**
     * Sends the RPC reply (bytes start at the XID; the XID must be this call's). Releases
     * the call's receive buffer.
     */
    void reply(MemorySegment rpcReply);

    /**
     * Replies with a DDP result (an NFS READ's data): {@code payload} is written by RDMA
     * Write into the call's first write chunk, without XDR pad, and the requester learns its
     * length from the returned Write list; {@code rpcReply} is the reply without the
     * payload's bytes (the XDR-reduced reply, RFC 8166 §3.4.6: the data item's length word
     * stays in it, the data and its pad do not). A reply too large to go inline goes through
     * the call's Reply chunk. Refused ({@link ReplyRefusedException}, the requester answered
     * ERR_CHUNK) if the call offered no write chunk that holds {@code payload}.
     */
    default void reply(MemorySegment rpcReply, MemorySegment payload) {
        if (payload == null) {
            reply(rpcReply);
            return;
        }
        throw new UnsupportedOperationException("DDP replies are not supported by " + getClass().getName());
    }

    /**
     * Replies with several DDP results: {@code payloads.get(k)} goes into write chunk k (the
     * first DDP-eligible result into the first chunk, and so on: implementation-experience
     * draft §3.8), each without XDR pad; {@code rpcReply} is reduced by all of them. Results
     * beyond the chunks offered stay in {@code rpcReply}; a reply too large to go inline
     * goes through the call's Reply chunk as well. Refused ({@link ReplyRefusedException},
     * the requester answered ERR_CHUNK) if there are more payloads than write chunks or one
     * does not fit its chunk.
     */
    default void replyDdp(MemorySegment rpcReply, List<MemorySegment> payloads) {
        switch (payloads.size()) {
            case 0 -> reply(rpcReply);
            case 1 -> reply(rpcReply, payloads.get(0));
            default -> throw new UnsupportedOperationException("DDP replies with several results are not supported by "
                    + getClass().getName());
        }
    }

    /**
     * Whether the call's bytes were pulled by RDMA Read (it came with read chunks, RFC 8166
     * §3.4.5) into memory of their own rather than sitting in a receive buffer: holding
     * {@link #message()} until the reply then holds that memory, not a receive buffer the
     * peer's next calls need, so a handler may read the bytes in place until it answers.
     */
    default boolean pulled() {
        return false;
    }

    /** Write chunks the requester offered for DDP results (RFC 8166 §3.4.6). */
    default int writeChunkCount() {
        return 0;
    }

    /** Bytes write chunk {@code chunk} holds; 0 if the call offered no such chunk. */
    default long writeChunkCapacity(int chunk) {
        return 0;
    }

    /** Bytes the call's Reply chunk holds (the largest reply it can take beyond inline); 0 if none. */
    default long replyChunkCapacity() {
        return 0;
    }
}
