package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * Calls across an impaired link: our server on one Soft-RoCE device, our client on another,
 * the two joined by a veth pair with netem on both ends (scripts/lib/lossy-link.sh, set up
 * by {@code scripts/verbs-tests --lossy}). Forward and backward calls flow at once, inline,
 * long calls (Position-Zero Read chunk), replies through Reply chunks and DDP payloads, while
 * the link drops packets; RoCE's transport retransmits them. Afterwards every call was
 * answered exactly once with its own contents: each end counts the executions of every
 * XID, none twice, none missing; rxe's hardware counters show that retransmissions
 * happened, so the loss was real.
 */
@Tag("verbs")
@Tag("lossy")
// a stall costs the silence (SILENCE_MILLIS), a QP teardown (under a minute) and a reconnect
@Timeout(value = 480, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LossyLinkVerbsTest {
    /** Each caller thread's number of calls (the run's length under loss is set by RoCE's retransmission timer). */
    private static final int CALLS = Integer.getInteger("rpcrdma.lossy.calls", 20);
    private static final int SIZE = 6000; // past the 4 KiB inline threshold: 6 packets at rxe's 1 KiB MTU
    private static final int P_ECHO = 1, P_DDP = 2, P_PATTERN = 3, P_DIGEST = 4;
    private static final CallOptions OPTS = CallOptions.timeout(180, TimeUnit.SECONDS).withRetry(true);
    /**
     * The silence after which a connection is declared dead (silenceTimeoutMillis): shorter
     * than the 60 s default, so that a Soft-RoCE stall costs the run less; longer than RoCE's
     * own retransmissions (6 retries of ~0.5 s) and a call's RDMA under 1 % loss.
     */
    private static final long SILENCE_MILLIS = 15_000;
    /**
     * From the end of the 30 s outage to the reconnect: the client's REQ, retransmitted by
     * its CM every few seconds meanwhile, reaches the server once the link is back, and
     * neither end waits for the lost connection's teardown.
     */
    private static final long RECONNECT_WITHIN_SECONDS = 20;
    /** From the reconnect to the answer of every call that was outstanding when the link came back. */
    private static final long RESENT_ANSWERED_WITHIN_SECONDS = 10;
    /** rxe's count of requester retries (after a timeout or a NAK): the loss was repaired. */
    private static final String RETRIES = "completer_retry_err";

    private final String link = env("LOSSY_LINK");
    private RpcRdmaServer server;
    private RpcRdmaClient client;
    /** Every connection the client has had, the first and each reconnect's: the kinds' counts are summed over them. */
    private final List<Connection> clientConnections = new CopyOnWriteArrayList<>();
    private final Counting serverSide = new Counting();
    private final Counting clientSide = new Counting();

    private static String env(String name) {
        String v = System.getenv(name);
        assertNotNull(v, name + " is not set: run under scripts/verbs-tests --lossy (scripts/lib/lossy-link.sh up)");
        return v;
    }

    private Process trace;

    @BeforeEach
    void clean(TestInfo info) throws Exception {
        impair(); // a clean link to connect over
        // every frame that crossed the link, for a failure's post-mortem (scripts/lib/roce-trace.py)
        Path out = Path.of("target", "lossy-trace-" + info.getTestMethod().orElseThrow().getName() + ".txt");
        Files.createDirectories(out.getParent());
        trace = new ProcessBuilder(Path.of(link).resolveSibling("roce-trace.py").toString(), "lc", out.toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (trace != null) {
            trace.destroy();
            trace.waitFor(10, TimeUnit.SECONDS);
        }
        impair();
        EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
    }

    /** 1 % of the packets dropped in each direction for the whole run. */
    @Test
    void everyCallIsAnsweredExactlyOnceAtOnePercentLoss() throws Exception {
        throughout("1 % loss", List.of("loss", "1%"), RETRIES);
    }

    /**
     * 1 ms +- 0.5 ms of delay on both ends, a quarter of the packets sent at once (ahead of
     * the delayed ones): RoCE's responders see packets out of sequence and NAK them (or the
     * requesters time out), the requesters go back and resend (IBTA's go-back-N). Not in the
     * CI stage (the {@code impaired} tag: scripts/verbs-tests --impaired).
     */
    @Test
    @Tag("impaired")
    void everyCallIsAnsweredExactlyOnceUnderDelayWithReordering() throws Exception {
        throughout("1 ms +- 0.5 ms delay with reordering", List.of("delay", "1ms", "0.5ms", "reorder", "25%", "50%"),
                "out_of_seq_request", "rcvd_seq_err", RETRIES);
    }

    /**
     * 1 % of the packets sent twice, both ways: a responder sees a request again (an RC
     * duplicate: re-acknowledged, a Send not delivered twice, a Read answered again), a
     * requester an ACK or a read response again. No call may run twice.
     */
    @Test
    @Tag("impaired")
    void everyCallIsAnsweredExactlyOnceWithDuplicatedPackets() throws Exception {
        throughout("1 % duplication", List.of("duplicate", "1%"), "duplicate_request");
    }

    /** The traffic with {@code netem} in force from its start to its end; {@code evidence} as {@link #check}'s. */
    private void throughout(String what, List<String> netem, String... evidence) throws Exception {
        connect();
        Map<String, Long> before = rxeCounters();
        impair(netem.toArray(String[]::new));
        Traffic t = traffic(CALLS);
        t.join();
        impair();
        check(t, before, what, false, evidence);
    }

    /**
     * 2 s of 100 % loss in the middle of the traffic, then a clean link: within what RoCE's
     * own retransmission rides out (our QPs: retry_cnt 6 and rdma_cm's local ACK timeout);
     * a reconnect only if Soft-RoCE stalled (see {@link #check}).
     */
    @Test
    void everyCallIsAnsweredExactlyOnceAcrossATwoSecondOutage() throws Exception {
        connect();
        Map<String, Long> before = rxeCounters();
        Traffic t = traffic(CALLS);
        assertTrue(ReconnectVerbsTest.waitFor(() -> serverSide.total() > CALLS), "traffic did not start");
        impair("loss", "100%");
        Thread.sleep(2000); // the outage itself, not a wait for an outcome
        impair();
        // the traffic goes on until calls made after the outage were answered too
        long after = t.answered() + CALLS;
        assertTrue(waitFor(() -> t.answered() >= after || !t.wrong().isEmpty(), 240),
                "no traffic after the outage");
        t.join();
        check(t, before, "2 s outage", false, RETRIES);
    }

    /**
     * 30 s of 100 % loss: past RoCE's retransmissions (retry_cnt 6), the QPs fail, the
     * connection is lost; the client reconnects once the link is back, sends its calls
     * again with the same XIDs, and the server's backward calls that were outstanding or
     * made meanwhile are delivered on the new connection (RFC 8167 §5.4).
     */
    @Test
    @Tag("reconnect") // alone: scripts/verbs-tests --lossy -- --exclude-tag='!reconnect'
    void everyCallIsAnsweredAcrossAThirtySecondOutageByAReconnect() throws Exception {
        connect();
        List<Long> reconnectedAt = new CopyOnWriteArrayList<>();
        client.onReconnect(c -> reconnectedAt.add(System.nanoTime()));
        Map<String, Long> before = rxeCounters();
        Traffic t = traffic(CALLS);
        assertTrue(waitFor(() -> serverSide.total() > CALLS, 120), "traffic did not start");
        long outage = System.nanoTime();
        impair("loss", "100%");
        Thread.sleep(30_000); // the outage itself, not a wait for an outcome
        impair();
        long back = System.nanoTime();
        Set<Integer> pending = t.outstanding();
        System.out.println("lossy link: the link is back; outstanding calls " + hex(pending));
        long after = t.answered() + CALLS;
        assertTrue(waitFor(() -> t.answered() >= after || !t.wrong().isEmpty(), 240), "no traffic after the outage");
        t.join();
        check(t, before, "30 s outage", true, RETRIES);
        // one reconnect, soon after the link is back, and every call outstanding then
        // answered on that new connection (sent again with the same XID), not after another
        long at = reconnectedAt.stream().filter(r -> r - outage > 0).findFirst().orElse(0L);
        long reconnect = at - back;
        StringBuilder late = new StringBuilder();
        for (int xid : pending) {
            Long answered = t.answeredAt().get(xid);
            if (answered == null || answered - at > TimeUnit.SECONDS.toNanos(RESENT_ANSWERED_WITHIN_SECONDS)) {
                late.append(String.format(" 0x%x after %s ms", xid,
                        answered == null ? "never" : TimeUnit.NANOSECONDS.toMillis(answered - at)));
            }
        }
        String summary = "reconnected " + TimeUnit.NANOSECONDS.toMillis(reconnect) + " ms after the link was back, "
                + client.reconnects() + " reconnects, " + pending.size() + " calls outstanding then";
        System.out.println("lossy link, 30 s outage: " + summary + "; answered late:" + late);
        assertEquals(1, client.reconnects(), summary);
        assertTrue(at != 0 && reconnect < TimeUnit.SECONDS.toNanos(RECONNECT_WITHIN_SECONDS),
                "not reconnected within " + RECONNECT_WITHIN_SECONDS + " s: " + summary);
        assertEquals("", late.toString(), "calls not answered within " + RESENT_ANSWERED_WITHIN_SECONDS
                + " s of the reconnect: " + summary);
    }

    private static String hex(Set<Integer> xids) {
        StringBuilder b = new StringBuilder();
        xids.forEach(x -> b.append(" 0x").append(Integer.toHexString(x)));
        return b.toString();
    }

    // ---------------------------------------------------------------- the traffic

    private void connect() throws Exception {
        InetAddress serverIp = InetAddress.getByName(env("LOSSY_SERVER_IP"));
        // 120 s to connect: the server's accept (QP, receive and chunk memory) in a guest that
        // shares its host's cores with others took over 30 s, and the client's rdma_cm had
        // given up on that REQ by then (rdma_accept: EINVAL)
        RpcRdmaOptions o = EndpointVerbsTest.OPTS.toBuilder().backwardCredits(8).callTimeoutMillis(180_000)
                .connectTimeoutMillis(120_000).silenceTimeoutMillis(SILENCE_MILLIS).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(serverIp, 0), o, serverSide, null);
        client = RpcRdmaClient.connect(new InetSocketAddress(serverIp, server.port()), o);
        clientConnections.add(client.connection());
        client.onReconnect(clientConnections::add);
        client.enableBackchannel(clientSide).get(60, TimeUnit.SECONDS);
        System.out.println("lossy link: connected, " + client.connection());
    }

    private enum Kind { INLINE, LONG_CALL, REPLY_CHUNK, DDP }

    /** {@code more}: while set, the callers go on past their number of calls. */
    private record Traffic(List<Thread> threads, Set<Integer> forward, Set<Integer> backward, List<String> wrong,
            Map<Kind, AtomicInteger> done, java.util.concurrent.atomic.AtomicBoolean more, Map<Integer, Long> answeredAt) {
        long answered() {
            return done.values().stream().mapToLong(AtomicInteger::get).sum();
        }

        /** The XIDs called, forward and backward, and not answered yet. */
        Set<Integer> outstanding() {
            Set<Integer> s = new java.util.TreeSet<>(forward);
            s.addAll(backward);
            s.removeAll(answeredAt.keySet());
            return s;
        }

        void join() throws InterruptedException {
            more.set(false);
            for (Thread t : threads) {
                t.join(TimeUnit.MINUTES.toMillis(8));
                assertTrue(!t.isAlive(), t.getName() + " is stuck");
            }
        }
    }

    /** Four forward callers (one per kind) and two backward ones, {@code calls} calls each, at once. */
    private Traffic traffic(int calls) throws IOException {
        Map<String, Long> start = rxeCounters();
        System.out.println("lossy link: traffic starts, " + calls + " calls per caller");
        Backchannel back = server.backchannel(client.clientId());
        AtomicInteger xids = new AtomicInteger(0x1000);
        Set<Integer> forward = ConcurrentHashMap.newKeySet();
        Set<Integer> backward = ConcurrentHashMap.newKeySet();
        List<String> wrong = new CopyOnWriteArrayList<>();
        Map<Kind, AtomicInteger> done = new ConcurrentHashMap<>();
        var more = new java.util.concurrent.atomic.AtomicBoolean(true);
        Map<Integer, Long> answeredAt = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        for (Kind k : Kind.values()) {
            threads.add(Thread.ofPlatform().name("lossy-" + k).start(() -> {
                for (int i = 0; i < calls || more.get(); i++) {
                    int xid = xids.getAndIncrement();
                    forward.add(xid);
                    callAndCheck(k, xid, (m, o) -> client.call(m, o), wrong, done, answeredAt);
                }
            }));
        }
        for (Kind k : new Kind[] {Kind.INLINE, Kind.LONG_CALL}) {
            threads.add(Thread.ofPlatform().name("lossy-backward-" + k).start(() -> {
                for (int i = 0; i < calls || more.get(); i++) {
                    int xid = 0x4000_0000 | xids.getAndIncrement();
                    backward.add(xid);
                    callAndCheck(k, xid, back::call, wrong, done, answeredAt);
                }
            }));
        }
        Thread.ofPlatform().daemon().name("lossy-progress").start(() -> { // a run under loss takes minutes: say how it goes
            long t0 = System.nanoTime();
            long[] lastAnswered = {-1};
            int[] still = {0};
            while (threads.stream().anyMatch(Thread::isAlive)) {
                try {
                    Thread.sleep(10_000);
                } catch (InterruptedException e) {
                    return;
                }
                Connection c = client.connection();
                String rxe;
                try {
                    rxe = delta(start, rxeCounters()).toString();
                } catch (IOException e) {
                    rxe = e.toString();
                }
                System.out.printf("lossy link, %d s: answered %s, %d wrong, executed %d forward / %d backward,"
                        + " %d reconnects (%d failed), connection open %b, outstanding %d, peer's %d; rxe %s; wrong %s%n",
                        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0), done, wrong.size(), serverSide.total(),
                        clientSide.total(), client.reconnects(), client.failedReconnects(), c.isOpen(), c.outstandingCalls(),
                        c.peerOutstandingCalls(), rxe, wrong.subList(0, Math.min(3, wrong.size())));
                String inKernel = kernelStacks();
                if (!inKernel.isEmpty()) {
                    System.out.print("lossy link: threads of ours inside the RDMA stack of the kernel:\n" + inKernel);
                }
                long answered = done.values().stream().mapToLong(AtomicInteger::get).sum();
                if (answered == lastAnswered[0] && ++still[0] % 6 == 3) { // 30 s without an answer: a stall
                    System.out.println(stallReport());
                } else if (answered != lastAnswered[0]) {
                    still[0] = 0;
                }
                lastAnswered[0] = answered;
            }
        });
        return new Traffic(threads, forward, backward, wrong, done, more, answeredAt);
    }

    private interface Caller {
        java.util.concurrent.CompletableFuture<ReceivedMessage> call(MemorySegment m, CallOptions o);
    }

    /** One call of the kind, its reply checked byte for byte; what went wrong goes to {@code wrong}. */
    private static void callAndCheck(Kind k, int xid, Caller caller, List<String> wrong, Map<Kind, AtomicInteger> done,
            Map<Integer, Long> answeredAt) {
        byte[] data = ChunkTest.pattern(SIZE, xid);
        try {
            switch (k) {
                case INLINE -> {
                    byte[] args = ChunkTest.pattern(200, xid);
                    expect(wrong, xid, k, args, ConnectionLoopbackTest.results(
                            caller.call(callMsg(xid, P_ECHO, args), OPTS).get()));
                }
                case LONG_CALL -> expect(wrong, xid, k, digest(data), ConnectionLoopbackTest.results(
                        caller.call(callMsg(xid, P_DIGEST, data), OPTS).get()));
                case REPLY_CHUNK -> {
                    byte[] args = new byte[4];
                    Xdr.putInt(MemorySegment.ofArray(args), 0, SIZE);
                    expect(wrong, xid, k, data, ConnectionLoopbackTest.results(caller.call(callMsg(xid, P_PATTERN, args),
                            OPTS.withMaxReplyBytes(SIZE + 64)).get()));
                }
                case DDP -> {
                    MemorySegment receptacle = MemorySegment.ofArray(new byte[SIZE]);
                    ReceivedMessage m = caller.call(ChunkTest.writeCall(xid, data), OPTS
                            .withDdpArgument(new DdpArgument(44, SIZE)).withReceptacle(receptacle)).get();
                    long placed = m.placedBytes();
                    m.release();
                    expect(wrong, xid, k, data, placed == SIZE ? receptacle.toArray(ValueLayout.JAVA_BYTE) : new byte[0]);
                }
            }
            answeredAt.put(xid, System.nanoTime());
            done.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
        } catch (Exception e) {
            wrong.add(k + " xid 0x" + Integer.toHexString(xid) + ": " + e);
        }
    }

    private static void expect(List<String> wrong, int xid, Kind k, byte[] want, byte[] got) {
        if (!java.util.Arrays.equals(want, got)) {
            wrong.add(k + " xid 0x" + Integer.toHexString(xid) + ": a reply of " + got.length + " bytes, not its own "
                    + want.length);
        }
    }

    private static byte[] digest(byte[] args) {
        CRC32 crc = new CRC32();
        crc.update(args);
        byte[] r = new byte[8];
        Xdr.putInt(MemorySegment.ofArray(r), 0, args.length);
        Xdr.putInt(MemorySegment.ofArray(r), 4, (int) crc.getValue());
        return r;
    }

    /** Both ends' handler: counts executions per XID and serves the four programs. */
    private static final class Counting implements CallHandler {
        final Map<Integer, AtomicInteger> executions = new ConcurrentHashMap<>();
        /**
         * The connections each XID was executed on, by identity: a client's connections
         * before and after a reconnect have the same name (the server's address).
         */
        final Map<Integer, Set<Connection>> on = new ConcurrentHashMap<>();
        private final CallHandler ddp = ChunkTest.ddpEcho();
        private final CallHandler echo = ConnectionLoopbackTest.echo();

        @Override
        public void handle(IncomingCall call) {
            executions.computeIfAbsent(call.xid(), x -> new AtomicInteger()).incrementAndGet();
            on.computeIfAbsent(call.xid(), x -> java.util.Collections.newSetFromMap(
                    java.util.Collections.synchronizedMap(new java.util.IdentityHashMap<>()))).add(call.connection());
            MemorySegment in = call.message().bytes();
            switch (Xdr.getInt(in, 12)) {
                case P_DDP -> ddp.handle(call);
                case P_PATTERN -> reply(call, ChunkTest.pattern(Xdr.getInt(in, 40), call.xid()));
                case P_DIGEST -> reply(call, digest(in.asSlice(40).toArray(ValueLayout.JAVA_BYTE)));
                default -> echo.handle(call);
            }
        }

        private static void reply(IncomingCall call, byte[] results) {
            MemorySegment r = MemorySegment.ofArray(new byte[24 + results.length]);
            int[] w = {call.xid(), OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS};
            for (int i = 0; i < w.length; i++) {
                Xdr.putInt(r, i * 4L, w[i]);
            }
            MemorySegment.copy(MemorySegment.ofArray(results), 0, r, 24, results.length);
            call.reply(r);
        }

        long total() {
            return executions.values().stream().mapToLong(AtomicInteger::get).sum();
        }

        /**
         * XIDs executed other than exactly once, against the set of those called; with
         * {@code perConnection}, once on each connection it reached (a call retried after a
         * reconnect is executed again unless the server has a duplicate request cache).
         */
        String notExactlyOnce(Set<Integer> called, boolean perConnection) {
            StringBuilder b = new StringBuilder();
            for (int xid : called) {
                AtomicInteger n = executions.get(xid);
                int allowed = perConnection && n != null ? on.get(xid).size() : 1;
                if (n == null || n.get() != allowed) {
                    b.append(" 0x").append(Integer.toHexString(xid)).append('x').append(n == null ? 0 : n.get());
                }
            }
            for (int xid : executions.keySet()) {
                if (!called.contains(xid)) {
                    b.append(" 0x").append(Integer.toHexString(xid)).append(" never called");
                }
            }
            return b.toString();
        }
    }

    // ---------------------------------------------------------------- the outcome

    /**
     * {@code mustReconnect}: whether the client is to have reconnected. Otherwise it may
     * have: Soft-RoCE (6.1) can stall a Send after a NAK with its QP in RTS, and the
     * connection is then declared dead after {@link #SILENCE_MILLIS}
     * (every call still answered, each XID executed once per connection it reached).
     * {@code evidence}: rxe counters (hw_counters names) of which at least one grew on
     * either device: the impairment really reached the RC transport.
     */
    private void check(Traffic t, Map<String, Long> before, String what, boolean mustReconnect, String... evidence)
            throws Exception {
        boolean reconnect = client.reconnects() > 0;
        Map<String, Long> delta = delta(before, rxeCounters());
        Connection c = client.connection();
        String summary = what + ": " + t.forward().size() + " forward and " + t.backward().size() + " backward calls, "
                + t.done() + " answered, " + client.reconnects() + " reconnects; rxe counters " + delta
                + "; client " + c.stats() + "; server " + server.stats();
        System.out.println("lossy link, " + summary);
        assertEquals(List.of(), t.wrong(), summary);
        assertEquals("", serverSide.notExactlyOnce(t.forward(), reconnect), "forward XIDs not executed exactly once; " + summary);
        assertEquals("", clientSide.notExactlyOnce(t.backward(), reconnect), "backward XIDs not executed exactly once; " + summary);
        assertEquals(t.forward().size() + t.backward().size(), t.answered(), summary);
        assertTrue(t.answered() >= 6 * CALLS, summary);
        if (mustReconnect) {
            assertTrue(reconnect, "no reconnect: " + summary);
        }
        // the impairment was real: requesters retried (timeout or NAK), responders saw duplicates or gaps
        long seen = 0;
        for (String counter : evidence) {
            seen += delta.getOrDefault(env("LOSSY_CLIENT_DEV") + "/" + counter, 0L)
                    + delta.getOrDefault(env("LOSSY_SERVER_DEV") + "/" + counter, 0L);
        }
        assertTrue(seen > 0, "none of " + String.join(", ", evidence) + " grew: " + summary);
        // both devices carried the calls (routed over the veth, not through rxe's loopback)
        assertTrue(delta.getOrDefault(env("LOSSY_CLIENT_DEV") + "/sent_pkts", 0L) > 6 * CALLS
                && delta.getOrDefault(env("LOSSY_SERVER_DEV") + "/sent_pkts", 0L) > 6 * CALLS, summary);
        // every kind really went its way, counted over all the client's connections (a
        // reconnect late in the run may leave the last one none of a kind: that kind's
        // callers had finished)
        assertTrue(ReconnectVerbsTest.waitFor(() -> clientConnections.size() == client.reconnects() + 1),
                clientConnections.size() + " connections seen: " + summary);
        long longCallsSent = clientConnections.stream().mapToLong(x -> x.stats().longCallsSent()).sum();
        long clientReads = clientConnections.stream().mapToLong(x -> x.stats().rdmaReads()).sum();
        assertTrue(longCallsSent >= CALLS, "long calls sent by the client: " + longCallsSent + "; " + summary);
        assertTrue(server.stats().replyChunksUsed() >= CALLS, summary);
        assertTrue(server.stats().rdmaReads() > 0 && server.stats().rdmaWrites() > 0, summary);
        assertTrue(clientReads >= CALLS, "backward long calls pulled by the client: " + clientReads + "; " + summary);
        assertTrue(ReconnectVerbsTest.waitFor(() -> c.outstandingCalls() == 0 && c.peerOutstandingCalls() == 0
                && c.heldReceives() == 0), "the connection did not settle: " + summary);
        assertTrue(c.isOpen());
    }

    /** Both ends' state, both devices' QPs and counters, and the threads: what a stall leaves behind. */
    private String stallReport() {
        StringBuilder b = new StringBuilder("lossy link: STALL, no call answered for 30 s\n");
        Connection cc = client.connection();
        b.append(state("client", cc));
        for (Connection sc : server.connections()) {
            b.append(state("server", sc));
        }
        b.append(run("rdma", "res", "show", "qp")).append(run("rdma", "res", "show", "cq"));
        b.append(run(link, "counters")).append(run(link, "show"));
        Thread.getAllStackTraces().forEach((t, st) -> {
            b.append("thread ").append(t.getName()).append(' ').append(t.getState()).append('\n');
            for (int i = 0; i < Math.min(st.length, 12); i++) {
                b.append("    at ").append(st[i]).append('\n');
            }
        });
        return b.toString();
    }

    /**
     * The kernel stacks of this JVM's threads that are inside the RDMA stack (rxe, ib_core,
     * rdma_cm, uverbs) and not merely waiting for an event: where a verbs call blocks.
     */
    private static String kernelStacks() {
        StringBuilder b = new StringBuilder();
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    String stack = Files.readString(t.resolve("stack"));
                    if (stack.matches("(?s).*(rxe_|ib_destroy|ib_uverbs_destroy|rdma_destroy|uverbs_free|restrack|ib_cm).*")
                            && !stack.contains("ib_uverbs_event_read") && !stack.contains("ucma_get_event")) {
                        b.append("task ").append(t.getFileName()).append(' ')
                                .append(Files.readString(t.resolve("comm")).trim()).append('\n').append(stack);
                    }
                } catch (IOException e) {
                    // the task ended meanwhile, or no access to kernel stacks: nothing to show
                }
            }
        } catch (IOException e) {
            return "";
        }
        return b.toString();
    }

    private static String state(String who, Connection c) {
        return who + " " + c + ": open " + c.isOpen() + ", window " + c.ownCallWindow() + ", outstanding "
                + c.outstandingCalls() + ", abandoned " + c.abandonedCalls() + ", waiting " + c.waitingCalls()
                + ", peer's outstanding " + c.peerOutstandingCalls() + ", posted receives " + c.postedReceives()
                + ", held " + c.heldReceives() + "; " + c.stats() + "\n";
    }

    private static String run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            p.waitFor(30, TimeUnit.SECONDS);
            return "$ " + String.join(" ", cmd) + "\n" + out;
        } catch (IOException | InterruptedException e) {
            return "$ " + String.join(" ", cmd) + ": " + e + "\n";
        }
    }

    private static boolean waitFor(java.util.function.BooleanSupplier p, int seconds) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!p.getAsBoolean() && System.nanoTime() < end) {
            Thread.sleep(50);
        }
        return p.getAsBoolean();
    }

    /** rxe's hw_counters of both devices, "device/name" to value. */
    private static Map<String, Long> rxeCounters() throws IOException {
        Map<String, Long> m = new TreeMap<>();
        for (String dev : List.of(env("LOSSY_CLIENT_DEV"), env("LOSSY_SERVER_DEV"))) {
            Path dir = Path.of("/sys/class/infiniband", dev, "ports/1/hw_counters");
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    m.put(dev + "/" + f.getFileName(), Long.parseLong(Files.readString(f).trim()));
                }
            }
        }
        return m;
    }

    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new TreeMap<>();
        after.forEach((k, v) -> {
            long n = v - before.getOrDefault(k, 0L);
            if (n != 0) {
                d.put(k, n);
            }
        });
        return d;
    }

    /** The link's impairment, on both ends: netem parameters, none for a clean link. */
    private void impair(String... netem) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(link, "set"));
        cmd.addAll(List.of(netem));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            fail(String.join(" ", cmd) + " failed: " + out);
        }
    }
}
