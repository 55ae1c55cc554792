package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.core.ChunkBuffer;
import org.rpcrdma.transport.core.Link;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * The memory one call of ours exposes to the responder on one connection (≈ the MRs of a
 * Linux {@code rpcrdma_req}): the call itself in a Position-Zero Read chunk (a long call)
 * or its DDP argument in a read chunk, a write chunk for a DDP result, and a Reply chunk
 * for a reply too large to come inline. Each has an rkey of its own, made for this call on
 * this connection, and withdrawn before the caller's future completes, however the call
 * ends (RFC 8166 §4.4: the responder can no longer reach the memory once the requester sees
 * the result). Thread-safe: the reply arrives on the completion thread while the caller
 * may cancel.
 */
final class CallExposure {
    /** Roles of the exposed buffers. */
    static final int CALL = 0;
    static final int REPLY = 1;
    static final int RECEPTACLE = 2;

    private final Link link;
    private final RpcRdmaHeader header;
    private final MemorySegment inline;
    private final MemorySegment receptacle;
    private final ChunkBuffer[] buffers = new ChunkBuffer[3];
    private final int[] rkeys = new int[3];
    private final boolean[] exposed = new boolean[3];
    private boolean released;

    /**
     * @param inline     what follows the header in the Send (null for RDMA_NOMSG)
     * @param receptacle the caller's memory for a DDP result, or null
     */
    CallExposure(Link link, RpcRdmaHeader header, MemorySegment inline, MemorySegment receptacle) {
        this.link = link;
        this.header = header;
        this.inline = inline;
        this.receptacle = receptacle;
    }

    /** Records a buffer the call owns (and, once {@code rkey} is set, exposes). */
    synchronized void buffer(int role, ChunkBuffer b) {
        buffers[role] = b;
    }

    synchronized void exposed(int role, int rkey) {
        rkeys[role] = rkey;
        exposed[role] = true;
    }

    synchronized int rkey(int role) {
        return rkeys[role];
    }

    /** The address the peer uses with {@link #rkey} (the memory's own, as verbs' virtual addressing). */
    synchronized long address(int role) {
        return buffers[role].segment().address();
    }

    /** The transport header to send the call with (its chunk lists name our rkeys). */
    RpcRdmaHeader header() {
        return header;
    }

    /** What follows the header in the Send: the call or its reduced form; null for RDMA_NOMSG. */
    MemorySegment inline() {
        return inline;
    }

    /** Whether the call goes as RDMA_NOMSG (the whole call in the Position-Zero Read chunk). */
    boolean longCall() {
        return header.proc() == RpcRdma.RDMA_NOMSG;
    }

    boolean offersReplyChunk() {
        return header.hasReplyChunk();
    }

    boolean offersWriteChunk() {
        return !header.writeList().isEmpty();
    }

    /**
     * The reply arrived and was checked: withdraws every rkey, copies the {@code placed}
     * bytes of a DDP result into the caller's receptacle, and returns the reply's bytes from
     * the Reply chunk ({@code replyLength} bytes, handed to the caller with its memory) or,
     * when {@code replyLength} is negative, an empty marker. Null if the call was released
     * meanwhile (abandoned: nothing may be read any more). Throws what the copy into the
     * receptacle throws (its arena closed by the caller), with everything released.
     */
    synchronized ReceivedMessage finish(long replyLength, long placed) {
        if (released) {
            return null;
        }
        ChunkBuffer reply = replyLength >= 0 ? buffers[REPLY] : null;
        if (reply != null) {
            buffers[REPLY] = null;
        }
        invalidateAll(); // ORDER: the peer can no longer write before we read
        if (placed > 0) {
            try {
                MemorySegment.copy(buffers[RECEPTACLE].segment(), 0, receptacle, 0, placed);
            } catch (RuntimeException e) { // the caller closed the receptacle's arena meanwhile
                release();
                if (reply != null) {
                    reply.release();
                }
                throw e;
            }
        }
        release();
        long reported = offersWriteChunk() ? placed : -1;
        if (reply == null) {
            return new ReceivedMessage(MemorySegment.NULL, () -> { }, reported);
        }
        return new ReceivedMessage(reply.segment().asSlice(0, replyLength), reply::release, reported);
    }

    /** Withdraws every rkey and frees the memory not handed on; idempotent. */
    synchronized void release() {
        if (released) {
            return;
        }
        released = true;
        invalidateAll();
        for (int i = 0; i < buffers.length; i++) {
            if (buffers[i] != null) {
                buffers[i].release();
                buffers[i] = null;
            }
        }
    }

    private void invalidateAll() {
        for (int i = 0; i < rkeys.length; i++) {
            if (exposed[i]) {
                exposed[i] = false;
                try {
                    link.invalidate(rkeys[i]);
                } catch (RuntimeException e) {
                    // the link is gone, and with it every registration it made
                }
            }
        }
    }
}
