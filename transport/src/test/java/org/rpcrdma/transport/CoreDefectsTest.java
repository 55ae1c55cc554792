package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.pair;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.endpoint.ConnectionAssembly;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.BackchannelControl;
import org.rpcrdma.transport.rpc.CallRequest;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ConnectionParams;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * Defects of the connection core found in review (abandoned calls and the credit window,
 * RDMA_ERROR only from a responder, replies the handler cannot send, lost calls handed over
 * once, no user code under transport locks, stray replies, a refused backchannel, malformed
 * headers), each pinned by a test that asserts the wanted behaviour. Every wait is bounded,
 * so a hang fails in seconds.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CoreDefectsTest {

    // ---------------------------------------------------------------- helpers

    /**
     * True if some thread is blocked entering a monitor inside the connection's engine (the
     * completion context of an in-memory side may be its own thread or a caller polling for
     * it, so the test asks whether any thread waits there, not whether one named thread does).
     */
    static boolean blockedInEngine() {
        for (var e : Thread.getAllStackTraces().entrySet()) {
            if (e.getKey().getState() == Thread.State.BLOCKED && java.util.Arrays.stream(e.getValue())
                    .anyMatch(f -> f.getClassName().startsWith("org.rpcrdma.transport.rpc."))) {
                return true;
            }
        }
        return false;
    }

    /** Polls {@code c} until true or {@code timeoutMs} passed; returns its last value. */
    static boolean await(BooleanSupplier c, long timeoutMs) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!c.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                return c.getAsBoolean();
            }
            LockSupport.parkNanos(1_000_000);
        }
        return true;
    }

    /** Collects several observations and fails once with all of them. */
    static final class Checks {
        final List<String> failures = new ArrayList<>();

        void check(boolean ok, String what) {
            if (!ok) {
                failures.add(what);
            }
        }

        void done() {
            if (!failures.isEmpty()) {
                fail(failures.size() + " wanted behaviour(s) not met:\n  - " + String.join("\n  - ", failures));
            }
        }
    }

    /** How a future ended within {@code ms}: "value", "exception: ...", or "not done". */
    static String outcome(CompletableFuture<?> f, long ms) {
        try {
            Object v = f.get(ms, TimeUnit.MILLISECONDS);
            if (v instanceof ReceivedMessage m) {
                m.release();
            }
            return "value";
        } catch (ExecutionException e) {
            return "exception: " + e.getCause();
        } catch (java.util.concurrent.CancellationException e) {
            return "cancelled";
        } catch (TimeoutException e) {
            return "not done";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    static Throwable failureOf(CompletableFuture<?> f, long ms) {
        try {
            Object v = f.get(ms, TimeUnit.MILLISECONDS);
            if (v instanceof ReceivedMessage m) {
                m.release();
            }
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return null;
        }
    }

    /** An accepted RPC reply {xid, REPLY, MSG_ACCEPTED, AUTH_NONE/0, acceptStat} plus {@code extra} zero bytes. */
    static MemorySegment acceptedReply(int xid, int acceptStat, int extra) {
        MemorySegment r = MemorySegment.ofArray(new byte[24 + extra]);
        int[] w = {xid, OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, acceptStat};
        for (int i = 0; i < w.length; i++) {
            Xdr.putInt(r, i * 4L, w[i]);
        }
        return r;
    }

    /** RDMA_MSG (no chunks) with {@code rdmaXid}, {@code credit}, then {@code rpc}. */
    static MemorySegment rdmaMsg(int rdmaXid, int credit, MemorySegment rpc) {
        MemorySegment raw = MemorySegment.ofArray(new byte[RpcRdma.INLINE_MSG_HEADER_BYTES + (int) rpc.byteSize()]);
        int h = RpcRdmaEncoder.encodeInlineMsg(raw, 0, rdmaXid, credit);
        MemorySegment.copy(rpc, 0, raw, h, rpc.byteSize());
        return raw;
    }

    /** Receive buffers the connection holds (neither posted nor free). */
    static int heldReceives(Connection c) {
        return c.heldReceives();
    }

    /**
     * The simple class names of the transport's objects (classes of {@code org.rpcrdma}) whose
     * monitor the current thread holds, as the JVM reports them: the connection ("Connection"),
     * every part of its engine however deep, and a test's own link. The engine's parts take no
     * j.u.c lock (the completion poller's lock is held by design while completions, and so
     * user code, run). {@link ThreadAllocation}'s way into the management API: the transport
     * module reads no management module.
     */
    static List<String> locksHeld() {
        if (Thread.currentThread().isVirtual()) {
            // the management API reports no virtual thread (getThreadInfo gives null)
            throw new IllegalStateException("locksHeld(Connection) on a virtual thread");
        }
        List<String> held = new ArrayList<>();
        try {
            Class<?> threadMx = Class.forName("java.lang.management.ThreadMXBean");
            Object threads = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean")
                    .invoke(null);
            Object self = ((Object[]) threadMx.getMethod("getThreadInfo", long[].class, boolean.class, boolean.class)
                    .invoke(threads, new long[] {Thread.currentThread().threadId()}, true, false))[0];
            Method className = Class.forName("java.lang.management.LockInfo").getMethod("getClassName");
            for (Object m : (Object[]) self.getClass().getMethod("getLockedMonitors").invoke(self)) {
                String name = (String) className.invoke(m);
                if (name.startsWith("org.rpcrdma.")) {
                    held.add(name.substring(name.lastIndexOf('.') + 1));
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("the thread's locked monitors", e);
        }
        return held;
    }

    /**
     * As {@link #locksHeld()}; on a virtual thread (which the management API does not
     * report: the link's failure path runs owner code on one) the monitors of {@code c}'s
     * parts that the thread holds, by {@link Thread#holdsLock}.
     */
    static List<String> locksHeld(Connection c) {
        if (!Thread.currentThread().isVirtual()) {
            return locksHeld();
        }
        List<String> held = new ArrayList<>();
        var e = c.engine();
        for (Object part : new Object[] {c, e, e.requester(), e.responder(), e.receives(), e.sends(), e.link()}) {
            if (Thread.holdsLock(part)) {
                held.add(part.getClass().getSimpleName());
            }
        }
        return held;
    }

    /**
     * A hand-driven peer: a client {@link Connection} on a {@link Link} that records what
     * the client sends and lets the test deliver raw bytes to it on the calling thread.
     */
    static final class FakePeer implements Link {
        final Connection conn;
        final ArrayDeque<Integer> posted = new ArrayDeque<>();
        final List<byte[]> sent = new CopyOnWriteArrayList<>();
        final ArrayDeque<Integer> completions = new ArrayDeque<>();
        volatile boolean failSends;

        FakePeer(int credits, int backward) {
            this(credits, backward, RpcRdmaOptions.defaults().silenceTimeoutMillis());
        }

        /** {@code silenceMillis}: the client's silence period (RpcRdmaOptions.Builder#silenceTimeoutMillis). */
        FakePeer(int credits, int backward, long silenceMillis) {
            Arena arena = Arena.ofAuto();
            int recv = credits + backward + 8;
            StatsCounters stats = new StatsCounters();
            conn = new ConnectionEngine("fake-client", new ConnectionParams(true, 1024, 1024, credits, backward, false, 4, 0)
                    .withSilenceMillis(silenceMillis),
                    this, ConnectionAssembly.receivePool(this, arena.allocate(recv * 1024L), recv, 1024, 4, stats), 16,
                    arena.allocate(16L * 1024), stats).connection();
            conn.engine().start();
        }

        @Override
        public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {
            if (failSends) {
                throw new RpcRdmaException("test: ibv_post_send failed");
            }
            sent.add(buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
            if (signalled) {
                synchronized (completions) {
                    completions.add(slot);
                }
            }
        }

        @Override
        public synchronized void postReceives(int[] slots, int count) {
            for (int i = 0; i < count; i++) {
                posted.add(slots[i]);
            }
        }

        @Override
        public void disconnect() {
        }

        /** Delivers {@code msg} into a posted receive of the client, on this thread. */
        void deliver(MemorySegment msg) {
            while (true) {
                Integer s;
                synchronized (completions) {
                    s = completions.poll();
                }
                if (s == null) {
                    break;
                }
                conn.engine().sendCompleted(s);
            }
            Integer slot;
            synchronized (this) {
                slot = posted.poll();
            }
            assertTrue(slot != null, "test setup: client has no receive posted");
            MemorySegment.copy(msg, 0, conn.engine().receiveBuffer(slot), 0, msg.byteSize());
            conn.engine().received(slot, (int) msg.byteSize());
        }

        /** The bytes of the last Send the client posted (transport header included). */
        MemorySegment lastSent() {
            return MemorySegment.ofArray(sent.get(sent.size() - 1));
        }
    }

    // -------------------------- abandoned calls and the credit window

    /** A server handler that echoes, or holds calls in {@code held} while {@code hold} is not 0. */
    static CallHandler echoOrHold(AtomicInteger hold, ConcurrentLinkedQueue<IncomingCall> held) {
        CallHandler echo = echo();
        return c -> {
            if (hold.get() != 0) {
                held.add(c);
            } else {
                echo.handle(c);
            }
        };
    }

    /**
     * Abandoned calls (cancelled, or timed out by orTimeout) answered late must not leak
     * the late reply's receive buffer: after 30 of them a fresh call still completes and
     * no receive buffer is held.
     */
    @Test
    void abandonedCallsAnsweredLateDoNotWedgeTheConnection() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        AtomicInteger hold = new AtomicInteger(0);
        CallHandler echo = echo();
        try (InMemoryPair p = pair(4, 0, echoOrHold(hold, held))) {
            results(p.client().call(callMsg(1, 1, new byte[4])).get(5, TimeUnit.SECONDS)); // window 4
            hold.set(1);
            int rounds = 30;
            for (int i = 0; i < rounds; i++) {
                CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(100 + i, 1, new byte[4]));
                final int round = i;
                assertTrue(await(() -> !held.isEmpty(), 5000), () -> "round " + round + ": the call never reached the"
                        + " server (client wedged): receiveBufferWaits=" + p.client().stats().receiveBufferWaits()
                        + " heldReceives=" + heldReceives(p.client()) + " posted=" + p.client().postedReceives()
                        + " outstanding=" + p.client().outstandingCalls() + " open=" + p.client().isOpen());
                if (i % 2 == 0) {
                    f.cancel(true);
                } else {
                    f.orTimeout(10, TimeUnit.MILLISECONDS);
                    assertTrue(await(f::isDone, 5000));
                }
                long repliesBefore = p.client().stats().repliesReceived();
                echo.handle(held.poll()); // the late answer
                assertTrue(await(() -> p.client().stats().repliesReceived() > repliesBefore, 5000),
                        "round " + i + ": late reply not received");
                p.settle();
            }
            hold.set(0);
            CompletableFuture<ReceivedMessage> fresh = p.client().call(callMsg(999, 1, new byte[4]));
            assertEquals("value", outcome(fresh, 5000), "a fresh call after " + rounds + " abandoned calls");
            p.settle();
            assertEquals(0, heldReceives(p.client()), "receive buffers still held after every reply was released");
            assertTrue(p.client().isOpen());
        }
    }

    /** Every credit taken by abandoned, never-answered calls: the connection must be declared dead. */
    @Test
    void creditsAllAbandonedAndUnansweredDeclareTheConnectionDead() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        AtomicInteger hold = new AtomicInteger(0);
        CallHandler echo = echo();
        try (InMemoryPair p = pair(4, 0, echoOrHold(hold, held))) {
            results(p.client().call(callMsg(1, 1, new byte[4])).get(5, TimeUnit.SECONDS)); // window 4
            hold.set(1);
            List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                fs.add(p.client().call(callMsg(10 + i, 1, new byte[4])));
            }
            assertTrue(await(() -> held.size() == 4, 5000), "4 calls reached the server");
            fs.forEach(f -> f.cancel(true));
            assertTrue(await(() -> !p.client().isOpen(), 10_000),
                    "client still open 10 s after all 4 credits were abandoned: ownCallWindow=" + p.client().ownCallWindow()
                            + " outstandingCalls=" + p.client().outstandingCalls());
            CompletableFuture<ReceivedMessage> after = p.client().call(callMsg(50, 1, new byte[4]));
            assertTrue(outcome(after, 5000).startsWith("exception"), "a call on the dead connection fails promptly");
        }
    }

    // ------------------------------- RDMA_ERROR only from a responder

    /**
     * A malformed reply to the client's forward call 5 (rdma_xid 5, RPC xid 6) must fail
     * that call; the client, as requester, must not answer with RDMA_ERROR (the server would
     * take it for an answer to its own backward call 5).
     */
    @Test
    void requesterNeverSendsRdmaError() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> serverHeld = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<IncomingCall> clientHeld = new ConcurrentLinkedQueue<>();
        try (InMemoryPair p = pair(8, 4, serverHeld::add)) {
            p.client().enableBackchannel(clientHeld::add).get(5, TimeUnit.SECONDS);
            CompletableFuture<ReceivedMessage> backward = p.server().call(callMsg(5, 200, new byte[4]));
            CompletableFuture<ReceivedMessage> forward = p.client().call(callMsg(5, 100, new byte[4]));
            assertTrue(await(() -> serverHeld.size() == 1 && clientHeld.size() == 1, 5000), "both calls 5 outstanding");

            MemorySegment rpc = acceptedReply(6, OncRpc.SUCCESS, 0); // RPC xid 6 != rdma_xid 5: XID_MISMATCH
            MemorySegment raw = rdmaMsg(5, 8, rpc);
            RawAccess.send(p.server(), raw);

            String fwd = outcome(forward, 5000);
            p.settle();
            Checks c = new Checks();
            c.check(fwd.startsWith("exception"), "client's forward call 5 fails within 5 s (was: " + fwd + ")");
            long errs = p.client().stats().errChunkSent() + p.client().stats().errVersSent();
            c.check(errs == 0, "client (a requester) sends no RDMA_ERROR (errChunkSent+errVersSent=" + errs + ")");
            c.check(!backward.isDone(), "server's backward call 5 still pending (was: " + outcome(backward, 0) + ")");
            c.check(p.server().stats().rdmaErrorsReceived() == 0,
                    "server received no RDMA_ERROR (rdmaErrorsReceived=" + p.server().stats().rdmaErrorsReceived() + ")");
            c.done();
        }
    }

    // -------------------------------- replies the handler cannot send

    @Test
    void oversizedReplyIsAnsweredAndAccountingStaysExact() throws Exception {
        unanswerableReply(true);
    }

    @Test
    void wrongXidReplyIsAnsweredAndAccountingStaysExact() throws Exception {
        unanswerableReply(false);
    }

    /**
     * The server handler's reply cannot be sent (too big for the inline threshold, or a
     * wrong XID): reply() throws, the peer is answered (RDMA_ERROR ERR_CHUNK) instead of
     * left hanging, and the responder's count of outstanding calls stays exact.
     */
    private void unanswerableReply(boolean oversized) throws Exception {
        final int n = 4;
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        AtomicReference<Throwable> replyThrew = new AtomicReference<>();
        CallHandler echo = echo();
        try (InMemoryPair p = pair(n, 0, c -> { })) {
            p.server().engine().handler(c -> {
                byte mode = c.message().bytes().get(ValueLayout.JAVA_BYTE, 40);
                switch (mode) {
                    case 'B' -> {
                        try {
                            if (oversized) {
                                c.reply(acceptedReply(c.xid(), OncRpc.SUCCESS, 2000)); // > 1024 inline
                            } else {
                                c.reply(acceptedReply(c.xid() + 1, OncRpc.SUCCESS, 4)); // wrong XID
                            }
                        } catch (RuntimeException e) {
                            replyThrew.set(e);
                        }
                    }
                    case 'H' -> held.add(c);
                    default -> echo.handle(c);
                }
            });
            results(p.client().call(callMsg(1, 1, new byte[4])).get(5, TimeUnit.SECONDS)); // window n
            CompletableFuture<ReceivedMessage> bad = p.client().call(callMsg(0x50, 1, new byte[] {'B', 0, 0, 0}));
            Checks c = new Checks();
            c.check(await(() -> replyThrew.get() != null, 5000), "the handler's reply() throws");
            Throwable t = failureOf(bad, 5000);
            c.check(t instanceof RdmaErrorException r && r.errorCode() == RpcRdma.ERR_CHUNK,
                    "the client's call fails within 5 s with RdmaErrorException ERR_CHUNK (was: "
                            + (t == null ? outcome(bad, 0) : t.toString()) + ")");

            // The accounting stays exact: 3 rounds of n calls held concurrently up to the grant.
            for (int round = 0; round < 3; round++) {
                List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    fs.add(p.client().call(callMsg(0x100 + round * n + i, 1, new byte[] {'H', 0, 0, 0})));
                }
                boolean all = await(() -> held.size() == n, 3000);
                c.check(all, "round " + round + ": all " + n + " calls held at the server at once (saw " + held.size()
                        + ", server open=" + p.server().isOpen() + ")");
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (System.nanoTime() < end && !fs.stream().allMatch(CompletableFuture::isDone)) {
                    IncomingCall ic;
                    while ((ic = held.poll()) != null) {
                        echo.handle(ic);
                    }
                    LockSupport.parkNanos(1_000_000);
                }
                for (var f : fs) {
                    String o = outcome(f, 0);
                    c.check(o.equals("value"), "round " + round + ": call completes with a reply (was: " + o + ")");
                }
                if (!p.client().isOpen()) {
                    break;
                }
            }
            p.settle();
            long violations = p.client().stats().creditViolations() + p.server().stats().creditViolations();
            c.check(violations == 0, "no creditViolations (was " + violations + ")");
            c.check(p.client().isOpen() && p.server().isOpen(), "both sides still open (client " + p.client().isOpen()
                    + ", server " + p.server().isOpen() + ")");
            c.check(p.server().peerCallHighWater() <= n, "server saw at most " + n + " calls (saw " + p.server().peerCallHighWater() + ")");
            c.done();
        }
    }

    // ------------------------------------ lost calls handed over once

    /**
     * A call waiting for credit is handed over (to the orphan sink) at most once, even when
     * the connection is lost while another thread releases a credit (before the split, failAll ignored
     * the result of credits.cancel(p)). The interleaving is forced: the test holds the
     * monitor that guards credits and waiting calls (the requester's) while the
     * client's completion thread, releasing the credit of a matched reply, blocks on it;
     * still holding it, the test declares the connection lost (as the CM event thread
     * would), then lets go.
     */
    @Test
    void callNeverHandedOverTwiceWhenLossRacesCreditRelease() throws Exception {
        List<String> problems = new ArrayList<>();
        int rounds = 0;
        int forced = 0;
        while (rounds < 5 && problems.isEmpty()) {
            rounds++;
            ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
            try (InMemoryPair p = pair(1, 0, held::add)) { // window 1
                Map<CompletableFuture<ReceivedMessage>, Integer> handed = Collections.synchronizedMap(new IdentityHashMap<>());
                List<String> roundProblems = Collections.synchronizedList(new ArrayList<>());
                RuntimeException taken = new RuntimeException("taken by the orphan sink");
                p.client().engine().orphanSink(os -> {
                    for (CallRequest o : os) {
                        int k = handed.merge(o.future(), 1, Integer::sum);
                        if (k > 1) {
                            roundProblems.add("call 0x" + Integer.toHexString(o.xid) + " handed over " + k + " times");
                        } else if (o.isDone()) {
                            roundProblems.add("call 0x" + Integer.toHexString(o.xid) + " handed over after completion");
                        }
                        o.fail(taken);
                    }
                });
                List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
                fs.add(p.client().call(callMsg(1, 1, new byte[4]))); // takes the credit
                assertTrue(await(() -> held.size() == 1, 5000));
                fs.add(p.client().call(callMsg(2, 1, new byte[4]))); // waits for credit
                fs.add(p.client().call(callMsg(3, 1, new byte[4]))); // waits for credit
                Object creditWaiters = p.client().engine().requester(); // its lock guards credits and waiting calls
                synchronized (creditWaiters) {
                    echo().handle(held.poll()); // reply to call 1: the client thread releases its credit to call 2
                    if (await(CoreDefectsTest::blockedInEngine, 2000)) {
                        forced++;
                    }
                    p.client().engine().onLinkLost(new RpcRdmaException("test: link lost")); // reentrant: we hold the monitor
                }
                p.settle();
                for (var f : fs) {
                    if (outcome(f, 5000).equals("not done")) {
                        roundProblems.add("a call never completed nor handed over");
                    }
                }
                if (!roundProblems.isEmpty()) {
                    problems.add("round " + rounds + ": " + roundProblems);
                }
            }
        }
        assertTrue(forced > 0, "test setup: the client thread never blocked inside the credit hand-off");
        assertTrue(problems.isEmpty(), "after " + rounds + " rounds (" + forced + " forced): " + problems);
    }

    /**
     * The same property under plain stress (public API only): several
     * threads submitting calls at window 2 while replies flow, the connection lost from
     * another thread at a random moment; bounded to about 10 s of rounds.
     */
    @Test
    void stressNoDoubleHandOver() throws Exception {
        java.util.concurrent.ExecutorService submitters = java.util.concurrent.Executors.newFixedThreadPool(3);
        List<String> problems = new ArrayList<>();
        int rounds = 0;
        java.util.Random rnd = new java.util.Random(42);
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline && problems.isEmpty()) {
                rounds++;
                try (InMemoryPair p = pair(2, 0, echo())) {
                    Map<CompletableFuture<ReceivedMessage>, Integer> handed = Collections.synchronizedMap(new IdentityHashMap<>());
                    List<String> roundProblems = Collections.synchronizedList(new ArrayList<>());
                    RuntimeException taken = new RuntimeException("taken by the orphan sink");
                    p.client().engine().orphanSink(os -> {
                        for (CallRequest o : os) {
                            int k = handed.merge(o.future(), 1, Integer::sum);
                            if (k > 1) {
                                roundProblems.add("call 0x" + Integer.toHexString(o.xid) + " handed over " + k + " times");
                            } else if (o.isDone()) {
                                roundProblems.add("call 0x" + Integer.toHexString(o.xid) + " handed over after completion");
                            }
                            o.fail(taken);
                        }
                    });
                    List<CompletableFuture<ReceivedMessage>> fs = new CopyOnWriteArrayList<>();
                    AtomicInteger xids = new AtomicInteger(1);
                    List<java.util.concurrent.Future<?>> tasks = new ArrayList<>();
                    for (int t = 0; t < 3; t++) {
                        tasks.add(submitters.submit(() -> {
                            for (int i = 0; i < 100 && p.client().isOpen(); i++) {
                                CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(xids.getAndIncrement(), 1, new byte[4]));
                                fs.add(f);
                                f.thenAccept(ReceivedMessage::release);
                            }
                        }));
                    }
                    int target = 1 + rnd.nextInt(40);
                    await(() -> p.client().stats().repliesReceived() >= target, 2000);
                    p.client().engine().onLinkLost(new RpcRdmaException("test: link lost"));
                    for (var t : tasks) {
                        t.get(5, TimeUnit.SECONDS);
                    }
                    p.settle();
                    for (var f : fs) {
                        if (outcome(f, 5000).equals("not done")) {
                            roundProblems.add("a call never completed nor handed over");
                            break;
                        }
                    }
                    if (!roundProblems.isEmpty()) {
                        problems.add("round " + rounds + ": " + roundProblems);
                    }
                }
            }
        } finally {
            submitters.shutdownNow();
        }
        System.out.println("stressNoDoubleHandOver: " + rounds + " rounds");
        assertTrue(problems.isEmpty(), "after " + rounds + " rounds: " + problems);
    }

    // ----------------------------- no user code under transport locks

    /** What {@link #locksHeld} reports (so that a check built on it can fail). */
    @Test
    void locksHeldNamesTheMonitorsOfTheConnectionsPartsTheThreadHolds() {
        Connection c = new FakePeer(8, 0).conn;
        assertEquals(List.of(), locksHeld());
        synchronized (c.engine().requester()) {
            synchronized (c.engine().sends()) {
                assertEquals(Set.of("Requester", "SendQueue"), Set.copyOf(locksHeld()));
            }
        }
        assertEquals(List.of(), locksHeld());
    }

    /**
     * Future callbacks and the orphan sink (user / owner code) never run while the thread
     * holds one of the connection's locks. Here a Send fails while a credit-waiting call is
     * being sent from the completion path, so the connection is lost inside the send path.
     */
    @Test
    void noUserCodeUnderTransportLocks() throws Exception {
        FakePeer peer = new FakePeer(8, 0);
        Connection c = peer.conn;
        List<String> violations = new CopyOnWriteArrayList<>();
        c.engine().orphanSink(os -> {
            List<String> h = locksHeld(c);
            if (!h.isEmpty()) {
                violations.add("orphan sink ran holding " + h);
            }
        });
        CompletableFuture<ReceivedMessage> first = c.call(callMsg(1, 1, new byte[4]));
        peer.deliver(rdmaMsg(1, 4, acceptedReply(1, OncRpc.SUCCESS, 0))); // window 4
        results(first.get(1, TimeUnit.SECONDS));
        List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
        for (int xid = 2; xid <= 6; xid++) { // 2..5 sent, 6 waits for a credit
            CompletableFuture<ReceivedMessage> f = c.call(callMsg(xid, 1, new byte[4]));
            final int x = xid;
            f.whenComplete((r, t) -> {
                List<String> h = locksHeld(c);
                if (!h.isEmpty()) {
                    violations.add("callback of call " + x + " ran holding " + h);
                }
            });
            fs.add(f);
        }
        assertEquals(4, c.outstandingCalls());
        peer.failSends = true;
        // Reply to call 2: its credit goes to call 6, whose Send fails: the connection is lost.
        peer.deliver(rdmaMsg(2, 4, acceptedReply(2, OncRpc.SUCCESS, 0)));
        assertFalse(c.isOpen(), "test setup: the failed Send lost the connection");
        for (var f : fs) {
            assertTrue(await(f::isDone, 5000), "every call completed");
        }
        assertTrue(violations.isEmpty(), violations.toString());
    }

    // -------------------------------------------------- stray replies

    /** rdma_credit of a reply that matches no call is not a grant. */
    @Test
    void strayReplyDoesNotChangeTheWindow() throws Exception {
        try (InMemoryPair p = pair(8, 2, echo())) {
            results(p.client().call(callMsg(1, 1, new byte[4])).get(5, TimeUnit.SECONDS));
            assertEquals(8, p.client().ownCallWindow(), "test setup: window grew to 8");
            MemorySegment raw = rdmaMsg(99, 1, acceptedReply(99, OncRpc.SUCCESS, 0));
            RawAccess.send(p.server(), raw);
            assertEquals(1, p.client().stats().unmatchedForwardReplies(), "stray reply counted");
            assertEquals(8, p.client().ownCallWindow(), "a stray reply's rdma_credit must not change the window");
        }
    }

    // ------------------------------------------ a refused backchannel

    /** enableBackchannel fails when the server answers the control call with PROG_UNAVAIL (as Linux nfsd does). */
    @Test
    void enableBackchannelFailsWhenRefused() throws Exception {
        FakePeer peer = new FakePeer(4, 2);
        CompletableFuture<Void> f = peer.conn.enableBackchannel(call -> { });
        assertEquals(1, peer.sent.size(), "the control call was sent");
        MemorySegment sent = peer.lastSent();
        int rdmaXid = Xdr.getInt(sent, 0);
        int rpcXid = Xdr.getInt(sent, RpcRdma.INLINE_MSG_HEADER_BYTES);
        assertEquals(BackchannelControl.PROGRAM, Xdr.getInt(sent, RpcRdma.INLINE_MSG_HEADER_BYTES + 12));
        peer.deliver(rdmaMsg(rdmaXid, 4, acceptedReply(rpcXid, OncRpc.PROG_UNAVAIL, 0)));
        String o = outcome(f, 5000);
        assertTrue(o.startsWith("exception") && o.contains("PROG_UNAVAIL"),
                "enableBackchannel must fail naming PROG_UNAVAIL (was: " + o + ")");
    }

    /**
     * And when it answers MSG_DENIED (a client must never take a denied reply, whatever
     * follows its header, for success: RFC 5531 §9). The words after the reject_stat's
     * auth_stat are zeros, which read as an accepted SUCCESS if the reply_stat were ignored.
     */
    @Test
    void enableBackchannelFailsWhenDenied() throws Exception {
        FakePeer peer = new FakePeer(4, 2);
        CompletableFuture<Void> f = peer.conn.enableBackchannel(call -> { });
        MemorySegment sent = peer.lastSent();
        int rdmaXid = Xdr.getInt(sent, 0);
        int rpcXid = Xdr.getInt(sent, RpcRdma.INLINE_MSG_HEADER_BYTES);
        MemorySegment denied = MemorySegment.ofArray(new byte[32]);
        int[] w = {rpcXid, OncRpc.REPLY, OncRpc.MSG_DENIED, OncRpc.AUTH_ERROR, OncRpc.AUTH_TOOWEAK, 0, 0, 0};
        for (int i = 0; i < w.length; i++) {
            Xdr.putInt(denied, i * 4L, w[i]);
        }
        peer.deliver(rdmaMsg(rdmaXid, 4, denied));
        String o = outcome(f, 5000);
        assertTrue(o.startsWith("exception") && o.contains("MSG_DENIED"),
                "enableBackchannel must fail naming MSG_DENIED (was: " + o + ")");
    }

    // ---------------------------------------------- malformed headers

    /** What ConnectionLoopbackTest.malformedHeaderDropsConnection means but never asserts. */
    @Test
    void malformedHeaderDropsTheConnection() throws Exception {
        try (InMemoryPair p = pair(8, 0, echo())) {
            MemorySegment raw = MemorySegment.ofArray(new byte[6]);
            RawAccess.send(p.client(), raw);
            assertTrue(await(() -> !p.server().isOpen() && !p.client().isOpen(), 5000),
                    "both sides closed (server open=" + p.server().isOpen() + ", client open=" + p.client().isOpen() + ")");
            assertEquals(1, p.server().stats().badHeaders());
            assertEquals(1, p.server().stats().connectionsLost());
        }
    }
}
