package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * An in-memory pair driven from several threads at once, as a NIC is: a Send completes
 * locally and the peer takes it on its own completion context, never on the sender's
 * stack under the sender's locks, so threads calling in both directions at once cannot
 * take the two sides' locks in opposite orders.
 */
class InMemoryConcurrencyTest {
    private static final int CALLS = 2_000;
    private static final int THREADS = 4;

    @Test
    void callsInBothDirectionsFromSeveralThreadsAtOnceAllComplete() throws Exception {
        RpcRdmaOptions o = RpcRdmaOptions.builder().backwardCredits(4).build();
        // both sides answer on threads of their own, as a handler that hands its calls to
        // an executor does: their replies are Sends from threads that hold no other lock
        ExecutorService answering = Executors.newFixedThreadPool(2);
        CallHandler late = call -> answering.execute(() -> echo().handle(call));
        InMemoryPair p = InMemoryPair.open(o, late);
        p.client().enableBackchannel(late).get(5, TimeUnit.SECONDS);
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<Integer>> callers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Connection c = t % 2 == 0 ? p.client() : p.server(); // forward and backward calls
            int tag = t + 1;
            CompletableFuture<Integer> f = new CompletableFuture<>();
            Thread th = new Thread(() -> {
                try {
                    f.complete(calls(c, start, tag));
                } catch (Throwable e) {
                    f.completeExceptionally(e);
                }
            }, "caller-" + tag);
            th.setDaemon(true);
            th.start();
            callers.add(f);
        }
        start.countDown();
        try {
            for (CompletableFuture<Integer> f : callers) {
                assertEquals(CALLS, f.get(30, TimeUnit.SECONDS), "calls answered");
            }
        } catch (TimeoutException e) {
            // not closed: closing takes the locks the stuck threads hold
            answering.shutdownNow();
            fail("calls in both directions from " + THREADS + " threads did not complete within 30 s:\n"
                    + threadDump());
        }
        try (p) {
            assertEquals(0, p.client().outstandingCalls(), "the client's XID slots are all back");
            assertEquals(0, p.server().outstandingCalls(), "the server's XID slots are all back");
        } finally {
            answering.shutdownNow();
        }
    }

    /** {@link #CALLS} blocking calls on {@code c}, each checked for its own echoed bytes; how many were answered. */
    private static int calls(Connection c, CountDownLatch start, int tag) {
        try {
            start.await();
            for (int i = 0; i < CALLS; i++) {
                byte[] args = {(byte) tag, (byte) (i >>> 16), (byte) (i >>> 8), (byte) i};
                assertArrayEquals(args, results(c.call(callMsg(tag << 24 | i, 1, args)).join()));
            }
            return CALLS;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every thread's state and stack: where a lock-order inversion shows (both threads BLOCKED in the transport). */
    static String threadDump() {
        StringBuilder b = new StringBuilder();
        Thread.getAllStackTraces().forEach((t, s) -> {
            b.append('"').append(t.getName()).append("\" ").append(t.getState()).append('\n');
            for (int i = 0; i < Math.min(s.length, 24); i++) {
                b.append("    at ").append(s[i]).append('\n');
            }
        });
        return b.toString();
    }
}
