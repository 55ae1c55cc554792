package org.rpcrdma.transport.rpc;

import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.wire.OncRpc;

/** The server answered, but not with an accepted SUCCESS reply (RFC 5531 §9). */
public final class RpcReplyException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;
    private final int replyStat;
    private final int stat;

    public RpcReplyException(int xid, int replyStat, int stat, int low, int high) {
        super("xid 0x" + Integer.toHexString(xid) + ": " + describe(replyStat, stat, low, high));
        this.replyStat = replyStat;
        this.stat = stat;
    }

    static String describe(int replyStat, int stat, int low, int high) {
        if (replyStat == OncRpc.MSG_ACCEPTED) {
            return switch (stat) {
                case OncRpc.PROG_UNAVAIL -> "PROG_UNAVAIL (program not served)";
                case OncRpc.PROG_MISMATCH -> "PROG_MISMATCH (versions " + low + ".." + high + ")";
                case OncRpc.PROC_UNAVAIL -> "PROC_UNAVAIL (no such procedure)";
                case OncRpc.GARBAGE_ARGS -> "GARBAGE_ARGS";
                case OncRpc.SYSTEM_ERR -> "SYSTEM_ERR";
                default -> "accept_stat " + stat;
            };
        }
        return stat == OncRpc.RPC_MISMATCH ? "MSG_DENIED RPC_MISMATCH (versions " + low + ".." + high + ")"
                : "MSG_DENIED AUTH_ERROR (auth_stat " + stat + ")";
    }

    /** MSG_ACCEPTED or MSG_DENIED. */
    public int replyStat() {
        return replyStat;
    }

    /** accept_stat for MSG_ACCEPTED, reject_stat for MSG_DENIED. */
    public int stat() {
        return stat;
    }
}
