package org.rpcrdma.nfs4.server;

import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.transport.Connection;

/**
 * What one COMPOUND carries from operation to operation (RFC 8881 §16.2.3): the current
 * and saved file handles, the session and slot its SEQUENCE named, and the connection it
 * came on.
 */
final class CompoundState {
    final Connection connection;
    Session session;
    int slot = -1;
    boolean cacheThis;
    boolean cacheable = true; // false once a result holds memory that is not ours to keep (READ data)
    int reads;
    private long current = -1;
    private long saved = -1;

    CompoundState(Connection connection) {
        this.connection = connection;
    }

    long current() {
        if (current < 0) {
            throw new NfsError(Nfs4.NFS4ERR_NOFILEHANDLE, "no current filehandle");
        }
        return current;
    }

    void current(long ino) {
        current = ino;
    }

    void clearCurrent() {
        current = -1;
    }

    void save() {
        saved = current();
    }

    void restore() {
        if (saved < 0) {
            throw new NfsError(Nfs4.NFS4ERR_RESTOREFH, "no saved filehandle");
        }
        current = saved;
    }

    /** The client whose session this COMPOUND runs in (after SEQUENCE, which every other operation follows). */
    long clientId() {
        if (session == null) {
            throw new NfsError(Nfs4.NFS4ERR_OP_NOT_IN_SESSION, "no session");
        }
        return session.client.id;
    }

    long saved() {
        if (saved < 0) {
            throw new NfsError(Nfs4.NFS4ERR_NOFILEHANDLE, "no saved filehandle");
        }
        return saved;
    }
}
