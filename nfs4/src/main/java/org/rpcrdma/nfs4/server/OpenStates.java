package org.rpcrdma.nfs4.server;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Stateid;

/**
 * Open state (RFC 8881 §9): one stateid per open-owner and file, its share access and deny
 * bits (share reservations, §9.7), upgraded by a further OPEN, lowered by OPEN_DOWNGRADE,
 * gone with CLOSE or its client. A stateid's {@code other} is ours; its seqid counts the
 * changes (§8.2.2). Thread-safe.
 */
final class OpenStates {
    /** One open-owner's open of one file. */
    static final class Open {
        final byte[] other;
        final long clientId;
        final String owner;
        final long ino;
        int seqid;
        int access;
        int deny;

        Open(byte[] other, long clientId, String owner, long ino) {
            this.other = other;
            this.clientId = clientId;
            this.owner = owner;
            this.ino = ino;
        }

        Stateid stateid() {
            return new Stateid(seqid, other);
        }
    }

    private final int boot = (int) (System.nanoTime() >>> 16) & 0x7fff_ffff; // apart from delegations'
    private final Delegations delegations;
    private final Map<String, Open> byOther = new HashMap<>();
    private final Map<Long, List<Open>> byFile = new HashMap<>();
    private long next = 1;

    OpenStates(Delegations delegations) {
        this.delegations = delegations;
    }

    /** OPEN: a new open, or the owner's open of the file with more access (§18.16.4); SHARE_DENIED on conflict. */
    synchronized Stateid open(long clientId, byte[] owner, long ino, int access, int deny) {
        String o = clientId + "/" + HexFormat.of().formatHex(owner);
        List<Open> opens = byFile.computeIfAbsent(ino, k -> new ArrayList<>());
        Open mine = null;
        for (Open x : opens) {
            if (x.clientId == clientId && x.owner.equals(o)) {
                mine = x;
            } else if ((x.deny & access) != 0 || (x.access & deny) != 0) {
                throw new NfsError(Nfs4.NFS4ERR_SHARE_DENIED, "share reservation conflict");
            }
        }
        if (mine == null) {
            byte[] other = ByteBuffer.allocate(Stateid.OTHER_SIZE).putInt(boot).putLong(next++).array();
            mine = new Open(other, clientId, o, ino);
            opens.add(mine);
            byOther.put(HexFormat.of().formatHex(other), mine);
        }
        mine.access |= access;
        mine.deny |= deny;
        mine.seqid++;
        return mine.stateid();
    }

    synchronized Stateid close(Stateid s) {
        Open x = find(s);
        byOther.remove(HexFormat.of().formatHex(x.other));
        List<Open> opens = byFile.get(x.ino);
        opens.remove(x);
        if (opens.isEmpty()) {
            byFile.remove(x.ino);
        }
        return new Stateid(x.seqid + 1, x.other);
    }

    synchronized Stateid downgrade(Stateid s, int access, int deny) {
        Open x = find(s);
        if ((access & ~x.access) != 0 || (deny & ~x.deny) != 0 || access == 0) {
            throw new NfsError(Nfs4.NFS4ERR_INVAL, "OPEN_DOWNGRADE is not a downgrade");
        }
        x.access = access;
        x.deny = deny;
        x.seqid++;
        return x.stateid();
    }

    /**
     * The check READ, WRITE and SETATTR make (§8.2.3, §9.1.2): the special stateids pass
     * (anonymous, READ bypass, current); any other must be a current open of {@code ino}
     * that allows {@code access}.
     */
    synchronized void check(Stateid s, long ino, int access) {
        if (special(s)) {
            return;
        }
        if (access == Nfs4.OPEN4_SHARE_ACCESS_READ && delegations.holds(s, ino)) {
            return; // READ under a read delegation (§9.1.4)
        }
        Open x = find(s);
        if (x.ino != ino) {
            throw new NfsError(Nfs4.NFS4ERR_BAD_STATEID, "stateid of another file");
        }
        if ((x.access & access) != access) {
            throw new NfsError(Nfs4.NFS4ERR_OPENMODE, "open for " + x.access + ", not " + access);
        }
    }

    /** TEST_STATEID's answer for one stateid (§18.48.3). */
    synchronized int test(Stateid s) {
        if (delegations.known(s)) {
            return Nfs4.NFS4_OK;
        }
        try {
            find(s);
            return Nfs4.NFS4_OK;
        } catch (NfsError e) {
            return e.status;
        }
    }

    /** FREE_STATEID (§18.38): an open stateid is freed by CLOSE, not here. */
    synchronized void free(Stateid s) {
        find(s);
        throw new NfsError(Nfs4.NFS4ERR_LOCKS_HELD, "an open stateid is freed by CLOSE");
    }

    /** Drops everything a client held (its lease expired, or it went away). */
    synchronized void dropClient(long clientId) {
        byOther.values().removeIf(x -> x.clientId == clientId);
        byFile.values().forEach(l -> l.removeIf(x -> x.clientId == clientId));
        byFile.values().removeIf(List::isEmpty);
    }

    synchronized int size() {
        return byOther.size();
    }

    /** Whether a client other than {@code clientId} has {@code ino} open for writing. */
    synchronized boolean writtenByOthers(long ino, long clientId) {
        for (Open x : byFile.getOrDefault(ino, List.of())) {
            if (x.clientId != clientId && (x.access & Nfs4.OPEN4_SHARE_ACCESS_WRITE) != 0) {
                return true;
            }
        }
        return false;
    }

    private Open find(Stateid s) {
        Open x = byOther.get(HexFormat.of().formatHex(s.other()));
        if (x == null) {
            throw new NfsError(Nfs4.NFS4ERR_BAD_STATEID, "stateid not known");
        }
        if (s.seqid() != 0 && s.seqid() < x.seqid) {
            throw new NfsError(Nfs4.NFS4ERR_OLD_STATEID, "seqid " + s.seqid() + " < " + x.seqid);
        }
        if (s.seqid() > x.seqid) {
            throw new NfsError(Nfs4.NFS4ERR_BAD_STATEID, "seqid " + s.seqid() + " > " + x.seqid);
        }
        return x;
    }

    static boolean special(Stateid s) {
        byte[] o = s.other();
        boolean zeros = Arrays.equals(o, new byte[Stateid.OTHER_SIZE]);
        byte[] ones = new byte[Stateid.OTHER_SIZE];
        Arrays.fill(ones, (byte) 0xff);
        return zeros && (s.seqid() == 0 || s.seqid() == 1) || Arrays.equals(o, ones) && s.seqid() == -1;
    }
}
