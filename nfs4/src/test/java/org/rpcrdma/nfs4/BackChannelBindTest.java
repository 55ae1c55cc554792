package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * SEQUENCE's status flags acted on: when the server reports no back channel path to us
 * (SEQ4_STATUS_CB_PATH_DOWN, RFC 8881 §18.46.3) the client binds its connection's back
 * channel to the session with BIND_CONN_TO_SESSION (§18.34), alone in its COMPOUND and
 * off the caller's thread, and callbacks reach it again. The reconnect that leads to it
 * against the real nfsd is {@code NfsdReconnectVerbsTest}.
 */
class BackChannelBindTest {
    private FakeNfsd server;
    private InMemoryPair pair;
    private Nfs4Client c;

    @BeforeEach
    void open() throws Exception {
        server = new FakeNfsd();
        pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), server.dispatcher);
        c = Nfs4Client.open(pair.client(), 2, Nfs4ClientTest.ROOT);
    }

    @AfterEach
    void close() {
        pair.close();
    }

    @Test
    void aSequenceReportingTheCallbackPathDownBindsTheBackChannelAndRecallsArriveAgain() throws Exception {
        Nfs4Client.OpenFile f = c.open("f", Nfs4.OPEN4_SHARE_ACCESS_READ | Nfs4.OPEN4_SHARE_ACCESS_WANT_READ_DELEG);
        server.pathDown = true; // as nfsd says once the connection its back channel was on is gone
        assertEquals(6, c.size(f.fh()));
        assertEquals(Nfs4.SEQ4_STATUS_CB_PATH_DOWN, c.lastSequenceFlags());
        // (FakeNfsd takes a BIND_CONN_TO_SESSION only alone in its COMPOUND, as RFC 8881 §18.34 wants)
        assertEquals(Nfs4.CDFC4_FORE_OR_BOTH, server.firstBind.get(5, TimeUnit.SECONDS),
                "no BIND_CONN_TO_SESSION for both channels after SEQ4_STATUS_CB_PATH_DOWN");
        assertEquals(6, c.size(f.fh()));
        assertEquals(0, c.lastSequenceFlags(), "the server has its back channel path again");
        try (ReceivedMessage m = pair.server().call(MemorySegment.ofArray(FakeNfsd.recallCall(0x6160, 1)))
                .get(5, TimeUnit.SECONDS)) {
            assertNotNull(m);
        }
        Nfs4Client.Recall r = c.recalls().poll(5, TimeUnit.SECONDS);
        assertNotNull(r, "the recall reached the client");
        r.returned().get(5, TimeUnit.SECONDS);
        assertEquals(0, server.misordered);
        awaitBinds(1);
        c.close();
    }

    /** The bind's reply is in; its bookkeeping follows on the binder's thread. */
    private void awaitBinds(long n) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (c.backChannelBinds() < n && System.nanoTime() < until) {
            Thread.sleep(1);
        }
        assertEquals(n, c.backChannelBinds());
    }

    @Test
    void aServerThatKeepsReportingThePathDownIsNotAnsweredWithABindPerCall() throws Exception {
        Nfs4Client.OpenFile f = c.open("f", Nfs4.OPEN4_SHARE_ACCESS_READ);
        server.bindClearsPathDown = false;
        server.pathDown = true;
        c.size(f.fh());
        server.firstBind.get(5, TimeUnit.SECONDS);
        awaitBinds(1);
        for (int i = 0; i < 20; i++) {
            assertEquals(6, c.size(f.fh()));
            assertEquals(Nfs4.SEQ4_STATUS_CB_PATH_DOWN, c.lastSequenceFlags());
        }
        assertEquals(List.of(Nfs4.CDFC4_FORE_OR_BOTH), server.binds,
                "this connection is bound: again at most every " + BackChannelBinder.REBIND_MILLIS + " ms");
        c.close();
    }
}
