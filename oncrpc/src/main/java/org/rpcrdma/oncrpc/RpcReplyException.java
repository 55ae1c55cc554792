package org.rpcrdma.oncrpc;

import org.rpcrdma.transport.RpcRdmaException;

/**
 * The server answered, but not with an accepted SUCCESS (RFC 5531 §9): one subclass per
 * answer, so callers catch what they can act on. No results are ever decoded from such a
 * reply. Like the transport's exceptions it is an {@link RpcRdmaException}.
 */
public abstract sealed class RpcReplyException extends RpcRdmaException
        permits RpcReplyException.ProgUnavail, RpcReplyException.ProgMismatch, RpcReplyException.ProcUnavail,
                RpcReplyException.GarbageArgs, RpcReplyException.SystemErr, RpcReplyException.RpcMismatch,
                RpcReplyException.AuthError {
    private static final long serialVersionUID = 1L;
    private final int xid;

    RpcReplyException(int xid, String what) {
        super("call 0x" + Integer.toHexString(xid) + ": " + what);
        this.xid = xid;
    }

    /** The call's XID. */
    public int xid() {
        return xid;
    }

    /** MSG_ACCEPTED / PROG_UNAVAIL: the server does not export the program. */
    public static final class ProgUnavail extends RpcReplyException {
        private static final long serialVersionUID = 1L;

        ProgUnavail(int xid) {
            super(xid, "PROG_UNAVAIL (program not exported)");
        }
    }

    /** MSG_ACCEPTED / PROG_MISMATCH: the program is there, at versions low..high only. */
    public static final class ProgMismatch extends RpcReplyException {
        private static final long serialVersionUID = 1L;
        private final int low;
        private final int high;

        ProgMismatch(int xid, int low, int high) {
            super(xid, "PROG_MISMATCH (versions " + Integer.toUnsignedString(low) + ".."
                    + Integer.toUnsignedString(high) + ")");
            this.low = low;
            this.high = high;
        }

        /** Lowest version the server supports. */
        public int low() {
            return low;
        }

        /** Highest version the server supports. */
        public int high() {
            return high;
        }
    }

    /** MSG_ACCEPTED / PROC_UNAVAIL: no such procedure in that version. */
    public static final class ProcUnavail extends RpcReplyException {
        private static final long serialVersionUID = 1L;

        ProcUnavail(int xid) {
            super(xid, "PROC_UNAVAIL (no such procedure)");
        }
    }

    /** MSG_ACCEPTED / GARBAGE_ARGS: the server could not decode the arguments. */
    public static final class GarbageArgs extends RpcReplyException {
        private static final long serialVersionUID = 1L;

        GarbageArgs(int xid) {
            super(xid, "GARBAGE_ARGS (the server could not decode the arguments)");
        }
    }

    /** MSG_ACCEPTED / SYSTEM_ERR: the server failed (e.g. memory allocation). */
    public static final class SystemErr extends RpcReplyException {
        private static final long serialVersionUID = 1L;

        SystemErr(int xid) {
            super(xid, "SYSTEM_ERR");
        }
    }

    /** MSG_DENIED / RPC_MISMATCH: the server speaks RPC versions low..high only. */
    public static final class RpcMismatch extends RpcReplyException {
        private static final long serialVersionUID = 1L;
        private final int low;
        private final int high;

        RpcMismatch(int xid, int low, int high) {
            super(xid, "MSG_DENIED RPC_MISMATCH (RPC versions " + Integer.toUnsignedString(low) + ".."
                    + Integer.toUnsignedString(high) + ")");
            this.low = low;
            this.high = high;
        }

        /** Lowest RPC version the server supports. */
        public int low() {
            return low;
        }

        /** Highest RPC version the server supports. */
        public int high() {
            return high;
        }
    }

    /** MSG_DENIED / AUTH_ERROR: the server refused the credential or verifier. */
    public static final class AuthError extends RpcReplyException {
        private static final long serialVersionUID = 1L;
        private final int authStat;

        AuthError(int xid, int authStat) {
            super(xid, "MSG_DENIED AUTH_ERROR (auth_stat " + authStatName(authStat) + ")");
            this.authStat = authStat;
        }

        /** The auth_stat (RFC 5531 §9; {@code OncRpc.AUTH_BADCRED} and the rest). */
        public int authStat() {
            return authStat;
        }
    }

    static String authStatName(int s) {
        String[] names = {"AUTH_OK", "AUTH_BADCRED", "AUTH_REJECTEDCRED", "AUTH_BADVERF", "AUTH_REJECTEDVERF",
            "AUTH_TOOWEAK", "AUTH_INVALIDRESP", "AUTH_FAILED", "AUTH_KERB_GENERIC", "AUTH_TIMEEXPIRE",
            "AUTH_TKT_FILE", "AUTH_DECODE", "AUTH_NET_ADDR", "RPCSEC_GSS_CREDPROBLEM", "RPCSEC_GSS_CTXPROBLEM"};
        return s >= 0 && s < names.length ? names[s] : Integer.toUnsignedString(s);
    }
}
