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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.Xdr;

/**
 * The chaos test, on every link: several threads make forward calls with random timeouts,
 * cancellations and retry flags while the server makes backward calls, answers late, and
 * drops the connection at random; the client connects again and carries over what it
 * should. At the end every call has ended exactly once with its own reply or an allowed
 * error (a timeout, a loss, a cancellation), the last connection's buffers, credits and
 * XID slots are all back on both sides, and it still works both ways. The pace is the
 * link's (a subclass's knobs): a software device under emulation runs fewer, slower calls.
 */
abstract class ChaosBehaviour {
    abstract LinkFixture link();

    /** How long the callers run. */
    abstract long runMillis();

    /** Forward callers. */
    abstract int callers();

    /** A call's random timeout is {@code minTimeoutMillis} plus up to this (or none, one time in three). */
    abstract int timeoutSpreadMillis();

    abstract int minTimeoutMillis();

    /** A backward call's timeout is {@code backwardMinTimeoutMillis} plus up to {@code backwardTimeoutSpreadMillis}. */
    abstract int backwardMinTimeoutMillis();

    abstract int backwardTimeoutSpreadMillis();

    /** The server drops the connection once in this many calls. */
    abstract int dropOneIn();

    /** A forward caller waits this long for a call, so calls spread out (once in {@link #paceOneIn} calls). */
    abstract long paceMillis();

    abstract int paceOneIn();

    /** The backward caller waits this long for each of its calls. */
    abstract long backwardPaceMillis();

