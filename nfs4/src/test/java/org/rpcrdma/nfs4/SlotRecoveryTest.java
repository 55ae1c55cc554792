package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * A request that ends without an answer from the session does not cost its slot: one
 * refused before anything was sent leaves the slot's sequence ID as it was, and one that
 * timed out is recovered on the slot's next use (RFC 8881 §2.10.6.1-2.10.6.2), whether the
 * server executed it or not. {@link FakeNfsd} has two slots and checks every sequence ID.
 */
class SlotRecoveryTest {
    private FakeNfsd server;
    private InMemoryPair pair;
    private Nfs4Client c;

    @BeforeEach
    void open() throws Exception {
        server = new FakeNfsd();
        pair = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).callTimeoutMillis(300).build(),
                server.dispatcher);
        c = Nfs4Client.open(pair.client(), 2, Nfs4ClientTest.ROOT);
    }

    @AfterEach
    void close() {
        pair.close();
    }

    @Test
    void readsRefusedBeforeSendingLeaveBothSlotsUsable() throws Exception {
        Nfs4Client.OpenFile f = c.open("f", Nfs4.OPEN4_SHARE_ACCESS_READ);
        int[] before = server.lastSeq.clone();
        try (Arena confined = Arena.ofConfined()) {
            for (int i = 0; i < 2; i++) { // as many as the session has slots
                assertThrows(IllegalArgumentException.class, () -> c.read(f, 0, confined.allocate(64)),
                        "a receptacle confined to this thread is refused at the call");
            }
        }
        assertEquals(List.of(before[0], before[1]), List.of(server.lastSeq[0], server.lastSeq[1]),
                "nothing reached the server");
        assertEquals(6, c.size(f.fh()), "the session still has its slots");
        assertEquals(before[0] + 1, server.lastSeq[0], "slot 0 went on from its sequence ID");
        assertEquals(0, server.misordered);
        c.close();
    }

    @Test
    void aTimedOutRequestTheServerExecutedIsRecoveredOnItsSlot() throws Exception {
        Nfs4Client.OpenFile f = c.open("f", Nfs4.OPEN4_SHARE_ACCESS_READ);
        server.hold = FakeNfsd.Hold.EXECUTE_THEN_HOLD;
        assertThrows(CallTimeoutException.class, () -> c.size(f.fh()));
        int executed = server.lastSeq[0];
        server.answerHeld(); // late: dropped by the client
        for (int i = 0; i < 3; i++) {
            assertEquals(6, c.size(f.fh()), "call " + i + " after the timeout");
        }
        assertEquals(executed + 3, server.lastSeq[0], "slot 0 kept serving, from the executed sequence ID on");
        assertEquals(0, server.misordered + server.replays, "the client guessed right: the request was sent");
        c.close();
    }

    @Test
    void aTimedOutRequestTheServerNeverExecutedIsRecoveredOnItsSlot() throws Exception {
        Nfs4Client.OpenFile f = c.open("f", Nfs4.OPEN4_SHARE_ACCESS_READ);
        int before = server.lastSeq[0];
        server.hold = FakeNfsd.Hold.HOLD_UNEXECUTED;
        assertThrows(CallTimeoutException.class, () -> c.size(f.fh()));
        server.answerHeld();
        for (int i = 0; i < 3; i++) {
            assertEquals(6, c.size(f.fh()), "call " + i + " after the timeout");
        }
        assertEquals(before + 3, server.lastSeq[0], "slot 0 resumed from the sequence ID the server had");
        assertEquals(1, server.misordered, "one NFS4ERR_SEQ_MISORDERED told the client the request never ran");
        c.close();
    }

    @Test
    void aRetryOfAnExecutedSequenceIdMovesOn() throws Exception {
        Nfs4Client.OpenFile f = c.open("f", Nfs4.OPEN4_SHARE_ACCESS_READ);
        server.lastSeq[0]++; // the server ran a request on slot 0 we believe it never saw
        assertEquals(6, c.size(f.fh()));
        assertEquals(1, server.replays, "NFS4ERR_RETRY_UNCACHED_REP once, then the next sequence ID");
        c.close();
    }
}
