package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.xdr.Xdr;

/**
 * What each send context's buffer still holds of the inline RDMA_MSG header its last Send
 * carried (RFC 8166 §4.2: rdma_xid, rdma_vers, rdma_credit, rdma_proc, three empty chunk
 * lists). Of those 28 bytes only the XID changes from one inline message to the next
 * (a side's rdma_credit is its configured grant or request, the same call after call), so
 * a context whose last Send was an inline RDMA_MSG with the same credit gets its XID
 * written and nothing else: one segment store instead of four, each a chain of checks
 * under C1. Any other use of a buffer (a header with chunks, RDMA_ERROR, a raw write)
 * forgets it.
 *
 * <p>Guarded by the owning {@link SendQueue}'s lock, as the buffers are.
 */
final class InlineHeaders {
    /** No inline RDMA_MSG header known in that buffer. */
    private static final long NONE = -1;
    /** Per send context: the rdma_credit (as unsigned) of the inline header its buffer holds, or NONE. */
    private final long[] credit;

    InlineHeaders(int contexts) {
        credit = new long[contexts];
        Arrays.fill(credit, NONE);
    }

    /** Encodes the inline RDMA_MSG header of {@code xid} and {@code rdmaCredit} at the start of context {@code slot}'s {@code buf}. */
    int encode(int slot, MemorySegment buf, int xid, int rdmaCredit) {
        long c = Integer.toUnsignedLong(rdmaCredit);
        if (credit[slot] == c) {
            Xdr.putInt(buf, 0, xid); // the other 24 bytes are as the last Send from this buffer left them
            return Marshal.INLINE_HEADER;
        }
        int n = RpcRdmaEncoder.encodeInlineMsg(buf, 0, xid, rdmaCredit);
        credit[slot] = c;
        return n;
    }

    /** Context {@code slot}'s buffer is (or may be) written with something else. */
    void forget(int slot) {
        credit[slot] = NONE;
    }
}
