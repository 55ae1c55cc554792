package org.rpcrdma.transport;

import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.SegmentList;
import org.rpcrdma.transport.wire.WriteList;

/**
 * The chunks a received call offered for its reply (RFC 8166 §3.4.6, §3.4.7): its Write
 * list (receptacles for DDP results) and its Reply chunk, copied out of the header the
 * completion thread reuses, so the reply can be sent later from any thread. An inline call
 * with no chunks has none ({@link #NONE}) and costs nothing.
 */
final class CallChunks {
    static final CallChunks NONE = new CallChunks(new WriteList(0, 0), null);

    final WriteList writes;
    /** The Reply chunk as offered, or null. */
    final SegmentList reply;

    private CallChunks(WriteList writes, SegmentList reply) {
        this.writes = writes;
        this.reply = reply;
    }

    /** Copies what {@code h} offers for the reply; NONE if it offers nothing. */
    static CallChunks of(RpcRdmaHeader h) {
        WriteList wl = h.writeList();
        if (wl.isEmpty() && !h.hasReplyChunk()) {
            return NONE;
        }
        WriteList w = new WriteList(wl.chunkCount(), wl.segments().count());
        w.copyFrom(wl);
        SegmentList r = null;
        if (h.hasReplyChunk()) {
            r = new SegmentList(h.replyChunk().count());
            r.copyFrom(h.replyChunk());
        }
        return new CallChunks(w, r);
    }

    boolean isEmpty() {
        return writes.isEmpty() && reply == null;
    }

    /** Bytes the Reply chunk can take; 0 without one. */
    long replyCapacity() {
        return reply == null ? 0 : reply.totalLength();
    }

    /** Bytes write chunk {@code c} can take; 0 if there is no such chunk. */
    long writeCapacity(int c) {
        return c < 0 || c >= writes.chunkCount() ? 0 : writes.chunkLength(c);
    }
}
