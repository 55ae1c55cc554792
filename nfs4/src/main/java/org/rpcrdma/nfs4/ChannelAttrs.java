package org.rpcrdma.nfs4;

import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * channel_attrs4 (RFC 5662), one channel's limits as CREATE_SESSION negotiates them
 * (RFC 8881 §18.36.3): {@code headerpadsize, maxrequestsize, maxresponsesize,
 * maxresponsesize_cached, maxoperations, maxrequests} and {@code ca_rdma_ird<1>}
 * ({@code rdmaIrd} -1 when absent).
 */
public record ChannelAttrs(int headerPadSize, int maxRequestSize, int maxResponseSize, int maxResponseSizeCached,
        int maxOperations, int maxRequests, int rdmaIrd) {

    /** Writes this channel_attrs4. */
    public void encode(XdrWriter w) {
        w.writeInt(headerPadSize).writeInt(maxRequestSize).writeInt(maxResponseSize)
                .writeInt(maxResponseSizeCached).writeInt(maxOperations).writeInt(maxRequests);
        if (rdmaIrd < 0) {
            w.writeInt(0);
        } else {
            w.writeInt(1).writeInt(rdmaIrd);
        }
    }

    /** Reads a channel_attrs4 (ca_rdma_ird at most one entry). */
    public static ChannelAttrs decode(XdrReader r) throws XdrException {
        int pad = r.readInt();
        int req = r.readInt();
        int resp = r.readInt();
        int cached = r.readInt();
        int ops = r.readInt();
        int reqs = r.readInt();
        int n = r.readArrayLength(1, 4);
        return new ChannelAttrs(pad, req, resp, cached, ops, reqs, n == 0 ? -1 : r.readInt());
    }
}
