package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class InMemoryPairTest {
    @Test
    void forwardAndBackwardCallsCompleteOnTheCallingThread() {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), echo())) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(1, 1, new byte[] {1, 2, 3, 4}));
            assertTrue(f.isDone(), "a synchronously answered call is complete when call() returns");
            assertArrayEquals(new byte[] {1, 2, 3, 4}, results(f.join()));
            p.client().enableBackchannel(echo()).join();
            CompletableFuture<ReceivedMessage> b = p.server().call(callMsg(1, 9, new byte[] {5, 6, 7, 8}));
            assertTrue(b.isDone());
            assertArrayEquals(new byte[] {5, 6, 7, 8}, results(b.join()));
        }
    }

    @Test
    void manyCallsKeepCreditsAndReceivesBalanced() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().credits(4).build(), held::add)) {
            List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                fs.add(p.client().call(callMsg(i, 1, new byte[4])));
            }
            // the first reply grants 4: with replies held back, only the initial 1 went out
            assertEquals(1, held.size());
            for (int round = 0; round < 10 && !held.isEmpty(); round++) {
                List<IncomingCall> now = new ArrayList<>(held);
                held.clear();
                for (IncomingCall c : now) {
                    echo().handle(c);
                }
                assertTrue(held.size() <= 4, "outstanding at the responder " + held.size() + " > grant 4");
            }
            for (var f : fs) {
                assertArrayEquals(new byte[4], results(f.join()));
            }
            assertEquals(4, p.server().peerCallHighWater());
            assertEquals(0, p.server().stats().creditViolations());
            assertTrue(p.client().isOpen() && p.server().isOpen());
        }
    }

    /**
     * The wire's lock-free parts under two sending threads: replies sent from an executor
     * while the caller sends calls and drains deliveries (receives taken from a ring the
     * other side posts to, deliveries the draining thread queues in its own lane). Every
     * call gets its own reply exactly once and every receive comes back.
     */
    @Test
    void sendsFromTwoThreadsAtOnceAreEachDeliveredOnce() throws Exception {
        java.util.concurrent.ExecutorService replier = java.util.concurrent.Executors.newSingleThreadExecutor();
        CallHandler h = c -> {
            if (c.xid() % 2 == 0) {
                echo().handle(c); // at once, nested in the caller's delivery
            } else {
                replier.execute(() -> echo().handle(c)); // from another thread, maybe while the caller drains
            }
        };
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().credits(8).build(), h)) {
            List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
            for (int i = 0; i < 20_000; i++) {
                fs.add(p.client().call(callMsg(i, 1, new byte[] {(byte) i, 2, 3, 4})));
                if (fs.size() == 64) {
                    check(fs);
                }
            }
            check(fs);
            assertTrue(p.client().isOpen() && p.server().isOpen());
            assertEquals(0, p.client().heldReceives());
            assertEquals(0, p.client().outstandingCalls());
            assertEquals(0, p.client().stats().unmatchedForwardReplies());
        } finally {
            replier.shutdownNow();
        }
    }

    private static void check(List<CompletableFuture<ReceivedMessage>> fs) throws Exception {
        for (CompletableFuture<ReceivedMessage> f : fs) {
            ReceivedMessage m = f.get(10, java.util.concurrent.TimeUnit.SECONDS);
            int xid = org.rpcrdma.xdr.Xdr.getInt(m.bytes(), 0);
            assertArrayEquals(new byte[] {(byte) xid, 2, 3, 4}, results(m));
        }
        fs.clear();
    }

    @Test
    void closeFailsWhatIsPending() {
        InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().reconnectAttempts(0).build(), c -> { });
        CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(3, 1, new byte[0]));
        assertFalse(f.isDone());
        p.close();
        assertTrue(f.isCompletedExceptionally());
    }
}
