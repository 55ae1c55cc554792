package org.rpcrdma.transport.wire;

import static org.rpcrdma.transport.wire.RpcRdma.*;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.xdr.Xdr;

/**
 * Encodes RPC-over-RDMA Version 1 transport headers (RFC 8166 §4) into a send buffer in
 * place. Nothing here allocates.
 *
 * <p>The list encoders are named after Linux's {@code rpc_rdma.c} and write the shapes
 * its comments draw (HLOO = handle, length, offset; P = position; N = segment count):
 * <pre>
 *  Read list:   1 - PHLOO - 1 - PHLOO - ... - 1 - PHLOO - 0
 *  Write list:  1 - N - HLOO - ... - HLOO - 1 - N - HLOO ... - 0
 *  Reply chunk: 1 - N - HLOO - ... - HLOO        (or 0 when absent)
 * </pre>
 * The piecewise encoders take an absolute offset, write, and return the offset after
 * what they wrote; they rely on the segment's own bounds check, so size the buffer with
 * {@link #encodedLength} first. {@link #encode} does that for you.
 */
public final class RpcRdmaEncoder {
    private RpcRdmaEncoder() {}

    /**
     * Writes the header of an inline RDMA_MSG with three empty chunk lists: the message
     * every short Call and Reply uses, and the only form Linux sends on the backchannel.
     *
     * @return bytes written, always {@link RpcRdma#INLINE_MSG_HEADER_BYTES} (28)
     */
    public static int encodeInlineMsg(MemorySegment seg, long offset, int xid, int credit) {
        // Pairs of XDR words as one big-endian 64-bit store (same bytes): 4 accesses, not 7.
        // Under C1, the guest's JIT, each access is a chain of calls; the header codec took
        // a third of an in-memory round trip's CPU (async-profiler).
        Xdr.putLong(seg, offset, (long) xid << 32 | RPCRDMA_VERSION);
        Xdr.putLong(seg, offset + 8, (long) credit << 32 | RDMA_MSG);
        Xdr.putLong(seg, offset + 16, 0L); // no Read list, no Write list
        Xdr.putInt(seg, offset + 24, 0); // no Reply chunk
        return INLINE_MSG_HEADER_BYTES;
    }

    /**
     * Writes RDMA_ERROR / ERR_VERS saying this peer supports version 1 only
     * (RFC 8166 §4.5.1: vers_low = vers_high = 1).
     *
     * @return bytes written (28)
     */
    public static int encodeErrVers(MemorySegment seg, long offset, int xid, int credit) {
        writeFixed(seg, offset, xid, credit, RDMA_ERROR);
        Xdr.putInt(seg, offset + 16, ERR_VERS);
        Xdr.putInt(seg, offset + 20, RPCRDMA_VERSION);
        Xdr.putInt(seg, offset + 24, RPCRDMA_VERSION);
        return HDRLEN_ERR_VERS * Xdr.UNIT;
    }

    /**
     * Writes RDMA_ERROR / ERR_CHUNK (RFC 8166 §4.5.2).
     *
     * @return bytes written (20)
     */
    public static int encodeErrChunk(MemorySegment seg, long offset, int xid, int credit) {
        writeFixed(seg, offset, xid, credit, RDMA_ERROR);
        Xdr.putInt(seg, offset + 16, ERR_CHUNK);
        return HDRLEN_ERR_CHUNK * Xdr.UNIT;
    }

    /**
     * Writes the RDMA_ERROR that answers a decode failure.
     *
     * @return bytes written
     * @throws IllegalArgumentException if the failure calls for dropping the connection
     *         (no RDMA_ERROR may be sent)
     */
    public static int encodeError(MemorySegment seg, long offset, RpcRdmaProtocolException e, int credit) {
        return switch (e.response()) {
            case ERR_VERS -> encodeErrVers(seg, offset, e.xid(), credit);
            case ERR_CHUNK -> encodeErrChunk(seg, offset, e.xid(), credit);
            case DROP_CONNECTION -> throw new IllegalArgumentException(
                    "no RDMA_ERROR answers " + e.violation());
        };
    }

    /** Bytes {@link #encode} will write for {@code h}. */
    public static int encodedLength(RpcRdmaHeader h) {
        int words = FIXED_MAXSZ;
        switch (h.proc()) {
            case RDMA_MSG, RDMA_NOMSG, RDMA_MSGP -> {
                if (h.proc() == RDMA_MSGP) {
                    words += 2;
                }
                words += h.readList().segmentCount() * READCHUNK_MAXSZ + 1;
                WriteList w = h.writeList();
                words += w.chunkCount() * 2 + w.segments().count() * SEGMENT_MAXSZ + 1;
                words += h.hasReplyChunk() ? 2 + h.replyChunk().count() * SEGMENT_MAXSZ : 1;
            }
            case RDMA_ERROR -> words += h.errorCode() == ERR_VERS ? 3 : 1;
            default -> { }
        }
        return words * Xdr.UNIT;
    }

    /**
     * Encodes {@code h} at {@code offset}, writing at most {@code limit} bytes, and records
     * the length in {@link RpcRdmaHeader#headerLength()}. RDMA_MSGP and RDMA_DONE are
     * never sent (RFC 8166 §4.6) and are refused.
     *
     * @return bytes written
     * @throws IllegalArgumentException if the header does not fit in {@code limit}, is
     *         RDMA_MSGP/RDMA_DONE or an unknown proc, or has an empty Reply chunk
     */
    public static int encode(RpcRdmaHeader h, MemorySegment seg, long offset, long limit) {
        switch (h.proc()) {
            case RDMA_MSG, RDMA_NOMSG, RDMA_ERROR -> { }
            default -> throw new IllegalArgumentException(procName(h.proc()) + " is never sent");
        }
        return encodeAnyProc(h, seg, offset, limit);
    }

