package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.chunk.ChunkMarshal;
import org.rpcrdma.transport.chunk.DdpLayout;
import org.rpcrdma.transport.chunk.ReplyWriter;
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
public final class Marshal {
    /** The transport header of an inline RDMA_MSG with three empty chunk lists (RFC 8166 §4.2). */
    public static final int INLINE_HEADER = RpcRdma.INLINE_MSG_HEADER_BYTES;

    private Marshal() {}

    /** Whether an RPC message of {@code length} bytes fits inline under {@code threshold} (header included, RFC 8166 §3.3.2). */
    public static boolean fitsInline(long length, int threshold) {
        return INLINE_HEADER + length <= threshold;
    }

    /** The largest RPC message that goes inline under {@code threshold}. */
    public static int inlineLimit(int threshold) {
        return threshold - INLINE_HEADER;
    }

    /**
     * Encodes the RDMA_MSG header of send context {@code slot} ({@link InlineHeaders}: its XID
     * alone when the buffer holds the rest already) and copies {@code rpc} behind it; returns
     * the Send length.
     */
    static int inline(InlineHeaders headers, int slot, MemorySegment buf, int xid, int credit, MemorySegment rpc) {
        int h = headers.encode(slot, buf, xid, credit);
        MemorySegment.copy(rpc, 0, buf, h, rpc.byteSize());
        return h + (int) rpc.byteSize();
    }

    /**
     * Encodes {@code h} (chunk lists and all) and copies {@code rpc} behind it, or nothing
     * when {@code rpc} is null (RDMA_NOMSG); returns the Send length.
     */
    static int withHeader(MemorySegment buf, RpcRdmaHeader h, MemorySegment rpc) {
        return withHeader(buf, h, rpc, null);
    }

    /**
     * As {@link #withHeader(MemorySegment, RpcRdmaHeader, MemorySegment)}, with
     * {@code gathered}'s data (a DDP argument of its own, small enough to go inline) and
     * its pad copied in at its position: the one copy of it, straight into the send buffer.
     */
    static int withHeader(MemorySegment buf, RpcRdmaHeader h, MemorySegment rpc, DdpArgument gathered) {
        int n = RpcRdmaEncoder.encode(h, buf, 0, buf.byteSize());
        if (rpc != null) {
            n += (int) (gathered == null ? copy(rpc, buf, n) : DdpLayout.assemble(gathered, rpc, buf, n));
        }
        return n;
    }

    private static long copy(MemorySegment rpc, MemorySegment buf, int at) {
        MemorySegment.copy(rpc, 0, buf, at, rpc.byteSize());
        return rpc.byteSize();
    }

    /** The one heap-copy idiom of the transport: bytes that must outlive the caller's segment. */
    static MemorySegment heapCopy(MemorySegment m) {
        return MemorySegment.ofArray(m.toArray(ValueLayout.JAVA_BYTE));
    }

    /** A heap copy of the RPC message {@code rpc} with {@code gathered}'s data put in (null: of {@code rpc} alone). */
    static MemorySegment heapCopy(MemorySegment rpc, DdpArgument gathered) {
        if (gathered == null) {
            return heapCopy(rpc);
        }
        MemorySegment m = MemorySegment.ofArray(new byte[Math.toIntExact(DdpLayout.callLength(gathered, rpc))]);
        DdpLayout.assemble(gathered, rpc, m, 0);
        return m;
    }

    /** Encodes RDMA_ERROR; returns the Send length. */
    static int error(MemorySegment buf, int xid, int credit, int error) {
        return error == RpcRdma.ERR_VERS ? RpcRdmaEncoder.encodeErrVers(buf, 0, xid, credit)
                : RpcRdmaEncoder.encodeErrChunk(buf, 0, xid, credit);
    }
}
