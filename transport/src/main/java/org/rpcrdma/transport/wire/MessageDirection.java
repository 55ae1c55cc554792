package org.rpcrdma.transport.wire;

import static org.rpcrdma.transport.wire.RpcRdma.*;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import org.rpcrdma.xdr.Xdr;

/**
 * The direction of a message that {@link RpcRdmaDecoder} refused, as far as its bytes tell
 * it. XIDs are per direction (RFC 8167 §2.4.1): a malformed call must not be matched
 * against our own calls of the same XID, nor a malformed reply be answered with RDMA_ERROR
 * as if it were a call. Most faults (a misaligned or descending position, an empty chunk,
 * too many segments, an XID mismatch) leave the XDR shape readable, so the shape of the
 * chunk lists is walked here without the decoder's semantic checks. Cold path: only for
 * messages that failed to decode.
 */
public final class MessageDirection {
    /** The bytes do not tell. */
    public static final int UNKNOWN = -1;

    private MessageDirection() {}

    /**
     * {@link RpcRdma#RPC_CALL}, {@link RpcRdma#RPC_REPLY} or {@link #UNKNOWN} for the
     * message in {@code [offset, offset + length)}: RDMA_MSG and RDMA_MSGP by the inline
     * RPC message's msg_type when its XID is rdma_xid; RDMA_NOMSG by its chunks (a read
     * segment at position zero carries a call, else a Reply chunk carries a reply: RFC 8166
     * §3.5.3); RDMA_ERROR is a reply (only a responder sends it, §4.5); an rdma_proc we do
     * not know, as RDMA_MSG (the one layout with an RPC message after the chunk lists: only
     * if one is there, with rdma_xid, does it tell). Another version's header, nothing.
     * Never reads outside the range.
     */
    public static int of(MemorySegment seg, long offset, int length) {
        Objects.checkFromIndexSize(offset, length, seg.byteSize());
        long end = offset + length;
        if (length < FIXED_MAXSZ * Xdr.UNIT || Xdr.getInt(seg, offset + 4) != RPCRDMA_VERSION) {
            return UNKNOWN; // another version's header is not ours to read
        }
        int xid = Xdr.getInt(seg, offset);
        int proc = Xdr.getInt(seg, offset + 12);
        long p = offset + FIXED_MAXSZ * Xdr.UNIT;
        switch (proc) {
            case RDMA_ERROR -> {
                return RPC_REPLY;
            }
            case RDMA_MSGP -> p += 8; // rdma_align, rdma_thresh
            default -> { } // RDMA_MSG, RDMA_NOMSG; an rdma_proc we do not know is read as RDMA_MSG
        }
        boolean positionZero = false;
        while (true) { // Read list
            if (end - p < 4) {
                return UNKNOWN;
            }
            int present = Xdr.getInt(seg, p);
            p += 4;
            if (present == 0) {
                break;
            }
            if (present != 1 || end - p < READSEG_MAXSZ * Xdr.UNIT) {
                return UNKNOWN;
            }
            positionZero |= Xdr.getInt(seg, p) == 0;
            p += READSEG_MAXSZ * Xdr.UNIT;
        }
        while (true) { // Write list
            if (end - p < 4) {
                return UNKNOWN;
            }
            int present = Xdr.getInt(seg, p);
            p += 4;
            if (present == 0) {
                break;
            }
            p = skipSegments(seg, p, end, present);
            if (p < 0) {
                return UNKNOWN;
            }
        }
        if (end - p < 4) {
            return UNKNOWN;
        }
        int replyChunk = Xdr.getInt(seg, p);
        p += 4;
        if (replyChunk != 0) {
            p = skipSegments(seg, p, end, replyChunk);
            if (p < 0) {
                return UNKNOWN;
            }
        }
        if (proc == RDMA_NOMSG) {
            return positionZero ? RPC_CALL : replyChunk != 0 ? RPC_REPLY : UNKNOWN;
        }
        if (end - p < 8 || Xdr.getInt(seg, p) != xid) {
            return UNKNOWN;
        }
        int type = Xdr.getInt(seg, p + 4);
        return type == RPC_CALL || type == RPC_REPLY ? type : UNKNOWN;
    }

    /** After a discriminator {@code present}: a segment count and its segments; -1 if not there. */
    private static long skipSegments(MemorySegment seg, long p, long end, int present) {
        if (present != 1 || end - p < 4) {
            return -1;
        }
        long n = Xdr.getUnsignedInt(seg, p);
        p += 4;
        if (n * (SEGMENT_MAXSZ * Xdr.UNIT) > end - p) {
            return -1;
        }
        return p + n * (SEGMENT_MAXSZ * Xdr.UNIT);
    }
}