    /** More than this many calls must have been answered. */
    abstract int minReplies();

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
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (!(c instanceof CallTimeoutException || c instanceof ConnectionLostException)) {
                wrong.add("unexpected failure: " + c);
            }
            return c.getClass().getSimpleName();
        } catch (CancellationException e) {
            return "cancelled";
        } catch (TimeoutException e) {
            wrong.add("a call never completed: " + f);
            return "never completed";
        }
    }

    @Test
    void callsTimeoutsCancellationsBackwardCallsAndDropsLeaveNothingBehind() throws Exception {
        ScheduledExecutorService later = Executors.newScheduledThreadPool(2);
        AtomicLong drops = new AtomicLong();
        AtomicLong served = new AtomicLong();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(runMillis());
        // set once the client exists: the handler runs only for its calls
        java.util.concurrent.atomic.AtomicReference<LinkFixture.Reconnecting> ends =
                new java.util.concurrent.atomic.AtomicReference<>();
        CallHandler serverHandler = call -> {
            served.incrementAndGet();
            if (System.nanoTime() < end && ThreadLocalRandom.current().nextInt(dropOneIn()) == 0) {
                drops.incrementAndGet();
                Connection c = call.connection();
                later.execute(() -> ends.get().drop(c)); // the server drops the connection
            }
            later.schedule(() -> echo().handle(call), ThreadLocalRandom.current().nextInt(4), TimeUnit.MILLISECONDS);
        };
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).credits(8).backwardCredits(4)
                .reconnectAttempts(50).backchannelWaitMillis(60_000).build();
        Random seeds = new Random(Long.getLong("rpcrdma.chaos.seed", 20261123));
        LinkFixture.Reconnecting client = link().openReconnecting(o, serverHandler, echo());
        ends.set(client);
        try {
            List<CompletableFuture<ReceivedMessage>> all = new CopyOnWriteArrayList<>();
            List<String> wrong = new CopyOnWriteArrayList<>();
            Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
            AtomicInteger xids = new AtomicInteger(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < callers(); t++) {
                Random rnd = new Random(seeds.nextLong());
                threads.add(Thread.ofPlatform().name("chaos-caller-" + t).start(() -> {
                    while (System.nanoTime() < end) {
                        int xid = xids.getAndIncrement();
                        long token = rnd.nextLong();
                        long timeout = rnd.nextInt(3) == 0 ? 0 : minTimeoutMillis() + rnd.nextInt(timeoutSpreadMillis());
                        CompletableFuture<ReceivedMessage> f = client.call(callMsg(xid, 1, tokenArgs(token)),
                                CallOptions.timeout(timeout, TimeUnit.MILLISECONDS).withRetry(rnd.nextBoolean()));
                        all.add(f);
                        judgeWhenDone(f, xid, token, wrong);
                        if (rnd.nextInt(10) == 0) {
                            later.schedule(() -> f.cancel(false), rnd.nextInt(5), TimeUnit.MILLISECONDS);
                        }
                        if (rnd.nextInt(paceOneIn()) == 0) {
                            pace(f, paceMillis());
                        }
                    }
                }));
            }
            Random brnd = new Random(seeds.nextLong());
            threads.add(Thread.ofPlatform().name("chaos-backward").start(() -> {
                while (System.nanoTime() < end) {
                    CompletableFuture<ReceivedMessage> f = client.callBack(callMsg(xids.getAndIncrement(), 9,
                            new byte[4]), CallOptions.timeout(backwardMinTimeoutMillis()
                                    + brnd.nextInt(backwardTimeoutSpreadMillis()), TimeUnit.MILLISECONDS));
                    all.add(f);
                    f.thenAccept(ReceivedMessage::release);
                    pace(f, backwardPaceMillis());
                }
            }));
            for (Thread t : threads) {
                t.join(runMillis() + 60_000);
                assertTrue(!t.isAlive(), t.getName() + " is stuck");
            }

            // Every call ends, exactly once, with its own reply or an allowed error.
            for (CompletableFuture<ReceivedMessage> f : all) {
                outcomes.computeIfAbsent(outcome(f, 60_000, wrong), k -> new AtomicInteger()).incrementAndGet();
            }
            String summary = "outcomes " + outcomes + ", " + served.get() + " calls served, " + drops.get()
                    + " drops, " + client.reconnects() + " reconnects";
            assertEquals(List.of(), wrong, summary);

            // The connection as it is when it settles, not as it was when the callers stopped: a
            // drop decided just before the end may land after that, and the client then connects
            // again (its backchannel is enabled); it must end open and idle either way.
            assertTrue(link().await(() -> {
                Connection c = client.client();
                Connection s = client.server();
                return c.isOpen() && c.outstandingCalls() == 0 && c.heldReceives() == 0
                        && c.peerOutstandingCalls() == 0 && s != null && s.isOpen() && s.outstandingCalls() == 0
                        && s.heldReceives() == 0 && s.peerOutstandingCalls() == 0;
            }), () -> "the last connection did not settle: client " + state(client.client()) + ", server "
                    + state(client.server()) + "; " + summary);
            Connection c = client.client();
            Connection s = client.server();
            System.out.println("chaos (" + link().kind() + "): " + summary + ", last client connection " + c.stats());
            assertEquals(0, c.waitingCalls());
            assertEquals(0, c.abandonedCalls());
            assertTrue(c.postedReceives() >= 4, "backward credits stay posted");
            assertTrue(s.postedReceives() >= 8, "forward credits stay posted");
            assertTrue(outcomes.getOrDefault("reply", new AtomicInteger()).get() > minReplies(), summary);
            assertTrue(client.reconnects() > 0 && outcomes.containsKey("cancelled")
                    && outcomes.containsKey("CallTimeoutException"), "the chaos must have happened: " + summary);
            // A settled connection still works, in both directions.
            long patience = link().patienceMillis();
            ConnectionLoopbackTest.results(client.call(callMsg(-1, 1, new byte[8]), CallOptions.DEFAULT)
                    .get(patience, TimeUnit.MILLISECONDS));
            client.callBack(callMsg(-2, 9, new byte[4]), CallOptions.DEFAULT).get(patience, TimeUnit.MILLISECONDS)
                    .release();
        } finally {
            later.shutdownNow();
            client.close();
        }
    }

    private static String state(Connection c) {
        return c == null ? "none" : "open " + c.isOpen() + ", outstanding " + c.outstandingCalls() + ", held "
                + c.heldReceives() + ", peer outstanding " + c.peerOutstandingCalls();
    }
}
