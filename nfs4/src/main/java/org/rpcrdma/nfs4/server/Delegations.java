package org.rpcrdma.nfs4.server;

import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Stateid;

/**
 * Read delegations (RFC 8881 §10.2): granted on an OPEN for read when the holder's back
 * channel answers and no one else has the file open for writing; a conflicting change
 * (§10.4.4: another client's OPEN for writing, WRITE, SETATTR, REMOVE or RENAME, or a
 * change through the server's own API) recalls them (CB_RECALL, §20.2) and waits until
 * they are returned (DELEGRETURN) or revoked (the recall not answered within the lease).
 * Thread-safe.
 */
final class Delegations {
    private static final System.Logger LOG = System.getLogger(Delegations.class.getName());

    /** One read delegation. */
    static final class Delegation {
        final byte[] other;
        final long clientId;
        final Session session;
        final long ino;
        final byte[] fh;
        long recalledAt = -1; // System.nanoTime() of the CB_RECALL, -1 before

        Delegation(byte[] other, long clientId, Session session, long ino, byte[] fh) {
            this.other = other;
            this.clientId = clientId;
            this.session = session;
            this.ino = ino;
            this.fh = fh;
        }

        Stateid stateid() {
            return new Stateid(1, other);
        }
    }

    private final int boot = (int) (System.nanoTime() >>> 20) | 0x8000_0000; // apart from open stateids
    private final Map<String, Delegation> byOther = new HashMap<>();
    private final Map<Long, List<Delegation>> byFile = new HashMap<>();
    private final Map<Long, Integer> changing = new HashMap<>(); // files the server itself is changing
    private final long revokeAfterNanos;
    private long next = 1;

    Delegations(long revokeAfterNanos) {
        this.revokeAfterNanos = revokeAfterNanos;
    }

    /**
     * A read delegation of {@code ino} for the client, or null when it holds one, one is
     * being recalled, or the server is changing the file.
     */
    synchronized Delegation grant(long clientId, Session session, long ino, byte[] fh) {
        if (changing.containsKey(ino)) {
            return null;
        }
        for (Delegation d : byFile.getOrDefault(ino, List.of())) {
            if (d.clientId == clientId || d.recalledAt >= 0) {
                return null;
            }
        }
        byte[] other = ByteBuffer.allocate(Stateid.OTHER_SIZE).putInt(boot).putLong(next++).array();
        Delegation d = new Delegation(other, clientId, session, ino, fh);
        byOther.put(HexFormat.of().formatHex(other), d);
        byFile.computeIfAbsent(ino, k -> new ArrayList<>()).add(d);
        return d;
    }

    /**
     * The delegations of {@code ino} that a change by {@code clientId} conflicts with (any
     * other client's; every one for {@link #SERVER}) and that are not recalled yet: the
     * caller recalls them. Those recalled longer ago than the revoke time are revoked here.
     * Empty with {@code waiting} false: no conflict left.
     */
    synchronized Conflict conflict(long clientId, long ino, long now) {
        List<Delegation> toRecall = new ArrayList<>();
        boolean waiting = false;
        for (Delegation d : new ArrayList<>(byFile.getOrDefault(ino, List.of()))) {
            if (d.clientId == clientId) {
                continue;
            }
            if (d.recalledAt < 0) {
                d.recalledAt = now;
                toRecall.add(d);
                waiting = true;
            } else if (now - d.recalledAt > revokeAfterNanos) {
                LOG.log(Level.WARNING, "a delegation of inode {0} not returned within the lease: revoked", ino);
                remove(d); // §10.2.1: not returned within the lease: revoked
            } else {
                waiting = true;
            }
        }
        return new Conflict(toRecall, waiting);
    }

    /** No client is ever given this ID (ClientTable's carry the boot time): the server's own changes. */
    static final long SERVER = 0;

    /** The server starts changing {@code ino}: no delegation of it is granted until {@link #endChange}. */
    synchronized void beginChange(long ino) {
        changing.merge(ino, 1, Integer::sum);
    }

    synchronized void endChange(long ino) {
        changing.computeIfPresent(ino, (k, n) -> n == 1 ? null : n - 1);
    }

    /** Waits at most {@code nanos} for a delegation of {@code ino} to go; returns at once if none is left. */
    synchronized void awaitReturn(long ino, long nanos) throws InterruptedException {
        if (byFile.containsKey(ino) && nanos > 0) {
            TimeUnit.NANOSECONDS.timedWait(this, nanos);
        }
    }

    /** The time a recalled delegation has to come back before it is revoked. */
    long revokeAfterNanos() {
        return revokeAfterNanos;
    }

    record Conflict(List<Delegation> toRecall, boolean waiting) {}

    /** DELEGRETURN. */
    synchronized Delegation returned(Stateid s) {
        Delegation d = byOther.get(HexFormat.of().formatHex(s.other()));
        if (d == null) {
            throw new NfsError(Nfs4.NFS4ERR_BAD_STATEID, "no such delegation");
        }
        remove(d);
        return d;
    }

    /** Whether {@code s} is a delegation of {@code ino} (READ with a delegation stateid, §9.1.4). */
    synchronized boolean holds(Stateid s, long ino) {
        Delegation d = byOther.get(HexFormat.of().formatHex(s.other()));
        return d != null && d.ino == ino;
    }

    synchronized boolean known(Stateid s) {
        return byOther.containsKey(HexFormat.of().formatHex(s.other()));
    }

    synchronized void dropClient(long clientId) {
        for (Delegation d : new ArrayList<>(byOther.values())) {
            if (d.clientId == clientId) {
                remove(d);
            }
        }
    }

    synchronized int size() {
        return byOther.size();
    }

    private void remove(Delegation d) {
        notifyAll(); // a change waiting in awaitReturn
        byOther.remove(HexFormat.of().formatHex(d.other));
        List<Delegation> l = byFile.get(d.ino);
        if (l != null) {
            l.remove(d);
            if (l.isEmpty()) {
                byFile.remove(d.ino);
            }
        }
    }
}
