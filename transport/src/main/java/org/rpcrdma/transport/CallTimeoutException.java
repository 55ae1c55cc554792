package org.rpcrdma.transport;

/**
 * A call's reply did not arrive within its timeout. The call was abandoned: its XID and
 * credit stay reserved until the late reply arrives (the responder already consumed a
 * receive for it, RFC 8166 §3.3.1), which is then dropped and counted
 * ({@link RpcRdmaStats#lateReplies()}).
 */
public final class CallTimeoutException extends RpcRdmaException {
    private static final long serialVersionUID = 1L;
    private final int xid;

    public CallTimeoutException(String connection, int xid, long timeoutMillis) {
        super(connection + ": call 0x" + Integer.toHexString(xid) + " got no reply within " + timeoutMillis + " ms");
        this.xid = xid;
    }

    public int xid() {
        return xid;
    }
}
