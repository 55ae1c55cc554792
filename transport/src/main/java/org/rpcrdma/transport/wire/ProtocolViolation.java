package org.rpcrdma.transport.wire;

/**
 * Every way a received RPC-over-RDMA message can be malformed, each with the answer the
 * receiver gives (RFC 8166 §4.5). One value per check in {@link RpcRdmaDecoder}, so a
 * test or a counter can name exactly what was wrong.
 */
public enum ProtocolViolation {
    /** Fewer than 8 bytes: no rdma_vers, so no version under which to answer. */
    HEADER_TRUNCATED(ErrorResponse.DROP_CONNECTION),
    /**
     * Version 1, yet fewer than 16 bytes (no rdma_credit or rdma_proc): an XDR error under
     * a recognised version (RFC 8166 §4.5.2).
     */
    FIXED_HEADER_TRUNCATED(ErrorResponse.ERR_CHUNK),
    /** rdma_vers is not 1 (RFC 8166 §4.2.2, §4.5.1). */
    BAD_VERSION(ErrorResponse.ERR_VERS),
    /** rdma_proc is not one of the five defined values (§4.2.4, §4.5.2). */
    BAD_PROC(ErrorResponse.ERR_CHUNK),
    /** RDMA_MSGP ends before rdma_align and rdma_thresh. */
    MSGP_TRUNCATED(ErrorResponse.ERR_CHUNK),
    /** An optional-data discriminator is neither 0 nor 1 (RFC 4506 §4.19). */
    BAD_DISCRIMINATOR(ErrorResponse.ERR_CHUNK),
    /** The Read list runs past the end of the received message. */
    READ_LIST_TRUNCATED(ErrorResponse.ERR_CHUNK),
    /** The Write list, or a segment count in it, runs past the end of the message. */
    WRITE_LIST_TRUNCATED(ErrorResponse.ERR_CHUNK),
    /** The Reply chunk, or its segment count, runs past the end of the message. */
    REPLY_CHUNK_TRUNCATED(ErrorResponse.ERR_CHUNK),
    /** More segments than a header within the inline threshold can hold. */
    TOO_MANY_SEGMENTS(ErrorResponse.ERR_CHUNK),
    /** More Write chunks than a header within the inline threshold can hold. */
    TOO_MANY_CHUNKS(ErrorResponse.ERR_CHUNK),
    /** A Write chunk or the Reply chunk has no segments (RFC 8166 §3.4.4). */
    EMPTY_CHUNK(ErrorResponse.ERR_CHUNK),
    /** A read segment's position is not a multiple of 4 (RFC 8166 §3.4.5). */
    MISALIGNED_POSITION(ErrorResponse.ERR_CHUNK),
    /** Read segment positions go down (RFC 8166 §3.4.5: sorted by position). */
    DESCENDING_POSITION(ErrorResponse.ERR_CHUNK),
    /** A read chunk starts inside the previous chunk's data. */
    OVERLAPPING_READ_CHUNKS(ErrorResponse.ERR_CHUNK),
    /** A read chunk's position lies beyond the message it is to be inserted into. */
    POSITION_BEYOND_MESSAGE(ErrorResponse.ERR_CHUNK),
    /** A Position-Zero Read chunk in an RDMA_MSG (RFC 8166 §3.5.3: only with RDMA_NOMSG). */
    POSITION_ZERO_IN_MSG(ErrorResponse.ERR_CHUNK),
    /** RDMA_NOMSG with neither a Position-Zero Read chunk nor a Reply chunk (§4.5.2). */
    NOMSG_WITHOUT_CHUNK(ErrorResponse.ERR_CHUNK),
    /** RDMA_MSG without the 8 bytes of RPC xid and msg_type after the header. */
    RPC_MESSAGE_TRUNCATED(ErrorResponse.ERR_CHUNK),
    /** The inline RPC message's XID differs from rdma_xid (RFC 8166 §4.2.1, §4.5.2). */
    XID_MISMATCH(ErrorResponse.ERR_CHUNK),
    /** The inline RPC message's msg_type is neither CALL nor REPLY (RFC 5531 §9). */
    BAD_MSG_TYPE(ErrorResponse.ERR_CHUNK),
    /** A Reply carries a Read list (RFC 8166 §4.3.1: Read chunks belong to Calls). */
    READ_LIST_IN_REPLY(ErrorResponse.ERR_CHUNK),
    /** An RDMA_MSG Reply carries a used Reply chunk (RFC 8166 §4.3.3: that is RDMA_NOMSG). */
    REPLY_CHUNK_IN_MSG_REPLY(ErrorResponse.ERR_CHUNK),
    /** RDMA_ERROR ends before its body; never answer an error with an error. */
    ERROR_TRUNCATED(ErrorResponse.ERR_CHUNK),
    /** RDMA_ERROR with an rdma_err other than ERR_VERS or ERR_CHUNK. */
    BAD_ERROR_CODE(ErrorResponse.ERR_CHUNK);

    private final ErrorResponse response;

    ProtocolViolation(ErrorResponse response) {
        this.response = response;
    }

    /** The answer a responder gives to a Call with this fault. */
    public ErrorResponse response() {
        return response;
    }
}
