package org.rpcrdma.nfs4.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.nfs4.ChannelAttrs;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Stateid;

/** Client IDs, CREATE_SESSION's sequence and replay, and leases with the state they hold. */
class ClientTableTest {
    private static final ChannelAttrs ATTRS = new ChannelAttrs(0, 4096, 4096, 0, 8, 4, -1);
    private static final long LEASE = 1_000;

    @Test
    void createSessionConfirmsItsReplayGivesTheSameSessionAndALeaseNotRenewedDropsTheState() {
        List<Long> gone = new ArrayList<>();
        OpenStates opens = new OpenStates(new Delegations(LEASE));
        ClientTable t = new ClientTable(LEASE, id -> {
            gone.add(id);
            opens.dropClient(id);
        });
        ClientTable.Exchanged x = t.exchangeId(new byte[] {1}, new byte[8], 0);
        assertFalse(x.confirmed());
        assertFalse(t.known(x.clientId()));
        Session s = t.createSession(x.clientId(), x.sequence(), ATTRS, ATTRS, Nfs4.CB_PROGRAM, 0);
        assertTrue(t.known(x.clientId()));
        assertSame(s, t.createSession(x.clientId(), x.sequence(), ATTRS, ATTRS, Nfs4.CB_PROGRAM, 0), "a replay");
        NfsError e = assertThrows(NfsError.class,
                () -> t.createSession(x.clientId(), x.sequence() + 5, ATTRS, ATTRS, Nfs4.CB_PROGRAM, 0));
        assertEquals(Nfs4.NFS4ERR_SEQ_MISORDERED, e.status);
        assertTrue(t.exchangeId(new byte[] {1}, new byte[8], 0).confirmed(), "the same owner and verifier");
        Stateid open = opens.open(x.clientId(), new byte[] {9}, 42, Nfs4.OPEN4_SHARE_ACCESS_READ, 0);
        assertEquals(Nfs4.NFS4_OK, opens.test(open));

        s.client.renewedNanos = LEASE / 2; // its SEQUENCE at half the lease
        assertEquals(0, t.expire(LEASE));
        assertEquals(1, t.expire(2 * LEASE));
        assertEquals(List.of(x.clientId()), gone);
        assertEquals(0, t.clients());
        assertEquals(Nfs4.NFS4ERR_BAD_STATEID, opens.test(open), "the open went with the client");
        assertEquals(Nfs4.NFS4ERR_BADSESSION, assertThrows(NfsError.class, () -> t.session(s.id)).status);
    }

    @Test
    void shareReservationsConflictAcrossOwnersAndAnOwnerUpgradesItsOwn() {
        OpenStates o = new OpenStates(new Delegations(LEASE));
        Stateid a = o.open(1, new byte[] {1}, 7, Nfs4.OPEN4_SHARE_ACCESS_READ, Nfs4.OPEN4_SHARE_ACCESS_WRITE);
        NfsError e = assertThrows(NfsError.class, () -> o.open(2, new byte[] {2}, 7, Nfs4.OPEN4_SHARE_ACCESS_WRITE, 0));
        assertEquals(Nfs4.NFS4ERR_SHARE_DENIED, e.status);
        Stateid b = o.open(1, new byte[] {1}, 7, Nfs4.OPEN4_SHARE_ACCESS_WRITE, 0);
        assertTrue(a.sameState(b));
        assertNotEquals(a.seqid(), b.seqid());
        assertEquals(Nfs4.NFS4ERR_OLD_STATEID, assertThrows(NfsError.class,
                () -> o.check(a, 7, Nfs4.OPEN4_SHARE_ACCESS_READ)).status);
        o.check(b, 7, Nfs4.OPEN4_SHARE_ACCESS_WRITE);
        Stateid c = o.downgrade(b, Nfs4.OPEN4_SHARE_ACCESS_READ, 0);
        assertEquals(Nfs4.NFS4ERR_OPENMODE, assertThrows(NfsError.class,
                () -> o.check(c, 7, Nfs4.OPEN4_SHARE_ACCESS_WRITE)).status);
        o.close(c);
        assertEquals(0, o.size());
    }
}
