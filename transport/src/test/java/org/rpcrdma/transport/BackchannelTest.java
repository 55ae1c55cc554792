package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The server side of a backchannel across a lost connection (RFC 8167 §5.4), over an in-memory pair. */
class BackchannelTest {
    @Test
    void parkedCallExpiresThenTheAbandonedBackchannelIsForgotten() throws Exception {
        AtomicReference<Backchannel> forgotten = new AtomicReference<>();
        Backchannel bc = new Backchannel(42, RpcRdmaOptions.builder().backchannelWaitMillis(100).callTimeoutMillis(0)
                .build(),
                (b, closeIfAbandoned) -> {
                    if (closeIfAbandoned.getAsBoolean()) {
                        forgotten.set(b);
                    }
                });
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), echo())) {
            AtomicReference<IncomingCall> held = new AtomicReference<>();
            p.client().enableBackchannel(call -> {
                if (call.xid() == 7) {
                    held.set(call); // never answered
                } else {
                    echo().handle(call);
                }
            }).join();
            bc.bind(p.server());
            // the first is answered (its reply grants 2 backward credits), the second held
            assertArrayEquals(new byte[] {1, 2, 3, 4}, results(bc.call(callMsg(8, 1, new byte[] {1, 2, 3, 4})).join()));
            CompletableFuture<ReceivedMessage> parked = bc.call(callMsg(7, 1, new byte[4]));
            assertTrue(CoreDefectsTest.await(() -> held.get() != null, 5_000), "the held call reached the client");
            assertEquals(7, held.get().xid());

            p.server().engine().onLinkLost(new RpcRdmaException("test: link down"));
            assertEquals(1, bc.waitingCalls(), "the outstanding backward call waits for the client");
            ExecutionException e = assertThrows(ExecutionException.class, () -> parked.get(5, TimeUnit.SECONDS));
            assertInstanceOf(ConnectionLostException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("did not reconnect within 100 ms"), e.getCause().getMessage());
            for (int i = 0; i < 1000 && forgotten.get() == null; i++) {
                Thread.sleep(10);
            }
            assertSame(bc, forgotten.get(), "an abandoned backchannel is handed back to be forgotten");
            assertInstanceOf(ConnectionLostException.class,
                    assertThrows(ExecutionException.class, () -> bc.call(callMsg(9, 1, new byte[0])).get()).getCause());
        }
    }

    @Test
    void clientThatComesBackGetsTheWaitingCallWithItsXid() throws Exception {
        AtomicReference<Backchannel> forgotten = new AtomicReference<>();
        Backchannel bc = new Backchannel(43, RpcRdmaOptions.builder().backchannelWaitMillis(5_000).callTimeoutMillis(0)
                .build(),
                (b, closeIfAbandoned) -> {
                    if (closeIfAbandoned.getAsBoolean()) {
                        forgotten.set(b);
                    }
                });
        try (InMemoryPair first = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), echo());
             InMemoryPair second = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), echo())) {
            first.client().enableBackchannel(call -> { }).join(); // holds everything
            bc.bind(first.server());
            CompletableFuture<ReceivedMessage> f = bc.call(callMsg(0x99, 1, new byte[] {4, 3, 2, 1}));
            first.server().engine().onLinkLost(new RpcRdmaException("test: link down"));
            assertEquals(1, bc.waitingCalls());
            second.client().enableBackchannel(echo()).join();
            bc.bind(second.server()); // the client is back on a new connection
            assertArrayEquals(new byte[] {4, 3, 2, 1}, results(f.get(5, TimeUnit.SECONDS)));
            assertEquals(0, bc.waitingCalls());
            assertSame(second.server(), bc.connection());
            assertNull(forgotten.get());
        }
    }

    /**
     * With no limit on the wait for the client (the default), a backward call that was
     * outstanding when the connection was lost still ends at its own timeout if the client
     * does not come back (RFC 8167 §5.4 asks that it wait; the caller's timeout bounds it).
     */
    @Test
    void anOutstandingCallOfAClientThatDoesNotComeBackEndsAtItsOwnTimeout() throws Exception {
        Backchannel bc = new Backchannel(44, RpcRdmaOptions.builder().build(), (b, close) -> close.getAsBoolean());
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), echo())) {
            p.client().enableBackchannel(call -> { }).join(); // holds everything
            bc.bind(p.server());
            long start = System.nanoTime();
            CompletableFuture<ReceivedMessage> f = bc.call(callMsg(0x77, 1, new byte[4]),
                    CallOptions.timeout(300, TimeUnit.MILLISECONDS));
            p.server().engine().onLinkLost(new RpcRdmaException("test: link down"));
            assertEquals(1, bc.waitingCalls(), "the outstanding backward call waits for the client");
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS),
                    "the waiting call outlived its 300 ms timeout");
            assertInstanceOf(CallTimeoutException.class, e.getCause());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(ms >= 250 && ms < 5_000, "ended after " + ms + " ms");
            assertEquals(0, bc.waitingCalls());
        }
    }

    /**
     * A client enables its backchannel on a new connection just as the server forgets it
     * (away past the wait, nothing waiting): the new connection is bound to the backchannel
     * the server keeps, never to one already closed. The test orders the race by holding
     * the client's entry in the server's map (its per-key lock): the forget reaches the map
     * first, the enable while the forget waits there.
     */
    @Test
    void anEnableRacingTheForgetIsBoundToTheBackchannelTheServerKeeps() throws Exception {
        ConcurrentHashMap<Long, Backchannel> byClient = new ConcurrentHashMap<>();
        Backchannels backchannels = new Backchannels(RpcRdmaOptions.builder().callTimeoutMillis(0).build(), byClient);
        try (InMemoryPair first = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), echo());
             InMemoryPair second = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), echo())) {
            first.client().enableBackchannel(echo()).join();
            Backchannel away = backchannels.bind(45, first.server());
            first.server().engine().onLinkLost(new RpcRdmaException("test: link down")); // the client is away
            second.client().enableBackchannel(echo()).join(); // and back on a new connection

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch letGo = new CountDownLatch(1);
            Thread holder = Thread.ofPlatform().start(() -> byClient.compute(45L, (k, v) -> {
                held.countDown();
                awaitQuietly(letGo);
                return v;
            }));
            assertTrue(held.await(5, TimeUnit.SECONDS));
            // the forget timer's task, come due: it waits at the map
            Thread forgetting = Thread.ofPlatform().start(() -> away.forgetIfAbandoned(first.server()));
            assertTrue(CoreDefectsTest.await(() -> forgetting.getState() == Thread.State.BLOCKED, 5_000),
                    "the forget reached the map: " + forgetting.getState());
            // the server's listener for the client's enable on its new connection
            Thread enabling = Thread.ofPlatform().start(() -> backchannels.bind(45, second.server()));
            assertTrue(CoreDefectsTest.await(() -> enabling.getState() == Thread.State.BLOCKED
                    || enabling.getState() == Thread.State.TERMINATED, 5_000), "the enable ran: " + enabling.getState());
            letGo.countDown();
            for (Thread t : new Thread[] {holder, forgetting, enabling}) {
                t.join(5_000);
                assertEquals(Thread.State.TERMINATED, t.getState(), t + " ended");
            }

            Backchannel kept = backchannels.get(45);
            assertSame(second.server(), kept.connection(),
                    "the client's new connection is bound to the backchannel the server keeps");
            assertArrayEquals(new byte[] {5, 6}, results(kept.call(callMsg(0x45, 1, new byte[] {5, 6}))
                    .get(5, TimeUnit.SECONDS)), "a backward call reaches the client");
        }
    }

    private static void awaitQuietly(CountDownLatch l) {
        try {
            l.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
