package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class InMemoryPairTest {
    /**
     * Blocking calls either way get their own replies: taken by the caller polling the wire
     * while it waits, or handed to it by a side's completion thread that held the context.
     */
    @Test
    void blockingForwardAndBackwardCallsGetTheirReplies() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().backwardCredits(2).build(), echo())) {
            for (int i = 0; i < 20; i++) {
                try (ReceivedMessage m = p.client().callAndWait(callMsg(i, 1, new byte[] {1, 2, 3, (byte) i}),
                        CallOptions.DEFAULT)) {
                    assertArrayEquals(new byte[] {1, 2, 3, (byte) i},
                            java.util.Arrays.copyOfRange(m.toByteArray(), 24, 28));
                }
            }
            assertEquals(20, p.client().stats().repliesTakenByCaller() + p.client().stats().repliesHandedOff());
            assertArrayEquals(new byte[] {9}, results(p.client().call(callMsg(99, 1, new byte[] {9})).join()));
            p.client().enableBackchannel(echo()).join();
            for (int i = 0; i < 20; i++) {
                try (ReceivedMessage m = p.server().callAndWait(callMsg(i, 9, new byte[] {5, 6, 7, (byte) i}),
                        CallOptions.DEFAULT)) {
                    assertArrayEquals(new byte[] {5, 6, 7, (byte) i},
                            java.util.Arrays.copyOfRange(m.toByteArray(), 24, 28));
                }
            }
            assertEquals(20, p.server().stats().repliesTakenByCaller() + p.server().stats().repliesHandedOff());
            assertEquals(0, p.client().outstandingCalls());
            assertEquals(0, p.server().outstandingCalls());
        }
    }

    @Test
    void manyCallsKeepCreditsAndReceivesBalanced() throws Exception {
        BlockingQueue<IncomingCall> held = new LinkedBlockingQueue<>();
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().credits(4).build(), held::add)) {
            List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                fs.add(p.client().call(callMsg(i, 1, new byte[4])));
            }
            // before the first reply grants 4, only the initial 1 goes out: 9 wait for credit
            assertEquals(9, p.client().waitingCalls());
            for (int answered = 0; answered < 10; answered++) {
                IncomingCall c = held.poll(5, TimeUnit.SECONDS);
                assertNotNull(c, "call " + answered + " reached the server");
                int outstanding = p.server().peerOutstandingCalls();
                assertTrue(outstanding <= 4, "outstanding at the responder " + outstanding + " > grant 4");
                echo().handle(c);
                // the reply's grant delivered and the calls it lets out arrived (delivery is asynchronous)
                assertTrue(p.settle());
            }
            for (var f : fs) {
                assertArrayEquals(new byte[4], results(f.get(5, TimeUnit.SECONDS)));
            }
            assertEquals(4, p.server().peerCallHighWater());
            assertEquals(0, p.server().stats().creditViolations());
            assertTrue(p.client().isOpen() && p.server().isOpen());
        }
    }

    /**
     * The wire under two sending threads: replies sent from an executor while the caller
     * sends calls and polls for replies (receives taken from a ring the other side posts
     * to, completions queued by both). Every call gets its own reply exactly once and
     * every receive comes back.
     */
    @Test
    void sendsFromTwoThreadsAtOnceAreEachDeliveredOnce() throws Exception {
        java.util.concurrent.ExecutorService replier = java.util.concurrent.Executors.newSingleThreadExecutor();
        CallHandler h = c -> {
            if (c.xid() % 2 == 0) {
                echo().handle(c); // at once, from the delivery of the call
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
