package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * When BackChannelBinder binds again: once per connection that needs it. After a reconnect
 * the server reports CB_PATH_DOWN in every SEQUENCE until the bind is done (nfsd's probe of
 * the new path follows it), so flags seen while the bind for that same connection is under
 * way must not queue a second one; a reconnect to yet another connection must.
 */
class BackChannelBinderTest {
    private static final SessionOps.BindResult BOTH = new SessionOps.BindResult(new byte[16], Nfs4.CDFS4_BOTH, true);

    private InMemoryPair a;
    private InMemoryPair b;
    private final AtomicReference<Connection> current = new AtomicReference<>();
    private final AtomicInteger binds = new AtomicInteger();
    private final CountDownLatch started = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private BackChannelBinder binder;

    @BeforeEach
    void open() {
        a = InMemoryPair.open(RpcRdmaOptions.defaults(), call -> { });
        b = InMemoryPair.open(RpcRdmaOptions.defaults(), call -> { });
        current.set(a.client());
        // each bind blocks until the test releases it: the window where SEQUENCEs still say path down
        binder = new BackChannelBinder(current::get, () -> {
            binds.incrementAndGet();
            started.countDown();
            assertTrue(release.await(5, TimeUnit.SECONDS));
            return BOTH;
        });
    }

    @AfterEach
    void close() {
        binder.close();
        a.close();
        b.close();
    }

    @Test
    void pathDownSeenWhileTheSameConnectionIsBeingBoundBindsOnce() throws Exception {
        binder.reconnected(a.client());
        assertTrue(started.await(5, TimeUnit.SECONDS), "the bind started");
        binder.sequenceFlags(Nfs4.SEQ4_STATUS_CB_PATH_DOWN); // a SEQUENCE on a's forward channel meanwhile
        release.countDown();
        awaitBound(1);
        Thread.sleep(200); // a second bind, if one were queued, runs now
        assertEquals(1, binds.get(), "one BIND_CONN_TO_SESSION for one new connection");

        // a reconnect while nothing runs: the new connection is bound
        current.set(b.client());
        binder.reconnected(b.client());
        awaitBound(2);
        assertEquals(2, binds.get());
    }

    @Test
    void aReconnectDuringABindForTheConnectionBeforeBindsTheNewOneToo() throws Exception {
        binder.reconnected(a.client());
        assertTrue(started.await(5, TimeUnit.SECONDS), "the bind started");
        current.set(b.client()); // lost again while a was being bound
        binder.reconnected(b.client());
        release.countDown();
        awaitBound(2);
        assertEquals(2, binds.get(), "the connection made meanwhile is bound as well");
    }

    private void awaitBound(long n) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (binder.binds() < n && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertEquals(n, binder.binds());
    }
}
