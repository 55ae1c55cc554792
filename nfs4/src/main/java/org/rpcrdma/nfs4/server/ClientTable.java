package org.rpcrdma.nfs4.server;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import org.rpcrdma.nfs4.ChannelAttrs;
import org.rpcrdma.nfs4.Nfs4;

/**
 * Client IDs and sessions (RFC 8881 §2.4, §18.35, §18.36) with their leases (§8.3): a
 * client ID is made by EXCHANGE_ID, confirmed by its first CREATE_SESSION, and lives while
 * its SEQUENCEs renew its lease; one that does not renew within the lease loses its
 * sessions and, through {@code onExpiry}, its state. Thread-safe (one lock: these change
 * once per mount, not per I/O).
 */
final class ClientTable {
    /** A client ID's record. */
    static final class Client {
        final long id;
        final byte[] owner;
        final byte[] verifier;
        boolean confirmed;
        int createSessionSequence; // the CREATE_SESSION sequence ID expected next
        Session lastSession; // CREATE_SESSION's reply cache (§18.36.4): the session made with the previous ID
        volatile long renewedNanos;
        final List<Session> sessions = new ArrayList<>();

        Client(long id, byte[] owner, byte[] verifier, int sequence, long now) {
            this.id = id;
            this.owner = owner;
            this.verifier = verifier;
            this.createSessionSequence = sequence;
            this.renewedNanos = now;
        }
    }

    record Exchanged(long clientId, int sequence, boolean confirmed) {}

    private final long leaseNanos;
    private final LongConsumer onExpiry;
    private final int boot = (int) (System.currentTimeMillis() / 1000);
    private final Map<Long, Client> byId = new HashMap<>();
    private final Map<String, Client> byOwner = new HashMap<>();
    private final Map<String, Session> sessions = new HashMap<>();
    private int nextClient = 1;
    private int nextSession = 1;

    ClientTable(long leaseNanos, LongConsumer onExpiry) {
        this.leaseNanos = leaseNanos;
        this.onExpiry = onExpiry;
    }

    synchronized Exchanged exchangeId(byte[] owner, byte[] verifier, long now) {
        String key = HexFormat.of().formatHex(owner);
        Client c = byOwner.get(key);
        if (c != null && Arrays.equals(c.verifier, verifier)) {
            c.renewedNanos = now;
            return new Exchanged(c.id, c.createSessionSequence, c.confirmed);
        }
        if (c != null) { // a new incarnation of the client (§18.35.5 case 5): its old state goes
            drop(c);
        }
        c = new Client(((long) boot << 32) | nextClient++, owner, verifier, 1, now);
        byId.put(c.id, c);
        byOwner.put(key, c);
        return new Exchanged(c.id, c.createSessionSequence, false);
    }

    /**
     * CREATE_SESSION (§18.36.4): with the expected sequence ID a new session (the client ID
     * confirmed), with the one before it the session made then (a replay).
     */
    synchronized Session createSession(long clientId, int sequence, ChannelAttrs fore, ChannelAttrs back,
            int cbProgram, long now) {
        Client c = byId.get(clientId);
        if (c == null) {
            throw new NfsError(Nfs4.NFS4ERR_STALE_CLIENTID, "client id " + Long.toHexString(clientId));
        }
        if (sequence == c.createSessionSequence - 1 && c.lastSession != null) {
            return c.lastSession;
        }
        if (sequence != c.createSessionSequence) {
            throw new NfsError(Nfs4.NFS4ERR_SEQ_MISORDERED, "CREATE_SESSION sequence " + sequence);
        }
        byte[] id = ByteBuffer.allocate(Nfs4.NFS4_SESSIONID_SIZE).putLong(clientId).putInt(boot)
                .putInt(nextSession++).array();
        Session s = new Session(id, c, fore, back, cbProgram);
        c.confirmed = true;
        c.createSessionSequence++;
        c.lastSession = s;
        c.renewedNanos = now;
        c.sessions.add(s);
        sessions.put(HexFormat.of().formatHex(id), s);
        return s;
    }

    synchronized Session session(byte[] id) {
        Session s = sessions.get(HexFormat.of().formatHex(id));
        if (s == null) {
            throw new NfsError(Nfs4.NFS4ERR_BADSESSION, "session not known");
        }
        return s;
    }

    synchronized void destroySession(byte[] id) {
        Session s = sessions.remove(HexFormat.of().formatHex(id));
        if (s == null) {
            throw new NfsError(Nfs4.NFS4ERR_BADSESSION, "session not known");
        }
        s.client.sessions.remove(s);
    }

    /** DESTROY_CLIENTID (§18.50.3): only a client ID with no sessions left. */
    synchronized void destroyClient(long clientId) {
        Client c = byId.get(clientId);
        if (c == null) {
            throw new NfsError(Nfs4.NFS4ERR_STALE_CLIENTID, "client id " + Long.toHexString(clientId));
        }
        if (!c.sessions.isEmpty()) {
            throw new NfsError(Nfs4.NFS4ERR_CLIENTID_BUSY, "client id has sessions");
        }
        drop(c);
    }

    /** Whether {@code clientId} names a confirmed client (OPEN's owner must). */
    synchronized boolean known(long clientId) {
        Client c = byId.get(clientId);
        return c != null && c.confirmed;
    }

    /** Drops every client whose lease ran out before {@code now}; returns how many. */
    synchronized int expire(long now) {
        List<Client> gone = new ArrayList<>();
        for (Client c : byId.values()) {
            if (now - c.renewedNanos > leaseNanos) {
                gone.add(c);
            }
        }
        gone.forEach(this::drop);
        return gone.size();
    }

    synchronized int clients() {
        return byId.size();
    }

    private void drop(Client c) {
        byId.remove(c.id);
        byOwner.remove(HexFormat.of().formatHex(c.owner), c);
        for (Session s : c.sessions) {
            sessions.remove(HexFormat.of().formatHex(s.id));
        }
        c.sessions.clear();
        onExpiry.accept(c.id);
    }
}
