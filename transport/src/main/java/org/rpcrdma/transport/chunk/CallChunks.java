package org.rpcrdma.transport.chunk;

import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.SegmentList;
import org.rpcrdma.transport.wire.WriteList;

/**
 * The chunks a received call offered for its reply (RFC 8166 §3.4.6, §3.4.7): its Write
 * list (receptacles for DDP results) and its Reply chunk, copied out of the header the
 * completion thread reuses, so the reply can be sent later from any thread; and the rkey
 * the reply's Send may invalidate (RFC 8797 §7). An inline call with no chunks has none
 * ({@link #NONE}) and costs nothing.
 */
public final class CallChunks {
    private static final WriteList NO_WRITES = new WriteList(0, 0);
    public static final CallChunks NONE = new CallChunks(NO_WRITES, null, 0);

    public final WriteList writes;
    /** The Reply chunk as offered, or null. */
    final SegmentList reply;
    /** The rkey the reply's Send invalidates (Send with Invalidate), or 0 for a plain Send. */
    public final int invalidateRkey;

    private CallChunks(WriteList writes, SegmentList reply, int invalidateRkey) {
        this.writes = writes;
        this.reply = reply;
        this.invalidateRkey = invalidateRkey;
    }

    /**
     * Copies what {@code h} offers for the reply; NONE if it offers nothing and there is
     * no rkey to invalidate. With {@code remoteInvalidation} (the peer set R, RFC 8797
     * §4.1) the reply invalidates the call's rkey when all its segments, over every chunk,
     * name exactly one (as Linux's {@code svc_rdma_get_inv_rkey}): the requester then needs
     * no LOCAL_INV. Several rkeys: a plain Send, the requester withdraws them itself.
     */
    public static CallChunks of(RpcRdmaHeader h, boolean remoteInvalidation) {
        int inv = remoteInvalidation ? singleRkey(h) : 0;
        WriteList wl = h.writeList();
        if (wl.isEmpty() && !h.hasReplyChunk()) {
            return inv == 0 ? NONE : new CallChunks(NO_WRITES, null, inv);
        }
        WriteList w = NO_WRITES; // never written to: a call with a Reply chunk alone copies no Write list
        if (!wl.isEmpty()) {
            w = new WriteList(wl.chunkCount(), wl.segments().count());
            w.copyFrom(wl);
        }
        SegmentList r = null;
        if (h.hasReplyChunk()) {
            r = new SegmentList(h.replyChunk().count());
            r.copyFrom(h.replyChunk());
        }
        return new CallChunks(w, r, inv);
    }

    /** The one rkey every segment of {@code h}'s chunks names, or 0 (none, or more than one). */
    static int singleRkey(RpcRdmaHeader h) {
        int[] key = {0};
        boolean one = same(h.readList().segments(), key) && same(h.writeList().segments(), key)
                && (!h.hasReplyChunk() || same(h.replyChunk(), key));
        return one ? key[0] : 0;
    }

    private static boolean same(SegmentList segs, int[] key) {
        for (int i = 0; i < segs.count(); i++) {
            int k = segs.handle(i);
            if (key[0] == 0) {
                key[0] = k;
            } else if (k != key[0]) {
                return false;
            }
        }
        return true;
    }

    public boolean isEmpty() {
        return writes.isEmpty() && reply == null;
    }

    /** Bytes the Reply chunk can take; 0 without one. */
    public long replyCapacity() {
        return reply == null ? 0 : reply.totalLength();
    }

    /** Bytes write chunk {@code c} can take; 0 if there is no such chunk. */
    public long writeCapacity(int c) {
        return c < 0 || c >= writes.chunkCount() ? 0 : writes.chunkLength(c);
    }
}
