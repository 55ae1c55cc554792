package org.rpcrdma.nfs4.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Nfs4Client;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * Two of our clients on two connections to one server: the first holds a read
 * delegation, the second's OPEN for writing makes the server recall it over the first
 * client's back channel (CB_COMPOUND {CB_SEQUENCE, CB_RECALL}); the first returns it
 * (DELEGRETURN) and the second's OPEN, answered NFS4ERR_DELAY meanwhile, goes through.
 */
class DelegationRecallTest {
    @TempDir
    Path dir;
    private NfsServer server;
    private InMemoryPair a;
    private InMemoryPair b;

    @BeforeEach
    void open() throws Exception {
        server = new NfsServer(dir, 90, RpcRdmaOptions.DEFAULT_INLINE, 2);
        a = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), server.dispatcher());
        b = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), server.dispatcher());
    }

    @AfterEach
    void close() {
        a.close();
        b.close();
        server.close();
    }

    @Test
    void aConflictingOpenRecallsTheReadDelegationOverTheHoldersBackChannel() throws Exception {
        Files.writeString(dir.resolve("f"), "data");
        try (Nfs4Client holder = Nfs4Client.open(a.client(), 2, NfsServerTest.ROOT);
                Nfs4Client writer = Nfs4Client.open(b.client(), 2, NfsServerTest.ROOT)) {
            Nfs4Client.OpenFile held = openWithDelegation(holder);
            assertEquals(Nfs4.OPEN_DELEGATE_READ, held.delegation().type());
            assertEquals(1, server.delegations());

            long t0 = System.nanoTime();
            Nfs4Client.OpenFile w = writer.open("f", Nfs4.OPEN4_SHARE_ACCESS_WRITE);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(Nfs4.OPEN_DELEGATE_NONE, w.delegation().type());
            Nfs4Client.Recall r = holder.recalls().poll(5, TimeUnit.SECONDS);
            assertNotNull(r, "the holder got CB_RECALL");
            assertArrayEquals(held.delegation().stateid().other(), r.stateid().other());
            r.returned().get(5, TimeUnit.SECONDS);
            assertEquals(0, server.delegations(), "returned");
            assertTrue(millis < 10_000, "the conflicting OPEN took " + millis + " ms");
        }
    }

    /** OPEN for read until the back channel's CB_NULL has been answered and a delegation comes with it. */
    static Nfs4Client.OpenFile openWithDelegation(Nfs4Client c) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            Nfs4Client.OpenFile f = c.open("f", Nfs4.OPEN4_SHARE_ACCESS_READ);
            if (f.delegation().type() == Nfs4.OPEN_DELEGATE_READ || System.nanoTime() > end) {
                return f;
            }
            c.close(f);
            Thread.sleep(20);
        }
    }
}
