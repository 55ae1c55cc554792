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
                forgotten::set);
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
                forgotten::set);
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
        Backchannel bc = new Backchannel(44, RpcRdmaOptions.builder().build(), x -> { });
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
}
