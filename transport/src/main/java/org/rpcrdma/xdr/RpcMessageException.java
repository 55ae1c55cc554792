package org.rpcrdma.xdr;

/**
 * An ONC RPC message header (RFC 5531) can't be decoded or is not acceptable.
 * {@link #reason()} says why; {@link #xid()} is valid when {@link #hasXid()}, so a
 * server can still answer (e.g. MSG_DENIED / RPC_MISMATCH for a wrong rpcvers).
 * Stack-trace-free like every decode error here.
 */
public final class RpcMessageException extends XdrException {
    private static final long serialVersionUID = 1L;

    /** What was wrong with the RPC header. */
    public enum Reason {
        /** The header ends early or an opaque is longer than its limit. */
        MALFORMED,
        /** msg_type is neither CALL nor REPLY, or not the one expected. */
        BAD_MSG_TYPE,
        /** rpcvers is not 2: answer MSG_DENIED / RPC_MISMATCH (RFC 5531 §9). */
        RPC_VERSION_MISMATCH,
        /** reply_stat is neither MSG_ACCEPTED nor MSG_DENIED. */
        BAD_REPLY_STAT,
        /** accept_stat is not one of the six defined values. */
        BAD_ACCEPT_STAT,
        /** reject_stat is neither RPC_MISMATCH nor AUTH_ERROR. */
        BAD_REJECT_STAT,
        /** An AUTH_SYS credential body is malformed (RFC 5531 Appendix A). */
        BAD_AUTH_SYS,
        /**
         * A Call's credential can't be decoded (ends early, or a body over 400 bytes):
         * answer MSG_DENIED / AUTH_ERROR / AUTH_BADCRED (RFC 5531 §9), with the XID.
         */
        BAD_CREDENTIAL,
        /** A Call's verifier can't be decoded: answer AUTH_ERROR / AUTH_BADVERF (RFC 5531 §9). */
        BAD_VERIFIER
    }

    private final Reason reason;
    private final boolean hasXid;
    private final int xid;

    /** Creates an error with its reason and, if known, the message's XID. */
    public RpcMessageException(Reason reason, boolean hasXid, int xid, String detail) {
        super(reason + ": " + detail);
        this.reason = reason;
        this.hasXid = hasXid;
        this.xid = xid;
    }

    /** Why the header was rejected. */
    public Reason reason() {
        return reason;
    }

    /** Whether the XID was read. */
    public boolean hasXid() {
        return hasXid;
    }

    /** The message's XID, valid if {@link #hasXid()}. */
    public int xid() {
        return xid;
    }
}
