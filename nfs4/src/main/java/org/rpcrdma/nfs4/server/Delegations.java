package org.rpcrdma.nfs4.server;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Stateid;

/**
 * Read delegations (RFC 8881 §10.2): granted on an OPEN for read when the holder's back
 * channel answers and no one else has the file open for writing; a conflicting OPEN
 * recalls them (CB_RECALL, §20.2) and waits (NFS4ERR_DELAY to its client) until they are
 * returned (DELEGRETURN) or revoked (the recall not answered within the lease).
 * Thread-safe.
 */
final class Delegations {
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
    private final long revokeAfterNanos;
    private long next = 1;

    Delegations(long revokeAfterNanos) {
        this.revokeAfterNanos = revokeAfterNanos;
    }

    /** A read delegation of {@code ino} for the client, or null when it holds one or one is being recalled. */
    synchronized Delegation grant(long clientId, Session session, long ino, byte[] fh) {
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
     * The delegations of {@code ino} that an OPEN by {@code clientId} for {@code access}
     * conflicts with (a read delegation conflicts with another client's write access) and
     * that are not recalled yet: the caller recalls them. Those recalled longer ago than the
     * revoke time are revoked here. Empty with {@code waiting} false: no conflict left.
     */
    synchronized Conflict conflict(long clientId, long ino, int access, long now) {
        List<Delegation> toRecall = new ArrayList<>();
        boolean waiting = false;
        if ((access & Nfs4.OPEN4_SHARE_ACCESS_WRITE) == 0) {
            return new Conflict(toRecall, false);
        }
        for (Delegation d : new ArrayList<>(byFile.getOrDefault(ino, List.of()))) {
            if (d.clientId == clientId) {
                continue;
            }
            if (d.recalledAt < 0) {
                d.recalledAt = now;
                toRecall.add(d);
                waiting = true;
            } else if (now - d.recalledAt > revokeAfterNanos) {
                remove(d); // §10.2.1: not returned within the lease: revoked
            } else {
                waiting = true;
            }
        }
        return new Conflict(toRecall, waiting);
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