    /** As {@link #encode}, but also writes RDMA_MSGP and RDMA_DONE (for building test input). */
    static int encodeAnyProc(RpcRdmaHeader h, MemorySegment seg, long offset, long limit) {
        int len = encodedLength(h);
        if (len > limit) {
            throw new IllegalArgumentException("header needs " + len + " bytes, limit " + limit);
        }
        java.util.Objects.checkFromIndexSize(offset, len, seg.byteSize());
        Xdr.putInt(seg, offset, h.xid());
        Xdr.putInt(seg, offset + 4, h.vers());
        Xdr.putInt(seg, offset + 8, h.credit());
        Xdr.putInt(seg, offset + 12, h.proc());
        long p = offset + 16;
        switch (h.proc()) {
            case RDMA_MSGP -> {
                Xdr.putInt(seg, p, h.align());
                Xdr.putInt(seg, p + 4, h.thresh());
                p = encodeChunkLists(seg, p + 8, h);
            }
            case RDMA_MSG, RDMA_NOMSG -> p = encodeChunkLists(seg, p, h);
            case RDMA_ERROR -> {
                Xdr.putInt(seg, p, h.errorCode());
                p += 4;
                if (h.errorCode() == ERR_VERS) {
                    Xdr.putInt(seg, p, h.versLow());
                    Xdr.putInt(seg, p + 4, h.versHigh());
                    p += 8;
                }
            }
            case RDMA_DONE -> { }
            default -> throw new IllegalArgumentException("unknown proc " + h.proc());
        }
        h.setHeaderLength((int) (p - offset));
        return (int) (p - offset);
    }

    private static long encodeChunkLists(MemorySegment seg, long p, RpcRdmaHeader h) {
        p = encodeReadList(seg, p, h.readList());
        p = encodeWriteList(seg, p, h.writeList());
        return encodeReplyChunk(seg, p, h.hasReplyChunk() ? h.replyChunk() : null);
    }

    private static void writeFixed(MemorySegment seg, long offset, int xid, int credit, int proc) {
        Xdr.putInt(seg, offset, xid);
        Xdr.putInt(seg, offset + 4, RPCRDMA_VERSION);
        Xdr.putInt(seg, offset + 8, credit);
        Xdr.putInt(seg, offset + 12, proc);
    }

    /** Writes one RDMA segment, HLOO (RFC 8166 §3.4.3). Returns the offset after it. */
    public static long encodeRdmaSegment(MemorySegment seg, long p, int handle, int length, long offset) {
        Xdr.putInt(seg, p, handle);
        Xdr.putInt(seg, p + 4, length);
        Xdr.putLong(seg, p + 8, offset);
        return p + SEGMENT_MAXSZ * Xdr.UNIT;
    }

    /**
     * Writes one Read list entry: the "present" discriminator, then PHLOO (as Linux's
     * {@code encode_read_segment}). Returns the offset after it.
     */
    public static long encodeReadSegment(MemorySegment seg, long p, int position, int handle, int length,
                                         long offset) {
        Xdr.putInt(seg, p, 1);
        Xdr.putInt(seg, p + 4, position);
        return encodeRdmaSegment(seg, p + 8, handle, length, offset);
    }

    /** Writes the Read list, including the terminating 0. Returns the offset after it. */
    public static long encodeReadList(MemorySegment seg, long p, ReadList list) {
        SegmentList s = list.segments();
        for (int i = 0; i < s.count(); i++) {
            p = encodeReadSegment(seg, p, (int) list.position(i), s.handle(i), s.rawLength(i), s.offset(i));
        }
        Xdr.putInt(seg, p, 0);
        return p + 4;
    }

    /** Writes the Write list, including the terminating 0. Returns the offset after it. */
    public static long encodeWriteList(MemorySegment seg, long p, WriteList list) {
        SegmentList s = list.segments();
        for (int c = 0; c < list.chunkCount(); c++) {
            int first = list.chunkFirstSegment(c);
            int n = list.chunkSegmentCount(c);
            Xdr.putInt(seg, p, 1);
            Xdr.putInt(seg, p + 4, n);
            p += 8;
            for (int i = first; i < first + n; i++) {
                p = encodeRdmaSegment(seg, p, s.handle(i), s.rawLength(i), s.offset(i));
            }
        }
        Xdr.putInt(seg, p, 0);
        return p + 4;
    }

    /**
     * Writes the Reply chunk, or a single 0 when {@code chunk} is null (absent). Returns the
     * offset after it.
     */
    public static long encodeReplyChunk(MemorySegment seg, long p, SegmentList chunk) {
        if (chunk == null) {
            Xdr.putInt(seg, p, 0);
            return p + 4;
        }
        if (chunk.count() == 0) {
            throw new IllegalArgumentException("reply chunk has no segments");
        }
        Xdr.putInt(seg, p, 1);
        Xdr.putInt(seg, p + 4, chunk.count());
        p += 8;
        for (int i = 0; i < chunk.count(); i++) {
            p = encodeRdmaSegment(seg, p, chunk.handle(i), chunk.rawLength(i), chunk.offset(i));
        }
        return p;
    }
}
