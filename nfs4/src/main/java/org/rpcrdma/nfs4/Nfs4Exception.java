package org.rpcrdma.nfs4;

import org.rpcrdma.transport.RpcRdmaException;

/**
 * A COMPOUND (or CB_COMPOUND) that the server answered with an error: the nfsstat4 and
 * the operation that failed (RFC 8881 §16.2.3: processing stops at the first failure).
 */
public final class Nfs4Exception extends RpcRdmaException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final int op;

    public Nfs4Exception(int status, int op, String what) {
        super(what + ": operation " + op + " failed with nfsstat4 " + status);
        this.status = status;
        this.op = op;
    }

    /** The nfsstat4 (RFC 5662), e.g. {@link Nfs4#NFS4ERR_GRACE}. */
    public int status() {
        return status;
    }

    /** The operation that failed (its nfs_opnum4). */
    public int op() {
        return op;
    }
}
