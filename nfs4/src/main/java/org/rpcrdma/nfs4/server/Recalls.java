package org.rpcrdma.nfs4.server;

import java.io.IOException;
import org.rpcrdma.nfs4.Nfs4;

/**
 * Recalls the read delegations a change to a file conflicts with (RFC 8881 §10.4.4:
 * another client's OPEN for writing, WRITE, SETATTR, REMOVE or RENAME of the file, or a
 * change made through the server's own API), each once over its holder's back channel.
 * A client's operation is answered NFS4ERR_DELAY until they are returned or revoked (as
 * nfsd does: the client retries); the server's own change waits for that.
 */
final class Recalls {
    /** What the server does to a file once no delegation of it is out. */
    interface Change<T> {
        T run() throws IOException;
    }

    private final Delegations delegations;
    private final CallbackSender callbacks;

    Recalls(Delegations delegations, CallbackSender callbacks) {
        this.delegations = delegations;
        this.callbacks = callbacks;
    }

    /** Before {@code clientId} changes {@code ino}: the others' delegations recalled, NFS4ERR_DELAY while one is out. */
    void forClient(long clientId, long ino) {
        if (recall(clientId, ino)) {
            throw new NfsError(Nfs4.NFS4ERR_DELAY, "a delegation of the file is being recalled");
        }
    }

    /**
     * {@code change} of {@code ino} by the server itself, once every delegation of the file
     * is returned or revoked (at most the lease after the recall); none is granted meanwhile.
     */
    <T> T forServer(long ino, Change<T> change) throws IOException, InterruptedException {
        delegations.beginChange(ino);
        try {
            while (recall(Delegations.SERVER, ino)) {
                // woken by each DELEGRETURN; the bound lets conflict() revoke what is overdue
                delegations.awaitReturn(ino, delegations.revokeAfterNanos() / 4 + 1);
            }
            return change.run();
        } finally {
            delegations.endChange(ino);
        }
    }

    /** Recalls what is not recalled yet; whether a delegation of the file is still out. */
    private boolean recall(long clientId, long ino) {
        Delegations.Conflict c = delegations.conflict(clientId, ino, System.nanoTime());
        for (Delegations.Delegation d : c.toRecall()) {
            callbacks.recall(d);
        }
        return c.waiting();
    }
}
