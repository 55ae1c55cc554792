package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;
import static org.rpcrdma.transport.EndpointVerbsTest.OPTS;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.verbs.LiveResources;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * Endpoint defects found in review, each pinned by a test that asserts the wanted
 * behaviour on real verbs (Soft-RoCE guest); each failed on the transport core it was
 * written against. Every wait is bounded (a few seconds, and a JUnit timeout per test), so a hang
 * fails instead of holding the run.
 */
@Tag("verbs")
class EndpointDefectsVerbsTest {
    /** The verbs objects that make up one connection's hardware (VerbsLink). */
    private static final List<String> LINK_TYPES =
            List.of("QueuePair", "CompletionQueue", "CompletionChannel", "MemoryRegion", "ProtectionDomain");

    private RpcRdmaServer server;
    private final List<RpcRdmaClient> clients = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        List<AutoCloseable> all = new ArrayList<>(clients);
        all.add(server);
        EndpointVerbsTest.closeAndCheckNothingLeft(all.toArray(AutoCloseable[]::new));
    }

    private RpcRdmaClient connect(InetAddress ip, RpcRdmaOptions o) {
        RpcRdmaClient c = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
        clients.add(c);
        return c;
    }

    // ---- 7. a lost client connection is released ----

    /**
     * The server drops the connections of two clients that have nothing to carry over to a
     * new connection (one with reconnectAttempts 0, one with the default attempts but no
     * call pending and no backchannel), both in busy-poll mode. Their connections are gone
     * for good, so within a few seconds each client must release its connection's verbs
     * objects and stop its completion poller (a busy-poll poller otherwise spins a core
     * until the next call or close()).
     */
    @Test
    @Timeout(120)
    void lostConnectionWithNothingToCarryOverReleasesItsVerbsResourcesAndPoller() throws Exception {
        InetAddress ip = deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), OPTS, echo(), null);
        Map<String, Integer> before = linkCounts();
        int pollers0 = threadsNamed("rpcrdma-client-cq");
        RpcRdmaClient noRetry = connect(ip, OPTS.toBuilder().busyPoll(true).reconnectAttempts(0).build());
        RpcRdmaClient idle = connect(ip, OPTS.toBuilder().busyPoll(true).build());
        for (RpcRdmaClient c : clients) {
            assertArrayEquals(new byte[] {1, 2, 3, 4},
                    results(c.call(callMsg(0x70, 1, new byte[] {1, 2, 3, 4})).get(30, TimeUnit.SECONDS)));
        }
        assertTrue(waitFor(() -> server.connections().size() == 2, 5000), "server holds " + server.connections());
        assertEquals(pollers0 + 2, threadsNamed("rpcrdma-client-cq"));

        for (Connection s : server.connections()) {
            s.close(0, TimeUnit.MILLISECONDS); // the server drops the connection
        }
        assertTrue(waitFor(() -> !noRetry.connection().isOpen() && !idle.connection().isOpen(), 5000),
                "the clients did not notice the loss");

        // the server's completion group, made at its first connection, stays as long as the
        // server: its CQs, and a channel per thread (event mode)
        Map<String, Integer> expected = new java.util.TreeMap<>(before);
        expected.merge("CompletionQueue", server.completionQueues(), Integer::sum);
        expected.merge("CompletionChannel", OPTS.completionThreads(), Integer::sum);
        boolean released = waitFor(() -> linkCounts().equals(expected) && threadsNamed("rpcrdma-client-cq") == pollers0,
                5000);
        assertTrue(released, "5 s after losing their connections (nothing to carry over) the clients still hold"
                + " verbs objects " + linkCounts() + " (before they connected, with the server's completion group: "
                + expected + ") and "
                + (threadsNamed("rpcrdma-client-cq") - pollers0) + " live rpcrdma-client-cq poller thread(s)");
        assertEquals(0, idle.reconnects(), "nothing to carry over: no reconnect");
    }

    // ---- 8. server accept order ----

    /**
     * A backward call made from the server's onConnect callback (after the upper layer
     * marks the backchannel ready) must meet a started connection: no NullPointerException
     * from a link that is not there yet; the call goes out or fails with a transport
     * exception, and the connection stays usable.
     */
    @Test
    @Timeout(120)
    void backwardCallFromOnConnectMeetsAStartedConnection() throws Exception {
        InetAddress ip = deviceAddress();
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        AtomicReference<CompletableFuture<ReceivedMessage>> early = new AtomicReference<>();
        AtomicReference<Connection> serverConn = new AtomicReference<>();
        RpcRdmaOptions o = OPTS.toBuilder().backwardCredits(2).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo(), c -> {
            serverConn.set(c);
            try {
                c.markBackchannelReady(); // e.g. the upper layer knows this client from before
                early.set(c.call(callMsg(0x801, 7, new byte[4])));
            } catch (Throwable t) {
                thrown.add(t);
            }
        });
        RpcRdmaClient client = connect(ip, o);
        for (Throwable t : thrown) {
            if (!(t instanceof RpcRdmaException)) {
                throw new AssertionError("a backward call from onConnect threw " + t, t);
            }
        }
        CompletableFuture<ReceivedMessage> f = early.get();
        if (f != null) {
            try {
                f.get(3, TimeUnit.SECONDS).release(); // answered: fine (a client may not answer: not required)
            } catch (TimeoutException e) {
                // still outstanding: it went out
            } catch (ExecutionException e) {
                assertInstanceOf(RpcRdmaException.class, e.getCause(), "the backward call failed with " + e.getCause());
            }
        }
        // the connection is usable both ways
        assertArrayEquals(new byte[] {5, 6, 7, 8},
                results(client.call(callMsg(0x802, 1, new byte[] {5, 6, 7, 8})).get(30, TimeUnit.SECONDS)));
        assertTrue(serverConn.get().isOpen() && client.connection().isOpen());
    }

    /**
     * An onConnect that throws refuses the connection: the CM request is rejected (the
     * client's connect fails at once naming the rejection, not after its connect timeout),
     * the server keeps nothing of it, and later clients are accepted as before.
     */
    @Test
    @Timeout(120)
    void throwingOnConnectRejectsTheRequestReleasesItAndKeepsAccepting() throws Exception {
        InetAddress ip = deviceAddress();
        AtomicBoolean refuse = new AtomicBoolean();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), OPTS, echo(), c -> {
            if (refuse.get()) {
                throw new IllegalStateException("test: onConnect refuses this client");
            }
        });
        // a first client, accepted (also warms up the JVM so the timing below means something)
        RpcRdmaClient first = connect(ip, OPTS);
        assertArrayEquals(new byte[4], results(first.call(callMsg(0x810, 1, new byte[4])).get(30, TimeUnit.SECONDS)));
        assertTrue(waitFor(() -> server.connections().size() == 1, 5000));
        int total0 = LiveResources.total();
        Map<String, Integer> snap0 = LiveResources.snapshot();

        refuse.set(true);
        int timeoutMs = 12_000;
        long t0 = System.nanoTime();
        RpcRdmaException e = assertThrows(RpcRdmaException.class,
                () -> connect(ip, OPTS.toBuilder().connectTimeoutMillis(timeoutMs).reconnectAttempts(0).build()));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < timeoutMs / 2, "connect to a server whose onConnect threw took " + ms
                + " ms (connect timeout " + timeoutMs + " ms) and failed with: " + e.getMessage());
        assertTrue(e.getMessage().contains("REJECTED") || e.getMessage().toLowerCase().contains("reject"),
                "the failure does not name the rejection: " + e.getMessage());
        assertTrue(waitFor(() -> server.connections().size() == 1, 5000),
                "server still holds the refused connection: " + server.connections());
        assertTrue(waitFor(() -> LiveResources.total() == total0, 5000), "verbs objects " + LiveResources.snapshot()
                + " after the refused connect, " + snap0 + " before");

        refuse.set(false);
        RpcRdmaClient later = connect(ip, OPTS.toBuilder().connectTimeoutMillis(timeoutMs).build());
        assertArrayEquals(new byte[4], results(later.call(callMsg(0x811, 1, new byte[4])).get(30, TimeUnit.SECONDS)));
        assertTrue(waitFor(() -> server.connections().size() == 2, 5000), "server holds " + server.connections());
    }

    // ---- 10. client receives posted before connect ----

    /**
     * A server may send as soon as its side of the connection is established (RFC 8166
     * §3.3.1 needs a receive posted for every message; the client gave rnr_retry 0). Over
     * 20 connects, a watcher sends a well-formed RDMA_MSG (a reply to no call, which the
     * client drops) on each new server connection as soon as the server's rdma_accept has
     * returned; every client connection must survive it: still open, and a forward call
     * after it succeeds. The client must have its receives posted before it connects.
     */
    @Test
    @Timeout(300)
    void serverMaySendTheMomentTheConnectionIsEstablished() throws Exception {
        InetAddress ip = deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), OPTS, echo(), null);
        RpcRdmaOptions o = OPTS.toBuilder().reconnectAttempts(0).build();
        // warm up first (the first connect in a guest JVM is slow; not a cycle)
        try (RpcRdmaClient c = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o)) {
            c.call(callMsg(1, 1, new byte[0])).get(30, TimeUnit.SECONDS).release();
        }
        assertTrue(waitFor(() -> server.connections().isEmpty(), 5000));

        List<Thread> cms = threads("rpcrdma-server-cm");
        assertTrue(cms.size() <= 1, "more than one server CM thread: " + cms);
        Thread cm = cms.isEmpty() ? null : cms.get(0);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger sent = new AtomicInteger();
        AtomicInteger postFailed = new AtomicInteger(); // the raw Send threw (no send context): not the client's fault
        Set<Connection> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        Thread watcher = Thread.ofPlatform().daemon().name("test-early-sender").start(() -> {
            while (!stop.get()) {
                for (Connection s : server.connections()) {
                    // Send once the server's side is established: it has started the connection
                    // (receives posted) and its CM thread is done with the request (rdma_accept
                    // returned: the QP is in RTS). Earlier, the post itself would fail.
                    if (seen.contains(s) || s.postedReceives() == 0 || !cmThreadIdle(cm)) {
                        continue;
                    }
                    seen.add(s);
                    // (A post the server's QP refused would end that connection before its
                    // rdma_accept and the client's connect would fail: counted inconclusive below.
                    // A loss after a successful connect is the client's: RNR, no receive posted.)
                    try {
                        RawAccess.send(s, strayReply(0x0badc0de, OPTS.credits()));
                        sent.incrementAndGet();
                    } catch (RuntimeException e) {
                        postFailed.incrementAndGet();
                    }
                }
                Thread.onSpinWait();
            }
        });
        int cycles = 20;
        List<String> failures = new ArrayList<>();
        try {
            for (int i = 0; i < cycles; i++) {
                int sent0 = sent.get();
                int failed0 = postFailed.get();
                RpcRdmaClient c;
                try {
                    c = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
                } catch (RpcRdmaException e) {
                    failures.add("cycle " + i + ": connect failed: " + e.getMessage()
                            + " (inconclusive: the early post came before the server's rdma_accept)");
                    continue;
                }
                try (c) {
                    if (!waitFor(() -> sent.get() > sent0 || postFailed.get() > failed0, 5000)) {
                        failures.add("cycle " + i + ": the watcher never sent");
                        continue;
                    }
                    if (postFailed.get() > failed0) {
                        failures.add("cycle " + i + ": inconclusive (the raw Send threw)");
                        continue;
                    }
                    Connection cc = c.connection();
                    // (RC order: if the forward call below succeeds, the early message came first and
                    // was survived; the unmatched-reply count is only for the failure message)
                    boolean got = waitFor(() -> cc.stats().unmatchedForwardReplies() == 1 || !cc.isOpen(), 2000);
                    String outcome;
                    try {
                        byte[] args = {(byte) i, 0, 0, 0};
                        assertArrayEquals(args, results(c.call(callMsg(0x1000 + i, 1, args)).get(10, TimeUnit.SECONDS)));
                        outcome = null;
                    } catch (ExecutionException | TimeoutException e) {
                        outcome = "forward call failed: " + (e.getCause() == null ? e : e.getCause());
                    }
                    if (outcome != null || !cc.isOpen()) {
                        failures.add("cycle " + i + ": early message " + (got && cc.isOpen() ? "received" : "not received")
                                + ", client connection " + (cc.isOpen() ? "open" : "lost")
                                + (outcome == null ? "" : ", " + outcome));
                    }
                }
            }
        } finally {
            stop.set(true);
            watcher.join(5000);
        }
        System.out.printf("early server send: %d cycles, %d failed: %s%n", cycles, failures.size(), failures);
        if (!failures.isEmpty()) {
            fail(failures.size() + " of " + cycles + " connections did not survive a server Send right after"
                    + " establishment: " + failures);
        }
    }

    /** One Send's bytes: RDMA_MSG (credit {@code credit}) carrying an accepted SUCCESS reply for {@code xid}. */
    private static MemorySegment strayReply(int xid, int credit) {
        MemorySegment rpc = MemorySegment.ofArray(new byte[24]);
        int[] w = {xid, OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS};
        for (int i = 0; i < w.length; i++) {
            Xdr.putInt(rpc, i * 4L, w[i]);
        }
        MemorySegment m = MemorySegment.ofArray(new byte[28 + 24]);
        int h = RpcRdmaEncoder.encodeInlineMsg(m, 0, xid, credit);
        MemorySegment.copy(rpc, 0, m, h, rpc.byteSize());
        return m.asSlice(0, h + rpc.byteSize());
    }

    // ---- 13. the server's backward window is the client's grant ----

    /**
     * The backward credit window is the client's to grant (RFC 8167 §4.1, RFC 8166 §3.3.3):
     * a server with default options (backwardCredits 0) whose client grants 4 must be able to
     * have 4 backward calls outstanding after the first backward reply carried that grant.
     */
    @Test
    @Timeout(120)
    void serverBackwardWindowIsTheClientsGrant() throws Exception {
        InetAddress ip = deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), OPTS, echo(), null); // backwardCredits 0
        RpcRdmaClient client = connect(ip, OPTS.toBuilder().backwardCredits(4).build());
        List<IncomingCall> held = new CopyOnWriteArrayList<>();
        client.enableBackchannel(call -> {
            MemorySegment m = call.message().bytes();
            if (m.byteSize() > 40 && m.get(ValueLayout.JAVA_BYTE, 40) == 'H') {
                held.add(call);
            } else {
                echo().handle(call);
            }
        }).get(30, TimeUnit.SECONDS);
        Backchannel bc = server.backchannel(client.clientId());
        assertTrue(waitFor(() -> bc.connection() != null, 5000), "client never bound its backchannel");
        Connection s = bc.connection();

        // the first round trip: its reply carries the client's grant of 4
        assertArrayEquals(new byte[4], results(bc.call(callMsg(0x130, 7, new byte[4])).get(30, TimeUnit.SECONDS)));
        List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                fs.add(bc.call(callMsg(0x131 + i, 7, new byte[] {'H', (byte) i, 0, 0})));
            }
            boolean all = waitFor(() -> held.size() == 4, 5000);
            Connection cc = client.connection();
            assertTrue(all && s.ownCallWindow() == 4 && cc.peerCallHighWater() == 4,
                    "client granted 4 backward credits; server's window " + s.ownCallWindow() + ", backward calls"
                    + " outstanding at the client at once " + cc.peerCallHighWater() + " (held " + held.size() + ")");
        } finally {
            for (IncomingCall c : held) {
                echo().handle(c);
            }
        }
        for (var f : fs) {
            f.get(10, TimeUnit.SECONDS).release();
        }
    }

    // ---- helpers ----

    private static Map<String, Integer> linkCounts() {
        Map<String, Integer> m = new java.util.TreeMap<>();
        for (String t : LINK_TYPES) {
            m.put(t, LiveResources.count(t));
        }
        return m;
    }

    /** The live threads with this name. */
    private static List<Thread> threads(String name) {
        List<Thread> l = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && name.equals(t.getName())) {
                l.add(t);
            }
        }
        return l;
    }

    /**
     * Whether the server's CM thread {@code cm} is back in its event loop (so it has finished
     * handling the last CONNECT_REQUEST); true if there is no such thread.
     */
    private static boolean cmThreadIdle(Thread cm) {
        if (cm == null) {
            return true;
        }
        for (StackTraceElement e : cm.getStackTrace()) {
            if (e.getClassName().endsWith(".ServerAcceptor")) { // the server's rdma_cm loop
                return e.getMethodName().equals("run");
            }
        }
        return false;
    }

    private static int threadsNamed(String name) {
        return threads(name).size();
    }

    static boolean waitFor(BooleanSupplier p, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (!p.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return p.getAsBoolean();
            }
            Thread.sleep(5);
        }
        return true;
    }
}
