package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.rpc.CallRequest;
import org.rpcrdma.xdr.Xdr;

/**
 * The chaos test on the host: several threads make forward calls with random
 * timeouts, cancellations and retry flags while the server makes backward calls, answers
 * late, and drops the connection at random; the client "reconnects" (a new in-memory pair
 * takes the calls the lost one handed over, as {@link RpcRdmaClient} does). At the end
 * every call has ended exactly once with its own reply or an allowed error, and the last
 * connection's buffers, credits and XID slots are all back.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ChaosTest {
    private static final long RUN_MILLIS = Long.getLong("rpcrdma.chaos.millis", 8000);
    private static final int CALLERS = 4;

    /** A client that replaces its connection when the peer drops it. */
    private final class Reconnecting {
        final Object lock = new Object();
        final List<LoopbackPair> all = new CopyOnWriteArrayList<>();
        final AtomicInteger reconnects = new AtomicInteger();
        volatile LoopbackPair current = connect();

        LoopbackPair connect() {
            LoopbackPair p = new LoopbackPair(1024, 8, 4, 8, 0);
            p.server.engine().handler(serverHandler);
            p.client.serveBackwardCalls(echo());
            p.server.markBackchannelReady();
            p.client.engine().orphanSink(os -> adopt(p, os));
            all.add(p);
            return p;
        }

        /** Runs on whatever thread saw the loss, holding no transport lock. */
        void adopt(LoopbackPair lost, List<CallRequest> orphans) {
            LoopbackPair next;
            synchronized (lock) {
                if (current == lost) {
                    current = connect();
                    reconnects.incrementAndGet();
                }
                next = current;
            }
            orphans.forEach(next.client.engine()::submit);
        }
    }

    private final Random seeds = new Random(Long.getLong("rpcrdma.chaos.seed", 20261123));
    private final ScheduledExecutorService later = Executors.newScheduledThreadPool(2);
    private volatile boolean chaos = true;
    private final AtomicLong drops = new AtomicLong();
    private final AtomicLong served = new AtomicLong();
    private final CallHandler serverHandler = call -> {
        served.incrementAndGet();
        long delay = ThreadLocalRandomHolder.next(4);
        if (chaos && ThreadLocalRandomHolder.next(300) == 0) {
            drops.incrementAndGet();
            ((LoopbackPair.Side) sideOf(call.connection())).disconnect();
        }
        later.schedule(() -> echo().handle(call), delay, TimeUnit.MILLISECONDS);
    };
    private Reconnecting client;

    private Object sideOf(Connection server) {
        for (LoopbackPair p : client.all) {
            if (p.server == server) {
                return p.serverSide;
            }
        }
        throw new AssertionError("unknown connection " + server);
    }

    private static final class ThreadLocalRandomHolder {
        static int next(int bound) {
            return java.util.concurrent.ThreadLocalRandom.current().nextInt(bound);
        }
    }

    /** One call and what its reply must carry. */
    private record Issued(CompletableFuture<ReceivedMessage> future, long token) {}

    /** A call's arguments: an 8-byte token its echoed reply must carry back. */
    static byte[] tokenArgs(long token) {
        byte[] args = new byte[8];
        Xdr.putInt(MemorySegment.ofArray(args), 0, (int) (token >>> 32));
        Xdr.putInt(MemorySegment.ofArray(args), 4, (int) token);
        return args;
    }

    /** Judges and releases the echoed reply as it comes (a held reply holds a receive buffer). */
    static void judgeWhenDone(CompletableFuture<ReceivedMessage> f, int xid, long token, List<String> wrong) {
        f.whenComplete((m, e) -> {
            if (m != null) {
                try (m) {
                    MemorySegment b = m.bytes();
                    long got = (long) Xdr.getInt(b, 24) << 32 | (Xdr.getInt(b, 28) & 0xffffffffL);
                    if (got != token) {
                        wrong.add("call 0x" + Integer.toHexString(xid) + " got another call's reply");
                    }
                }
            }
        });
    }

    /** Waits a little for {@code f}, so calls spread out; its outcome is judged at the end. */
    static void pace(CompletableFuture<?> f, long millis) {
        try {
            f.get(millis, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // judged at the end
        }
    }

    /** How {@code f} ended: "reply", "cancelled" or the exception's name; other than timeout or loss is wrong. */
    static String outcome(CompletableFuture<ReceivedMessage> f, long waitMillis, List<String> wrong)
            throws InterruptedException {
        try {
            f.get(waitMillis, TimeUnit.MILLISECONDS); // a reply was judged and released when it completed
            return "reply";
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = e.getCause();
            if (!(c instanceof CallTimeoutException || c instanceof ConnectionLostException)) {
                wrong.add("unexpected failure: " + c);
            }
            return c.getClass().getSimpleName();
        } catch (CancellationException e) {
            return "cancelled";
        } catch (java.util.concurrent.TimeoutException e) {
            wrong.add("a call never completed: " + f);
            return "never completed";
        }
    }

    @Test
    void callsTimeoutsCancellationsBackwardCallsAndDropsLeaveNothingBehind() throws Exception {
        client = new Reconnecting();
        List<Issued> issued = new CopyOnWriteArrayList<>();
        List<CompletableFuture<ReceivedMessage>> backward = new CopyOnWriteArrayList<>();
        Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        List<String> wrong = new CopyOnWriteArrayList<>();
        AtomicInteger xids = new AtomicInteger(1);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < CALLERS; t++) {
            Random rnd = new Random(seeds.nextLong());
            threads.add(Thread.ofPlatform().name("chaos-caller-" + t).start(() -> {
                while (System.nanoTime() < end) {
                    int xid = xids.getAndIncrement();
                    long token = rnd.nextLong();
                    byte[] args = tokenArgs(token);
                    long timeoutNanos = rnd.nextInt(3) == 0 ? 0 : TimeUnit.MILLISECONDS.toNanos(1 + rnd.nextInt(30));
                    CompletableFuture<ReceivedMessage> f = client.current.client.call(callMsg(xid, 1, args),
                            CallOptions.timeout(timeoutNanos, TimeUnit.NANOSECONDS).withRetry(rnd.nextBoolean()));
                    issued.add(new Issued(f, token));
                    judgeWhenDone(f, xid, token, wrong);
                    if (rnd.nextInt(10) == 0) {
                        later.schedule(() -> f.cancel(false), rnd.nextInt(5), TimeUnit.MILLISECONDS);
                    }
                    if (rnd.nextInt(4) == 0) {
                        pace(f, 50);
                    }
                }
            }));
        }
        Thread backwardCaller = Thread.ofPlatform().name("chaos-backward").start(() -> {
            Random rnd = new Random(seeds.nextLong());
            while (System.nanoTime() < end) {
                Connection s = client.current.server;
                if (!s.isOpen()) {
                    Thread.onSpinWait();
                    continue;
                }
                CompletableFuture<ReceivedMessage> f = s.call(callMsg(xids.getAndIncrement(), 9, new byte[4]),
                        CallOptions.timeout(1 + rnd.nextInt(30), TimeUnit.MILLISECONDS));
                backward.add(f);
                f.thenAccept(ReceivedMessage::release);
                pace(f, 50);
            }
        });
        for (Thread t : threads) {
            t.join(RUN_MILLIS + 30_000);
            assertTrue(!t.isAlive(), t.getName() + " is stuck");
        }
        backwardCaller.join(30_000);
        assertTrue(!backwardCaller.isAlive(), "the backward caller is stuck");
        chaos = false;

        // Every call ends, exactly once, with its own reply or an allowed error.
        for (Issued i : issued) {
            outcomes.computeIfAbsent(outcome(i.future(), 10_000, wrong), k -> new AtomicInteger()).incrementAndGet();
        }
        for (CompletableFuture<ReceivedMessage> f : backward) {
            outcome(f, 10_000, wrong);
        }

        // The last connection settles back to its initial state once late replies are in.
        LoopbackPair p = client.current;
        assertTrue(CoreDefectsTest.await(() -> p.client.outstandingCalls() == 0 && p.server.outstandingCalls() == 0
                && p.client.peerOutstandingCalls() == 0 && p.server.peerOutstandingCalls() == 0
                && p.client.heldReceives() == 0 && p.server.heldReceives() == 0, 10_000),
                () -> "not settled: client outstanding " + p.client.outstandingCalls() + " held " + p.client.heldReceives()
                        + ", server outstanding " + p.server.outstandingCalls() + " held " + p.server.heldReceives()
                        + " peerOutstanding " + p.server.peerOutstandingCalls());
        String summary = "outcomes " + outcomes + ", " + backward.size() + " backward calls, " + served.get() + " calls served, " + drops.get() + " drops, "
                + client.reconnects.get() + " reconnects, client stats " + p.client.stats();
        System.out.println("chaos: " + summary);
        assertEquals(List.of(), wrong, summary);
        assertTrue(p.client.isOpen() && p.server.isOpen());
        assertEquals(0, p.client.waitingCalls());
        assertEquals(0, p.client.abandonedCalls());
        assertTrue(p.client.postedReceives() >= 4, "backward credits stay posted");
        assertTrue(p.server.postedReceives() >= 8, "forward credits stay posted");
        assertTrue(outcomes.getOrDefault("reply", new AtomicInteger()).get() > 100, summary);
        assertTrue(client.reconnects.get() > 0 && outcomes.containsKey("cancelled")
                && outcomes.containsKey("CallTimeoutException"), "the chaos must have happened: " + summary);
        // A settled connection still works, in both directions.
        ConnectionLoopbackTest.results(p.client.call(callMsg(-1, 1, new byte[8])).get(5, TimeUnit.SECONDS));
        p.server.call(callMsg(-1, 9, new byte[4])).get(5, TimeUnit.SECONDS).release();
        later.shutdownNow();
        for (LoopbackPair q : client.all) {
            q.close();
        }
    }
}
