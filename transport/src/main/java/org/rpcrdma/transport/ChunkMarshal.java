package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.core.ChunkBuffer;
import org.rpcrdma.transport.core.Link;
import org.rpcrdma.transport.wire.OncRpc;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.SegmentList;
import org.rpcrdma.transport.wire.Xdr;

/**
 * How a call of ours uses chunks (≈ Linux {@code rpcrdma_marshal_req} and the chunk half of
 * {@code rpcrdma_reply_handler}):
 * <ul>
 * <li>a call larger than the requester→responder inline threshold goes as RDMA_NOMSG, the
 *     whole call in a Position-Zero Read chunk the responder pulls (RFC 8166 §3.5.3);</li>
 * <li>a Reply chunk is offered when the largest reply the caller allows does not fit the
 *     responder→requester threshold (§3.5.4);</li>
 * <li>what comes back is checked against what we offered: a Reply chunk claiming more
 *     bytes or other segments than offered fails the call, and nothing is read beyond what
 *     was written (the bug libevpl shipped).</li>
 * </ul>
 * Each chunk is one segment under an rkey made for this call ({@link Link#expose}).
 */
final class ChunkMarshal {
    private ChunkMarshal() {}

    /** Whether {@code c} needs chunks under these thresholds. */
    static boolean needsChunks(OutgoingCall c, int sendInline, int receiveInline) {
        return !Marshal.fitsInline(c.message().byteSize(), sendInline) || needsReplyChunk(c, receiveInline);
    }

    private static boolean needsReplyChunk(OutgoingCall c, int receiveInline) {
        return c.maxReplyBytes() > 0 && !Marshal.fitsInline(c.maxReplyBytes(), receiveInline);
    }

    /**
     * Exposes what {@code c} needs on {@code link} and builds its header (rdma_credit =
     * {@code credit}). The caller releases the result however the call ends.
     */
    static CallExposure prepare(Link link, OutgoingCall c, int sendInline, int receiveInline, int credit) {
        MemorySegment msg = c.message();
        long length = msg.byteSize();
        boolean longCall = !Marshal.fitsInline(length, sendInline);
        long replyCapacity = needsReplyChunk(c, receiveInline) ? c.maxReplyBytes() : 0;
        RpcRdmaHeader h = new RpcRdmaHeader(1, 0, 0, 1);
        h.clear().xid(c.xid).credit(credit).proc(longCall ? RpcRdma.RDMA_NOMSG : RpcRdma.RDMA_MSG);
        ChunkBuffer callBuf = null;
        ChunkBuffer replyBuf = null;
        int callRkey = 0;
        int replyRkey = 0;
        boolean ok = false;
        try {
            if (longCall) {
                callBuf = link.allocateChunk(length);
                MemorySegment.copy(msg, 0, callBuf.segment(), 0, length);
                callRkey = link.expose(callBuf, 0, length, false);
                h.readList().add(0, callRkey, length, callBuf.segment().address());
            }
            if (replyCapacity > 0) {
                replyBuf = link.allocateChunk(replyCapacity);
                replyRkey = link.expose(replyBuf, 0, replyCapacity, true);
                h.hasReplyChunk(true).replyChunk().add(replyRkey, replyCapacity, replyBuf.segment().address());
            }
            if (RpcRdmaEncoder.encodedLength(h) + (longCall ? 0 : length) > sendInline) {
                throw new RpcRdmaException("call of " + length + " bytes with its chunk lists does not fit the send"
                        + " inline threshold of " + sendInline);
            }
            ok = true;
        } finally {
            if (!ok) {
                new CallExposure(link, h, callBuf, callRkey, replyBuf, replyRkey, replyCapacity).release();
            }
        }
        return new CallExposure(link, h, callBuf, callRkey, replyBuf, replyRkey, replyCapacity);
    }

    /**
     * Checks an RDMA_NOMSG reply's Reply chunk against what {@code x} offered and returns
     * the reply's length, or throws naming what is wrong.
     */
    static long replyChunkLength(CallExposure x, RpcRdmaHeader h) {
        if (!x.offersReplyChunk()) {
            throw new IllegalStateException("the reply came through a Reply chunk this call never offered");
        }
        if (!h.writeList().isEmpty() || !h.readList().isEmpty()) {
            throw new IllegalStateException("the reply returns chunks this call never offered");
        }
        SegmentList offered = x.header().replyChunk();
        SegmentList got = h.replyChunk();
        if (got.count() != offered.count()) {
            throw new IllegalStateException("the reply returns a Reply chunk of " + got.count()
                    + " segments; we offered " + offered.count());
        }
        long total = 0;
        for (int i = 0; i < got.count(); i++) {
            if (got.handle(i) != offered.handle(i) || got.offset(i) != offered.offset(i)) {
                throw new IllegalStateException("Reply chunk segment " + i + " is not the one we offered");
            }
            if (got.length(i) > offered.length(i)) {
                throw new IllegalStateException("Reply chunk segment " + i + " claims " + got.length(i)
                        + " bytes; we offered " + offered.length(i));
            }
            total += got.length(i);
        }
        return total;
    }

    /** Whether {@code m} is an RPC REPLY to {@code xid} (at least its first two words). */
    static boolean isReplyTo(MemorySegment m, int xid) {
        return m.byteSize() >= 8 && Xdr.getInt(m, 0) == xid && Xdr.getInt(m, 4) == OncRpc.REPLY;
    }
}
