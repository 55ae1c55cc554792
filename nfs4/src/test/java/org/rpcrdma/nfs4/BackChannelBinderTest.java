package org.rpcrdma.nfs4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
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

    @Test
    void pathDownSeenWhileTheSameConnectionIsBeingBoundBindsOnce() throws Exception {
        try (InMemoryPair a = InMemoryPair.open(RpcRdmaOptions.defaults(), call -> { });
                InMemoryPair b = InMemoryPair.open(RpcRdmaOptions.defaults(), call -> { })) {
            AtomicReference<Connection> current = new AtomicReference<>(a.client());
            AtomicInteger binds = new AtomicInteger();
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            BackChannelBinder binder = new BackChannelBinder(current::get, () -> {
                binds.incrementAndGet();
                started.countDown();
                assertTrue(release.await(5, TimeUnit.SECONDS));
                return BOTH;
            });
            try {
                binder.reconnected(a.client());
                assertTrue(started.await(5, TimeUnit.SECONDS), "the bind started");
                binder.sequenceFlags(Nfs4.SEQ4_STATUS_CB_PATH_DOWN); // a SEQUENCE on a's forward channel meanwhile
                release.countDown();
                awaitBound(binder, 1);
                Thread.sleep(200); // a second bind, if one were queued, runs now
                assertEquals(1, binds.get(), "one BIND_CONN_TO_SESSION for one new connection");

                // a reconnect while nothing runs: the new connection is bound
                current.set(b.client());
                binder.reconnected(b.client());
                awaitBound(binder, 2);
                assertEquals(2, binds.get());
            } finally {
                binder.close();
            }
        }
    }

    @Test
    void aReconnectDuringABindForTheConnectionBeforeBindsTheNewOneToo() throws Exception {
        try (InMemoryPair a = InMemoryPair.open(RpcRdmaOptions.defaults(), call -> { });
                InMemoryPair b = InMemoryPair.open(RpcRdmaOptions.defaults(), call -> { })) {
            AtomicReference<Connection> current = new AtomicReference<>(a.client());
            AtomicInteger binds = new AtomicInteger();
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            BackChannelBinder binder = new BackChannelBinder(current::get, () -> {
                binds.incrementAndGet();
                started.countDown();
                assertTrue(release.await(5, TimeUnit.SECONDS));
                return BOTH;
            });
            try {
                binder.reconnected(a.client());
                assertTrue(started.await(5, TimeUnit.SECONDS));
                current.set(b.client()); // lost again while a was being bound
                binder.reconnected(b.client());
                release.countDown();
                awaitBound(binder, 2);
                assertEquals(2, binds.get(), "the connection made meanwhile is bound as well");
            } finally {
                binder.close();
            }
        }
    }

    private static void awaitBound(BackChannelBinder binder, long n) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (binder.binds() < n && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertEquals(n, binder.binds());
    }
}
