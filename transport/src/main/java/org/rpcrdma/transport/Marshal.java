package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * How an RPC message travels (≈ Linux {@code rpcrdma_marshal_req} and the reply half of
 * {@code svc_rdma_sendto}): the choice against the negotiated inline thresholds, and the
 * encoding into a send buffer. A message with no chunks goes inline as RDMA_MSG with empty
 * chunk lists, copied behind the header into one SGE; a message with chunks has its header
 * built by {@link ReplyWriter} or {@link ChunkMarshal} and encoded by {@link #withHeader}.
 */
final class Marshal {
    /** The transport header of an inline RDMA_MSG with three empty chunk lists (RFC 8166 §4.2). */
    static final int INLINE_HEADER = RpcRdma.INLINE_MSG_HEADER_BYTES;

    private Marshal() {}

    /** Whether an RPC message of {@code length} bytes fits inline under {@code threshold} (header included, RFC 8166 §3.3.2). */
    static boolean fitsInline(long length, int threshold) {
        return INLINE_HEADER + length <= threshold;
    }

    /** The largest RPC message that goes inline under {@code threshold}. */
    static int inlineLimit(int threshold) {
        return threshold - INLINE_HEADER;
    }

    /** Encodes an RDMA_MSG header and copies {@code rpc} behind it; returns the Send length. */
    static int inline(MemorySegment buf, int xid, int credit, MemorySegment rpc) {
        int h = RpcRdmaEncoder.encodeInlineMsg(buf, 0, xid, credit);
        MemorySegment.copy(rpc, 0, buf, h, rpc.byteSize());
        return h + (int) rpc.byteSize();
    }

    /**
     * Encodes {@code h} (chunk lists and all) and copies {@code rpc} behind it, or nothing
     * when {@code rpc} is null (RDMA_NOMSG); returns the Send length.
     */
    static int withHeader(MemorySegment buf, RpcRdmaHeader h, MemorySegment rpc) {
        int n = RpcRdmaEncoder.encode(h, buf, 0, buf.byteSize());
        if (rpc != null) {
            MemorySegment.copy(rpc, 0, buf, n, rpc.byteSize());
            n += (int) rpc.byteSize();
        }
        return n;
    }

    /** Encodes RDMA_ERROR; returns the Send length. */
    static int error(MemorySegment buf, int xid, int credit, int error) {
        return error == RpcRdma.ERR_VERS ? RpcRdmaEncoder.encodeErrVers(buf, 0, xid, credit)
                : RpcRdmaEncoder.encodeErrChunk(buf, 0, xid, credit);
    }
}
