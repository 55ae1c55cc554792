package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.AuthSys;

/**
 * {@link Nfs4Client} against {@link FakeNfsd} over an {@link InMemoryPair}: the session's
 * setup in the order RFC 8881 requires, SEQUENCE's slot and sequence IDs as a server checks
 * them, a CB_RECALL on the back channel leading to DELEGRETURN from the client's own thread,
 * and NFS4ERR_GRACE retried.
 */
class Nfs4ClientTest {
    static final AuthSys ROOT = new AuthSys(0, "test", 0, 0, new int[0]);
    private FakeNfsd server;
    private InMemoryPair pair;

    @BeforeEach
    void open() {
        server = new FakeNfsd();
        pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), server.dispatcher);
    }

    @AfterEach
    void close() {
        pair.close();
    }

    @Test
    void aSessionWithABackChannelThenARecallAnsweredAndTheDelegationReturned() throws Exception {
        Nfs4Client c = Nfs4Client.open(pair.client(), 2, ROOT);
        assertEquals(List.of("EXCHANGE_ID", "CREATE_SESSION", "SEQUENCE", "RECLAIM_COMPLETE"), server.ops());
        assertEquals(FakeNfsd.CLIENT_ID, c.clientId());
        assertArrayEquals(FakeNfsd.SESSION, c.sessionId());
        assertEquals(2, c.session().back().maxRequests(), "ca_maxrequests = the backward credits");

        Nfs4Client.OpenFile f = c.open("f", Nfs4.OPEN4_SHARE_ACCESS_READ | Nfs4.OPEN4_SHARE_ACCESS_WANT_READ_DELEG);
        assertTrue(f.delegation().isRead());
        assertArrayEquals(FakeNfsd.FH, f.fh());

        try (ReceivedMessage m = pair.server().call(MemorySegment.ofArray(FakeNfsd.recallCall(0x5150, 1)))
                .get(5, TimeUnit.SECONDS)) {
            // accepted SUCCESS, CB_COMPOUND4res: NFS4_OK, tag, 2 results: CB_SEQUENCE ok, CB_RECALL ok
            byte[] want = new XdrBytes().u32(0x5150, 1, 0, 0, 0, 0).u32(0).str("").u32(2)
                    .u32(11, 0).fixed(FakeNfsd.SESSION).u32(1, 0, 1, 1).u32(4, 0).bytes();
            assertArrayEquals(want, m.toByteArray());
        }
        Nfs4Client.Recall r = c.recalls().poll(5, TimeUnit.SECONDS);
        assertNotNull(r);
        assertEquals(0x5150, r.xid());
        r.returned().get(5, TimeUnit.SECONDS);
        Stateid returned = server.delegReturned.get(5, TimeUnit.SECONDS);
        assertTrue(returned.sameState(f.delegation().stateid()), "DELEGRETURN of the recalled delegation");
        assertEquals(6, c.size(f.fh()), "forward calls go on after the recall");
        // a second recall of the returned delegation: we no longer hold it
        try (ReceivedMessage m = pair.server().call(MemorySegment.ofArray(FakeNfsd.recallCall(0x5151, 2)))
                .get(5, TimeUnit.SECONDS)) {
            byte[] b = m.toByteArray();
            assertEquals(Nfs4.NFS4ERR_BAD_STATEID, org.rpcrdma.xdr.Xdr.getInt(MemorySegment.ofArray(b),
                    b.length - 4), "CB_RECALL4res of a delegation we no longer hold");
        }
        c.close(f);
        c.close();
        assertEquals(0, server.misordered, "every SEQUENCE carried the slot's next sequence ID");
        List<String> ops = server.ops();
        assertEquals(List.of("DESTROY_SESSION", "DESTROY_CLIENTID"), ops.subList(ops.size() - 2, ops.size()));
    }

    @Test
    void graceIsRetriedOnTheSameSlotWithTheNextSequenceId() throws Exception {
        Nfs4Client c = Nfs4Client.open(pair.client(), 2, ROOT);
        server.graceAnswers.set(2);
        Nfs4Client.OpenFile f = c.open("f", Nfs4.OPEN4_SHARE_ACCESS_READ);
        assertNotNull(f.stateid());
        assertEquals(3, server.ops().stream().filter("OPEN"::equals).count(), "two GRACE answers, then the OPEN");
        assertEquals(4, server.lastSeq[0], "RECLAIM_COMPLETE, two OPENs in grace and the last: slot 0 at 4");
        assertEquals(0, server.misordered);
        c.close();
    }

    @Test
    void theBackChannelAdvertisesWhatFitsInlineAtTheNegotiatedThreshold() throws Exception {
        for (int threshold : new int[] {1024, 4096}) {
            FakeNfsd s = new FakeNfsd();
            try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().inlineThreshold(threshold)
                    .backwardCredits(2).build(), s.dispatcher)) {
                Nfs4Client c = Nfs4Client.open(p.client(), 2, ROOT);
                // RFC 8167 §5.3: no chunks in the backward direction, so a callback and its reply are
                // an RDMA_MSG of at most the inline threshold, less its 28-byte transport header
                assertEquals(threshold - 28, c.session().back().maxRequestSize(), "ca_maxrequestsize at " + threshold);
                assertEquals(threshold - 28, c.session().back().maxResponseSize(), "ca_maxresponsesize at " + threshold);
                c.close();
            }
        }
    }

    @Test
    void aServerThatDoesNotBindTheBackChannelFailsTheConnect() {
        server.bindBackChannel = false;
        Nfs4Exception e = assertThrows(Nfs4Exception.class, () -> Nfs4Client.open(pair.client(), 2, ROOT));
        assertEquals(Nfs4.OP_CREATE_SESSION, e.op());
        assertNotEquals(List.of(), server.ops());
    }
}
