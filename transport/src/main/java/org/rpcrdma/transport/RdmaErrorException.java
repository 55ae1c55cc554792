package org.rpcrdma.transport;

import org.rpcrdma.transport.wire.RpcRdma;

/** The responder answered a call with RDMA_ERROR (RFC 8166 §4.5). */
public final class RdmaErrorException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;
    /** rdma_err ERR_VERS: the responder does not support the call's RPC-over-RDMA version (RFC 8166 §4.5). */
    public static final int ERR_VERS = RpcRdma.ERR_VERS;
    /** rdma_err ERR_CHUNK: the responder could not process the call's chunk lists (RFC 8166 §4.5). */
    public static final int ERR_CHUNK = RpcRdma.ERR_CHUNK;
    private final int errorCode;

    public RdmaErrorException(int xid, int errorCode, int versLow, int versHigh) {
        super(describe(xid, errorCode, versLow, versHigh));
        this.errorCode = errorCode;
    }

    private static String describe(int xid, int code, int low, int high) {
        String x = "call xid 0x" + Integer.toHexString(xid) + " answered with RDMA_ERROR ";
        return switch (code) {
            case ERR_VERS -> x + "ERR_VERS (peer supports versions " + low + ".." + high + ")";
            case ERR_CHUNK -> x + "ERR_CHUNK (peer could not process the chunk lists)";
            default -> x + "code " + code;
        };
    }

    private RdmaErrorException(String message, int errorCode, RdmaErrorException cause) {
        super(message, cause);
        this.errorCode = errorCode;
    }

    /**
     * The same error with what the caller can change added to its message (the responder
     * does not say why, RFC 8166 §4.5): an upper layer that knows what its call offered
     * names the option; the original is the cause.
     */
    public RdmaErrorException explained(String advice) {
        return new RdmaErrorException(getMessage() + "; " + advice, errorCode, this);
    }

    /** {@link #ERR_VERS} or {@link #ERR_CHUNK}. */
    public int errorCode() {
        return errorCode;
    }
}
