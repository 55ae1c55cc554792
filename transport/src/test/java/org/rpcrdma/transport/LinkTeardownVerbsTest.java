package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.link.LinkCompletions;
import org.rpcrdma.transport.link.LinkGate;
import org.rpcrdma.transport.link.LinkHardware;
import org.rpcrdma.transport.link.VerbsLink;
import org.rpcrdma.transport.link.WorkRequests;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * Tears links down under load: callers post as fast as they can while
 * the client closes, the client's link is destroyed under them, or the server's is. Every
 * call must end (reply or a transport exception), no caller may hang, and no post may reach
 * a freed verbs object: such a post shows as an IllegalStateException ("QueuePair is
 * closed", a closed arena) in a failure's causes, or as a JVM crash. Real verbs only.
 */
@Tag("verbs")
class LinkTeardownVerbsTest {
    private static final int CALLERS = 4;
    /** Per mode: whichever of the two ends first (the guest JVM is slow). */
    private static final int MAX_ROUNDS = Integer.getInteger("rpcrdma.teardownRounds", 200);
    private static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(Integer.getInteger("rpcrdma.teardownSeconds", 35));
    private static final RpcRdmaOptions OPTS = EndpointVerbsTest.OPTS.toBuilder().reconnectAttempts(2).build();

    @Test
    void eventModeTeardownUnderLoad() throws Exception {
        stress(OPTS.toBuilder().busyPoll(false).build());
    }

    @Test
    void busyPollTeardownUnderLoad() throws Exception {
        stress(OPTS.toBuilder().busyPoll(true).build());
    }

    @Test
    void eventModeDestroyFreesPastAStuckHandler() throws Exception {
        stuckHandler(OPTS.toBuilder().busyPoll(false).reconnectAttempts(0).completionThreads(0).build());
    }

    @Test
    void busyPollDestroyFreesPastAStuckHandler() throws Exception {
        stuckHandler(OPTS.toBuilder().busyPoll(true).reconnectAttempts(0).completionThreads(0).build());
    }

    private static InetAddress ip() throws Exception {
        String env = System.getenv("RPCRDMA_TEST_IP");
        return env != null && !env.isEmpty() ? InetAddress.getByName(env) : EndpointVerbsTest.deviceAddress();
    }

    private void stress(RpcRdmaOptions o) throws Exception {
        AtomicReference<Connection> serverConn = new AtomicReference<>();
        RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip(), 0), o, echo(), serverConn::set);
        InetSocketAddress to = new InetSocketAddress(ip(), server.port());
        Tally tally = new Tally();
        long start = System.nanoTime();
        int rounds = 0;
        try {
            while (rounds < MAX_ROUNDS && System.nanoTime() - start < MAX_NANOS) {
                round(o, to, serverConn, rounds % 3, tally);
                rounds++;
            }
        } finally {
            System.out.printf("teardown %s: %d rounds in %d ms; %s%n", o.busyPoll() ? "busy-poll" : "event", rounds,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), tally);
            EndpointVerbsTest.closeAndCheckNothingLeft(server);
        }
        assertTrue(tally.bad.isEmpty(), () -> tally.bad.size() + " calls misbehaved, first: " + misbehaviour(tally.bad.peek()));
        assertTrue(tally.replies.sum() > 0, "no call ever got a reply");
    }

    /**
     * One connection: callers start, and once replies flow the link goes away by
     * {@code kind}: 0 client.close(); 1 the client's VerbsLink destroyed under the callers
     * with its connection still open (the harshest: nothing stops posts but the link; the
     * client then reconnects); 2 the server's connection lost and its VerbsLink destroyed,
     * as the server does on DISCONNECTED (the client reconnects).
     */
    private void round(RpcRdmaOptions o, InetSocketAddress to, AtomicReference<Connection> serverConn, int kind,
            Tally tally) throws Exception {
        serverConn.set(null);
        RpcRdmaClient client = RpcRdmaClient.connect(to, o);
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<CompletableFuture<ReceivedMessage>> futures = new ConcurrentLinkedQueue<>();
        long progress0 = tally.progress.sum();
        List<Thread> callers = new ArrayList<>();
        try {
            for (int t = 0; t < CALLERS; t++) {
                // busy-poll: half the callers drive the CQ themselves (pollOnCaller)
                boolean waitOnCaller = o.busyPoll() && t % 2 == 0;
                int id = t;
                callers.add(Thread.ofPlatform().name("teardown-caller-" + t)
                        .start(() -> callLoop(client, id, waitOnCaller, stop, futures, tally)));
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (tally.progress.sum() - progress0 < 8 && System.nanoTime() - until < 0) {
                Thread.sleep(1);
            }
            Thread.sleep(ThreadLocalRandom.current().nextInt(3)); // vary where in a call the loss lands
            switch (kind) {
                case 0 -> client.close();
                case 1 -> linkOf(client.connection()).destroy();
                default -> { // as RpcRdmaServer.drop does on DISCONNECTED
                    Connection sc = serverConn.get();
                    assertNotNull(sc, "no server connection");
                    sc.engine().onLinkLost(new RpcRdmaException("test: dropped"));
                    linkOf(sc).destroy();
                }
            }
            if (kind != 0) {
                Thread.sleep(ThreadLocalRandom.current().nextInt(20)); // calls meet the lost link and the reconnect
            }
            client.close();
        } finally {
            stop.set(true);
            for (Thread t : callers) {
                t.join(TimeUnit.SECONDS.toMillis(60));
                if (t.isAlive()) {
                    AssertionError e = new AssertionError(t.getName() + " stuck after teardown");
                    e.setStackTrace(t.getStackTrace());
                    throw e;
                }
            }
            client.close();
        }
        for (CompletableFuture<ReceivedMessage> f : futures) {
            settle(f, tally);
        }
        tally.rounds[kind]++;
    }

    /** Makes calls until stopped; async callers keep up to 4 outstanding, the others wait on the caller. */
    private static void callLoop(RpcRdmaClient client, int id, boolean waitOnCaller, AtomicBoolean stop,
            ConcurrentLinkedQueue<CompletableFuture<ReceivedMessage>> all, Tally tally) {
        java.util.ArrayDeque<CompletableFuture<ReceivedMessage>> window = new java.util.ArrayDeque<>();
        int xid = id << 24;
        byte[] args = new byte[16];
        boolean backOff = false;
        while (!stop.get()) {
            MemorySegment msg = callMsg(++xid, 1, args);
            try {
                if (backOff) { // calls fail at once while the client is closed: don't spin on 2 vCPUs
                    Thread.sleep(1);
                    backOff = false;
                }
                if (waitOnCaller) {
                    try (ReceivedMessage m = client.connection().callAndWait(msg,
                            CallOptions.timeout(30, TimeUnit.SECONDS))) {
                        tally.replies.increment();
                        tally.progress.increment();
                    }
                    continue;
                }
                CompletableFuture<ReceivedMessage> f = client.call(msg);
                all.add(f);
                backOff = f.isCompletedExceptionally();
                window.add(f);
                if (window.size() >= 4) {
                    awaitEnd(window.poll(), tally);
                }
            } catch (CallTimeoutException e) {
                tally.bad.add(e);
            } catch (RuntimeException e) { // refused at once: the client is closed or its link went
                tally.failed(e);
                backOff = true;
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Waits for a call's end without counting it (the round counts every call once at its end). */
    private static void awaitEnd(CompletableFuture<ReceivedMessage> f, Tally tally) throws InterruptedException {
        try {
            f.get(30, TimeUnit.SECONDS);
            tally.progress.increment();
        } catch (ExecutionException e) {
            // counted by settle
        } catch (TimeoutException e) {
            tally.bad.add(new AssertionError("a call did not end within 30 s", e));
        }
    }

    /** Waits for one call's end (at most 30 s: longer means stuck) and counts it. */
    private static void settle(CompletableFuture<ReceivedMessage> f, Tally tally) throws InterruptedException {
        try {
            f.get(30, TimeUnit.SECONDS).release();
            tally.replies.increment();
        } catch (ExecutionException e) {
            tally.failed(e.getCause());
        } catch (TimeoutException e) {
            tally.bad.add(new AssertionError("a call did not end within 30 s after teardown", e));
        }
    }

    /**
     * A server handler blocks on the connection's own poller (completionThreads 0) past
     * destroy's join timeout: destroy must free anyway (the gate makes that safe; it warns,
     * naming the thread), and the handler's late reply must be refused, not posted to the
     * freed QP.
     */
    private void stuckHandler(RpcRdmaOptions o) throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Throwable> replyFailure = new AtomicReference<>();
        AtomicBoolean replied = new AtomicBoolean();
        CallHandler stuck = call -> {
            // built first: the call's bytes are in the link's receive memory, freed with it
            MemorySegment reply = MemorySegment.ofArray(new byte[24]);
            int[] w = {call.xid(), OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS};
            for (int i = 0; i < w.length; i++) {
                Xdr.putInt(reply, i * 4L, w[i]);
            }
            entered.countDown();
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try {
                call.reply(reply);
                replied.set(true);
            } catch (RuntimeException e) {
                replyFailure.set(e);
            }
        };
        AtomicReference<Connection> serverConn = new AtomicReference<>();
        RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip(), 0), o, stuck, serverConn::set);
        RpcRdmaClient client = null;
        try {
            client = RpcRdmaClient.connect(new InetSocketAddress(ip(), server.port()), o);
            CompletableFuture<ReceivedMessage> call = client.call(callMsg(1, 1, new byte[8]));
            assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler never ran");
            Connection sc = serverConn.get();
            VerbsLink link = linkOf(sc);
            MemorySegment sendBuffer = link.sendMemory().asSlice(0, 64);
            long t0 = System.nanoTime();
            sc.engine().onLinkLost(new RpcRdmaException("test: dropped")); // as RpcRdmaServer.drop: lost, then destroy
            link.destroy(); // the poller is in the handler: the join times out, destroy frees anyway
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < 20_000, "destroy took " + ms + " ms with the poller stuck in a handler");
            assertEquals(1, release.getCount(), "destroy waited for the handler");
            // the poller is still in the handler, so destroy freed past it (and warned, see the log)
            assertTrue(Thread.getAllStackTraces().keySet().stream()
                    .anyMatch(t -> t.getName().equals("rpcrdma-server-cq") && t.isAlive()), "the server poller ended");
            assertThrows(LinkClosedException.class, () -> link.postSend(0, sendBuffer, 8, true));
            assertThrows(LinkClosedException.class, () -> link.postReceives(new int[] {0}, 1));
            release.countDown();
            ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof RpcRdmaException, () -> describe(e.getCause()));
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!replied.get() && replyFailure.get() == null && System.nanoTime() - until < 0) {
                Thread.sleep(10);
            }
            // Connection.post turns the refused post into a connection loss (reply() returns);
            // if it ever lets it through, it must be the typed refusal
            Throwable rf = replyFailure.get();
            assertTrue(rf == null || rf instanceof RpcRdmaException, () -> describe(rf));
            assertTrue(replied.get() || rf != null, "the handler never returned");
        } finally {
            release.countDown();
            EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
        }
    }

    /** The VerbsLink below a connection of a verbs endpoint (through its engine, {@link RawAccess#link}). */
    static VerbsLink linkOf(Connection c) {
        return (VerbsLink) RawAccess.link(c);
    }

    /**
     * Null if {@code t} is an acceptable end for a call whose link went away (a transport
     * exception), else why not. An IllegalStateException anywhere in the causes means a post
     * or poll reached a closed verbs object or arena.
     */
    static final String CONNECTION_RACE = "Connection used the link's memory after destroy (FFM refused it): ";

    /** The classes of a link that use its native memory (VerbsLink and what it was split into, its CQ's poller). */
    private static final java.util.Set<String> LINK_CLASSES = java.util.stream.Stream.concat(java.util.stream.Stream.of(
            VerbsLink.class, LinkGate.class, LinkHardware.class, WorkRequests.class, LinkCompletions.class)
            .map(Class::getName), java.util.stream.Stream.of("org.rpcrdma.transport.link.CompletionPoller",
            "org.rpcrdma.transport.link.GroupPoller", "org.rpcrdma.transport.link.CompletionGroup"))
            .collect(java.util.stream.Collectors.toUnmodifiableSet());

    static String misbehaviour(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof IllegalStateException) {
                boolean inLink = java.util.Arrays.stream(c.getStackTrace()).anyMatch(f ->
                        LINK_CLASSES.contains(f.getClassName())
                        || f.getClassName().startsWith("org.rpcrdma.transport.verbs."));
                return (inLink ? "a post or poll reached a destroyed link: " : CONNECTION_RACE) + describe(t);
            }
        }
        return t instanceof RpcRdmaException ? null : "not a transport exception: " + describe(t);
    }

    static String describe(Throwable t) {
        if (t == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            b.append(b.isEmpty() ? "" : " <- ").append(c);
        }
        java.io.StringWriter w = new java.io.StringWriter();
        t.printStackTrace(new java.io.PrintWriter(w));
        return b + "\n" + w;
    }

    private static final class Tally {
        final LongAdder replies = new LongAdder();
        /** Calls ended so far, seen by the callers (a round tears down once calls flow). */
        final LongAdder progress = new LongAdder();
        final LongAdder failures = new LongAdder();
        final LongAdder linkClosed = new LongAdder();
        final LongAdder connectionRaces = new LongAdder();
        final ConcurrentLinkedQueue<Throwable> bad = new ConcurrentLinkedQueue<>();
        final int[] rounds = new int[3];

        void failed(Throwable t) {
            failures.increment();
            for (Throwable c = t; c != null; c = c.getCause()) {
                if (c instanceof LinkClosedException) {
                    linkClosed.increment();
                    break;
                }
            }
            String m = misbehaviour(t);
            if (m != null && m.startsWith(CONNECTION_RACE)) {
                // A call that saw the connection open just before the link was destroyed under
                // it (a test hook: endpoints destroy a link only after its connection is lost)
                // marshals into the released send memory; FFM refuses the write (memory-safe)
                // and the call fails with ConnectionLostException <- LinkClosedException <-
                // that refusal. Counted, not failed.
                connectionRaces.increment();
            } else if (m != null) {
                bad.add(t);
            }
        }

        @Override
        public String toString() {
            return "rounds close/client-link/server-link " + rounds[0] + "/" + rounds[1] + "/" + rounds[2]
                    + ", replies " + replies.sum() + ", failed calls " + failures.sum() + " (LinkClosedException in "
                    + linkClosed.sum() + "), Connection wrote link memory after destroy " + connectionRaces.sum()
                    + ", misbehaved " + bad.size();
        }
    }
}
