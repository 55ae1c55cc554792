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
     * §4.1) the reply invalidates one rkey of the call, the first its chunks name: R
     * promises every rkey the peer exposes may be, and §4.1 asks only that it be one of this
     * XID's. With one rkey the requester then needs no LOCAL_INV; with several (a call
     * exposed in place from registered memory beside its Reply chunk) one fewer. Linux's
     * {@code svc_rdma_get_inv_rkey} invalidates only a sole rkey; its client, as ours,
     * takes the invalidation of any of its keys ({@code frwr_reminv}).
     */
    public static CallChunks of(RpcRdmaHeader h, boolean remoteInvalidation) {
        int inv = remoteInvalidation ? firstRkey(h) : 0;
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

    /** The first rkey {@code h}'s chunks name (Read list, Write list, Reply chunk), or 0 if none. */
    static int firstRkey(RpcRdmaHeader h) {
        int k = first(h.readList().segments());
        if (k == 0) {
            k = first(h.writeList().segments());
        }
        if (k == 0 && h.hasReplyChunk()) {
            k = first(h.replyChunk());
        }
        return k;
    }

    private static int first(SegmentList segs) {
        for (int i = 0; i < segs.count(); i++) {
            int k = segs.handle(i);
            if (k != 0) {
                return k;
            }
        }
        return 0;
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
