package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.core.ChunkBuffer;
import org.rpcrdma.transport.core.Link;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * The memory one call of ours exposes to the responder on one connection (≈ the MRs of a
 * Linux {@code rpcrdma_req}): the call itself in a Position-Zero Read chunk (a long call),
 * and a Reply chunk for a reply too large to come inline. Each has an rkey of its own,
 * made for this call on this connection, and withdrawn ({@link #release}) before the
 * caller's future completes, however the call ends (RFC 8166 §4.4: the responder can no
 * longer reach the memory once the requester sees the result). Thread-safe: the reply
 * arrives on the completion thread while the caller may cancel.
 */
final class CallExposure {
    private final Link link;
    private final RpcRdmaHeader header;
    private ChunkBuffer callBuffer;
    private int callRkey;
    private ChunkBuffer replyBuffer;
    private int replyRkey;
    private final long replyCapacity;
    private boolean released;

    CallExposure(Link link, RpcRdmaHeader header, ChunkBuffer callBuffer, int callRkey, ChunkBuffer replyBuffer,
            int replyRkey, long replyCapacity) {
        this.link = link;
        this.header = header;
        this.callBuffer = callBuffer;
        this.callRkey = callRkey;
        this.replyBuffer = replyBuffer;
        this.replyRkey = replyRkey;
        this.replyCapacity = replyCapacity;
    }

    /** The transport header to send the call with (its chunk lists name our rkeys). */
    RpcRdmaHeader header() {
        return header;
    }

    /** Whether the call goes as RDMA_NOMSG (the whole call in the Position-Zero Read chunk). */
    boolean longCall() {
        return callBuffer != null;
    }

    boolean offersReplyChunk() {
        return replyCapacity > 0;
    }

    long replyCapacity() {
        return replyCapacity;
    }

    /**
     * The reply came through the Reply chunk ({@code length} bytes, checked against what we
     * offered): withdraws every rkey, and hands the reply's memory to the caller as a
     * message (released with it). Null if the call was released meanwhile.
     */
    synchronized ReceivedMessage takeReply(long length) {
        if (released) {
            return null;
        }
        ChunkBuffer r = replyBuffer;
        replyBuffer = null;
        release();
        MemorySegment bytes = r.segment().asSlice(0, length);
        return new ReceivedMessage(bytes, r::release);
    }

    /** Withdraws every rkey and frees the memory not handed on; idempotent. */
    synchronized void release() {
        if (released) {
            return;
        }
        released = true;
        if (callBuffer != null) {
            invalidate(callRkey);
            callBuffer.release();
            callBuffer = null;
        }
        if (replyBuffer != null) {
            invalidate(replyRkey);
            replyBuffer.release();
            replyBuffer = null;
        } else if (replyRkey != 0) {
            invalidate(replyRkey);
        }
    }

    private void invalidate(int rkey) {
        try {
            link.invalidate(rkey);
        } catch (RuntimeException e) {
            // the link is gone, and with it every registration it made
        }
    }
}
