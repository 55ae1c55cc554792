package org.rpcrdma.transport.wire;

import org.rpcrdma.xdr.Xdr;

/**
 * RPC-over-RDMA Version 1 constants (RFC 8166 §4.1, the XDR in its §4.1.2 and in
 * Appendix A of draft-ietf-nfsv4-rfc5666-implementation-experience). Sizes are in XDR
 * words, named after Linux's {@code include/linux/sunrpc/rpc_rdma.h}.
 */
public final class RpcRdma {
    private RpcRdma() {}

    /** The only version this implementation speaks (RFC 8166 §4.2.2). */
    public static final int RPCRDMA_VERSION = 1;

    /** rdma_proc: an RPC message follows the header inline (RFC 8166 §4.2.4). */
    public static final int RDMA_MSG = 0;
    /** rdma_proc: the RPC message is carried entirely in chunks (Long Call or Reply). */
    public static final int RDMA_NOMSG = 1;
    /** rdma_proc: padded message; accepted as RDMA_MSG, never sent (RFC 8166 §4.6.1). */
    public static final int RDMA_MSGP = 2;
    /** rdma_proc: Read-Read completion; recognised and ignored, never sent (§4.6.2). */
    public static final int RDMA_DONE = 3;
    /** rdma_proc: the responder could not process a Call (RFC 8166 §4.5). */
    public static final int RDMA_ERROR = 4;

    /** rdma_err: version not supported; the body carries vers_low and vers_high. */
    public static final int ERR_VERS = 1;
    /** rdma_err: the header or its chunks could not be parsed or used. */
    public static final int ERR_CHUNK = 2;

    /** xid, vers, credit, proc. */
    public static final int FIXED_MAXSZ = 4;
    /** handle, length, offset (HLOO). */
    public static final int SEGMENT_MAXSZ = 4;
    /** position + segment (PHLOO). */
    public static final int READSEG_MAXSZ = 1 + SEGMENT_MAXSZ;
    /** list discriminator + read segment: one Read list entry. */
    public static final int READCHUNK_MAXSZ = 1 + READSEG_MAXSZ;
    /** discriminator + segment count + one segment: the smallest Write list entry. */
    public static final int WRITECHUNK_MINSZ = 2 + SEGMENT_MAXSZ;
    /** Fixed header plus three empty chunk lists: an inline RDMA_MSG header. */
    public static final int HDRLEN_MIN = FIXED_MAXSZ + 3;
    /** Fixed header, rdma_err = ERR_CHUNK. */
    public static final int HDRLEN_ERR_CHUNK = FIXED_MAXSZ + 1;
    /** Fixed header, rdma_err = ERR_VERS, vers_low, vers_high. */
    public static final int HDRLEN_ERR_VERS = FIXED_MAXSZ + 3;

    /** Bytes in an inline RDMA_MSG header with empty lists (28). */
    public static final int INLINE_MSG_HEADER_BYTES = HDRLEN_MIN * Xdr.UNIT;

    /**
     * Default inline threshold in each direction when no CM private data says otherwise
     * (RFC 8166 §3.3.3, RFC 8797 §3.1).
     */
    public static final int DEFAULT_INLINE_THRESHOLD = 1024;

    /** ONC RPC msg_type: CALL (RFC 5531 §9). */
    public static final int RPC_CALL = 0;
    /** ONC RPC msg_type: REPLY (RFC 5531 §9). */
    public static final int RPC_REPLY = 1;

    /** Name of an rdma_proc value, for messages. */
    public static String procName(int proc) {
        return switch (proc) {
            case RDMA_MSG -> "RDMA_MSG";
            case RDMA_NOMSG -> "RDMA_NOMSG";
            case RDMA_MSGP -> "RDMA_MSGP";
            case RDMA_DONE -> "RDMA_DONE";
            case RDMA_ERROR -> "RDMA_ERROR";
            default -> "proc(" + Integer.toUnsignedString(proc) + ")";
        };
    }
}
