package org.rpcrdma.transport.wire;

/**
 * A received RPC-over-RDMA message is malformed. The subtype says how to answer
 * ({@link ErrorResponse}); {@link #violation()} says exactly what was wrong, and
 * {@link #xid()} is the rdma_xid to answer with when {@link #hasXid()}.
 *
 * <p>Stack-trace-free: a peer must not be able to make error handling expensive.
 * Checked, so the receive path can't forget to answer.
 */
public abstract sealed class RpcRdmaProtocolException extends Exception
        permits RpcRdmaProtocolException.VersionMismatch,
                RpcRdmaProtocolException.ChunkError,
                RpcRdmaProtocolException.Fatal {
    private static final long serialVersionUID = 1L;

    private final ProtocolViolation violation;
    private final boolean hasXid;
    private final int xid;

    private RpcRdmaProtocolException(ProtocolViolation violation, boolean hasXid, int xid, String detail) {
        super(violation + ": " + detail, null, false, false);
        this.violation = violation;
        this.hasXid = hasXid;
        this.xid = xid;
    }

    /** Creates the subtype that matches {@code violation.response()}. */
    public static RpcRdmaProtocolException of(ProtocolViolation violation, boolean hasXid, int xid,
                                              String detail) {
        return switch (violation.response()) {
            case ERR_VERS -> new VersionMismatch(violation, hasXid, xid, detail);
            case ERR_CHUNK -> new ChunkError(violation, hasXid, xid, detail);
            case DROP_CONNECTION -> new Fatal(violation, hasXid, xid, detail);
        };
    }

    /** Exactly what was wrong. */
    public ProtocolViolation violation() {
        return violation;
    }

    /** How a responder answers (RFC 8166 §4.5). */
    public ErrorResponse response() {
        return violation.response();
    }

    /** Whether the message was long enough to carry an rdma_xid. */
    public boolean hasXid() {
        return hasXid;
    }

    /** The message's rdma_xid, meaningful only if {@link #hasXid()}. */
    public int xid() {
        return xid;
    }

    /** rdma_vers was not 1: answer RDMA_ERROR / ERR_VERS (RFC 8166 §4.5.1). */
    public static final class VersionMismatch extends RpcRdmaProtocolException {
        private static final long serialVersionUID = 1L;

        private VersionMismatch(ProtocolViolation v, boolean hasXid, int xid, String detail) {
            super(v, hasXid, xid, detail);
        }
    }

    /** Header or chunks unusable: answer RDMA_ERROR / ERR_CHUNK (RFC 8166 §4.5.2). */
    public static final class ChunkError extends RpcRdmaProtocolException {
        private static final long serialVersionUID = 1L;

        private ChunkError(ProtocolViolation v, boolean hasXid, int xid, String detail) {
            super(v, hasXid, xid, detail);
        }
    }

    /** No answer is possible or allowed: drop the message and the connection. */
    public static final class Fatal extends RpcRdmaProtocolException {
        private static final long serialVersionUID = 1L;

        private Fatal(ProtocolViolation v, boolean hasXid, int xid, String detail) {
            super(v, hasXid, xid, detail);
        }
    }
}
