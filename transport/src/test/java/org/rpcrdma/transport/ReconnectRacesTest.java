package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.endpoint.ClientReconnector;
import org.rpcrdma.transport.link.InMemoryLink;
import org.rpcrdma.transport.rpc.CallRequest;
import org.rpcrdma.transport.rpc.ConnectionEngine;

/**
 * The real {@link ClientReconnector} over in-memory connections, raced with connection
 * losses: every call made with retry ends exactly once, answered (the client reconnects
 * every time), and nothing stays parked or outstanding after.
 */
class ReconnectRacesTest {
    /** A client of in-memory connections, each to a server that counts executions per XID and connection. */
    static final class Client implements AutoCloseable {
        final Map<Integer, AtomicInteger> executions = new ConcurrentHashMap<>();
        final List<InMemoryPair> pairs = new CopyOnWriteArrayList<>();
        final Set<InMemoryPair> destroyed = ConcurrentHashMap.newKeySet();
        /** While set, a reconnect waits here before it connects (a reconnect under way). */
        final AtomicReference<CountDownLatch> connectGate = new AtomicReference<>();
        final ClientReconnector<InMemoryPair> reconnector;
        /** The server's side of the client's backchannel, bound on each connection it is enabled on; or null. */
        final Backchannel backchannel;
        /** Backward calls executed by the client, per XID. */
        final Map<Integer, AtomicInteger> backwardExecutions = new ConcurrentHashMap<>();

        Client(RpcRdmaOptions o) {
            this(o, null);
        }

        Client(RpcRdmaOptions o, RpcRdmaOptions serverOptions) {
            backchannel = serverOptions == null ? null : new Backchannel(42, serverOptions,
                    (b, close) -> close.getAsBoolean());
            AtomicReference<ClientReconnector<InMemoryPair>> self = new AtomicReference<>();
            reconnector = new ClientReconnector<>(InMemoryPair.ADDRESS, o, () -> {
                CountDownLatch gate = connectGate.get();
                if (gate != null) {
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
                return open(o, self.get());
            }, new ClientReconnector.Attachments<>() {
                @Override
                public ConnectionEngine engine(InMemoryPair p) {
                    return p.client().engine();
                }

                @Override
                public void destroy(InMemoryPair p) {
                    // closed at the end (closing it here would refuse a late hand-over, which a
                    // released verbs connection does not): each test keeps its losses to a few hundred
                    destroyed.add(p);
                }

                @Override
                public boolean destroyed(InMemoryPair p) {
                    return destroyed.contains(p);
                }
            });
            self.set(reconnector);
            reconnector.first(open(o, reconnector));
        }

        private InMemoryPair open(RpcRdmaOptions o, ClientReconnector<InMemoryPair> r) {
            CallHandler echo = echo();
            InMemoryPair p = InMemoryPair.open(o, call -> {
                executions.computeIfAbsent(call.xid(), k -> new AtomicInteger()).incrementAndGet();
                echo.handle(call);
            });
            ConnectionEngine e = p.client().engine();
            e.orphanSink(os -> r.adopt(e, os));
            pairs.add(p);
            if (backchannel != null) {
                e.backchannel().clientInstance(42); // as ClientAttachment: the same on every connection
                p.server().engine().backchannel().listener((c, id) -> backchannel.bind(c)); // as RpcRdmaServer
                if (r.current() == null) { // the first connection; the reconnector enables it on the next ones
                    p.client().enableBackchannel(backwardEcho()).join();
                }
            }
            return p;
        }

        private CallHandler backwardEcho() {
            CallHandler echo = echo();
            return call -> {
                backwardExecutions.computeIfAbsent(call.xid(), k -> new AtomicInteger()).incrementAndGet();
                echo.handle(call);
            };
        }

        /** As the QP going to error: both ends see the loss. */
        void drop(InMemoryPair p) {
            RawAccess.link(p.server()).disconnect();
        }

        /** What RpcRdmaClient's callback and blocking shapes do: the open connection if any, else parked. */
        CompletableFuture<ReceivedMessage> call(MemorySegment m, CallOptions o, boolean direct) {
            ConnectionEngine c = direct ? reconnector.openConnection() : null;
            if (c != null) {
                LockSupport.parkNanos(ThreadLocalRandom.current().nextInt(50_000)); // the connection may go meanwhile
                return c.call(m, o);
            }
            return reconnector.call(m, o);
        }

        @Override
        public void close() {
            reconnector.close();
            for (InMemoryPair p : pairs) {
                p.close();
            }
        }
    }

    private static final CallOptions RETRY = CallOptions.timeout(20, TimeUnit.SECONDS).withRetry(true);

    /**
     * A lost connection's calls reach the reconnector late (a caller that took the
     * connection before it was lost submits on it after), while the connection that
     * replaced it is itself lost and the client is reconnecting again: the calls wait for
     * the next connection like every other call with retry, they do not fail.
     */
    @Test
    void lateCallsOfAnOlderConnectionWaitForTheReconnectUnderWay() throws Exception {
        try (Client client = new Client(RpcRdmaOptions.builder().reconnectAttempts(5).build())) {
            InMemoryPair first = client.reconnector.current();
            ConnectionEngine older = client.reconnector.openConnection();
            CompletableFuture<ReceivedMessage> a = client.reconnector.call(callMsg(0x100, 1, new byte[] {1}), RETRY);
            assertArrayEquals(new byte[] {1}, results(a.get(5, TimeUnit.SECONDS)));

            client.drop(first); // reconnects: nothing waiting, no backchannel -> released; the next call reconnects
            assertTrue(CoreDefectsTest.await(() -> !older.isOpen(), 5_000));
            CompletableFuture<ReceivedMessage> b = client.reconnector.call(callMsg(0x101, 1, new byte[] {2}), RETRY);
            assertArrayEquals(new byte[] {2}, results(b.get(5, TimeUnit.SECONDS)));
            InMemoryPair second = client.reconnector.current();
            assertTrue(second != first, "reconnected");

            CountDownLatch gate = new CountDownLatch(1);
            client.connectGate.set(gate); // the next reconnect is under way until the gate opens
            CompletableFuture<ReceivedMessage> c = client.call(callMsg(0x102, 1, new byte[] {3}), RETRY, false);
            client.drop(second);
            CompletableFuture<ReceivedMessage> d = client.reconnector.call(callMsg(0x103, 1, new byte[] {4}), RETRY);
            // the late one: made on the first connection by a caller that took it before it was lost
            CompletableFuture<ReceivedMessage> late = older.call(callMsg(0x104, 1, new byte[] {5}), RETRY);
            gate.countDown();
            client.connectGate.set(null);

            assertArrayEquals(new byte[] {3}, results(c.get(5, TimeUnit.SECONDS)));
            assertArrayEquals(new byte[] {4}, results(d.get(5, TimeUnit.SECONDS)));
            assertArrayEquals(new byte[] {5}, results(late.get(5, TimeUnit.SECONDS)),
                    "a call with retry handed over late waits for the reconnect");
            assertEquals(0, client.reconnector.parked());
            assertEquals(0, client.reconnector.current().client().engine().requester().outstanding());
        }
    }

    /**
     * A call that needs chunks (a Reply chunk here), made late on a lost connection whose
     * link was already released (its chunk memory gone, as {@code ClientAttachment.destroy}
     * leaves a verbs link): it was never sent, so it is handed over and answered on the next
     * connection with its XID (RFC 8167 §5.4), not refused for want of chunk memory.
     */
    @Test
    void aChunkedCallMadeLateOnAReleasedConnectionIsHandedOver() throws Exception {
        try (Client client = new Client(RpcRdmaOptions.builder().reconnectAttempts(5).build())) {
            InMemoryPair first = client.reconnector.current();
            ConnectionEngine older = client.reconnector.openConnection();
            CallOptions chunked = RETRY.withMaxReplyBytes(16 * 1024); // over the inline threshold: a Reply chunk
            assertArrayEquals(new byte[] {1}, results(older.call(callMsg(0x200, 1, new byte[] {1}), chunked)
                    .get(5, TimeUnit.SECONDS)));

            client.drop(first); // nothing to carry over: the lost connection is released at once
            assertTrue(CoreDefectsTest.await(() -> client.destroyed.contains(first), 5_000), "released");
            ((InMemoryLink) RawAccess.link(first.client())).release(); // what destroy does to a verbs link
            CompletableFuture<ReceivedMessage> late = older.call(callMsg(0x201, 1, new byte[] {2}), chunked);

            ReceivedMessage reply;
            try {
                reply = late.get(5, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw new AssertionError("the late chunked call failed instead of being handed over: " + e.getCause(), e);
            }
            assertArrayEquals(new byte[] {2}, results(reply));
            assertTrue(client.reconnector.current() != first, "reconnected for it");
            assertEquals(1, client.executions.get(0x201).get(), "executed once, on the next connection");
            assertEquals(0, client.reconnector.parked());
            assertEquals(0, client.reconnector.current().client().engine().requester().outstanding());
        }
    }

    /**
     * The same late chunked call on a lost connection that nobody reconnects (no owner
     * takes its calls): it fails as every call not sent there does, with
     * {@link ConnectionLostException}, its chunks never prepared on the released link.
     */
    @Test
    void aChunkedCallMadeLateOnAReleasedConnectionWithoutOwnerFailsAsLost() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().build(), echo())) {
            p.client().engine().onLinkLost(new RpcRdmaException("test: link down"));
            assertTrue(CoreDefectsTest.await(() -> !p.client().isOpen(), 5_000), "lost");
            ((InMemoryLink) RawAccess.link(p.client())).release();
            CompletableFuture<ReceivedMessage> late = p.client().engine().call(callMsg(0x202, 1, new byte[] {3}),
                    CallOptions.timeout(5, TimeUnit.SECONDS).withMaxReplyBytes(16 * 1024));
            ExecutionException e = assertThrows(ExecutionException.class, () -> late.get(5, TimeUnit.SECONDS));
            assertInstanceOf(ConnectionLostException.class, e.getCause(), String.valueOf(e.getCause()));
            assertEquals(0, p.client().engine().requester().outstanding());
        }
    }

    /**
     * Many rounds: callers keep calls with retry in flight (through the open connection
     * and through the reconnector) while connections are lost at random moments; every
     * call is answered exactly once, executed at least once, and nothing is left parked
     * or outstanding.
     */
    @Test
    void everyCallWithRetryIsAnsweredAcrossRacingLosses() throws Exception {
        int callers = 4;
        int perCaller = 400;
        try (Client client = new Client(RpcRdmaOptions.builder().reconnectAttempts(5).credits(4).build())) {
            AtomicBoolean calling = new AtomicBoolean(true);
            AtomicInteger drops = new AtomicInteger();
            Thread chaos = Thread.ofPlatform().name("chaos").start(() -> {
                while (calling.get() && drops.get() < 60) { // each lost pair keeps its threads until the end
                    LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(200_000, 3_000_000));
                    client.drop(client.reconnector.current());
                    drops.incrementAndGet();
                }
            });
            List<CompletableFuture<ReceivedMessage>> futures = new CopyOnWriteArrayList<>();
            AtomicInteger issued = new AtomicInteger();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < callers; t++) {
                int base = 0x1000 * (t + 1);
                threads.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; (i < perCaller || drops.get() < 60) && i < 0xfff; i++) { // until 60 losses raced them
                        issued.incrementAndGet();
                        int xid = base + i;
                        byte[] arg = {(byte) xid, (byte) (xid >> 8)};
                        CompletableFuture<ReceivedMessage> f = client.call(callMsg(xid, 1, arg), RETRY, (i & 1) == 0);
                        futures.add(f.thenApply(m -> {
                            assertArrayEquals(arg, results(m));
                            return null;
                        }));
                        if (i % 8 == 7) {
                            f.exceptionally(x -> null).join(); // a window of about 8 per caller
                        }
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            calling.set(false);
            chaos.join();
            List<String> problems = new ArrayList<>();
            for (CompletableFuture<ReceivedMessage> f : futures) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    if (problems.size() < 5) {
                        problems.add(String.valueOf(e.getCause() == null ? e : e.getCause()));
                    }
                }
            }
            long failed = futures.stream().filter(CompletableFuture::isCompletedExceptionally).count();
            assertEquals(List.of(), problems, failed + " of " + futures.size() + " calls with retry did not get"
                    + " their reply across " + client.reconnector.reconnects() + " reconnects");
            assertEquals(issued.get(), client.executions.size(), "every call executed at least once");
            assertEquals(0, client.reconnector.parked(), "nothing parked after");
            // after the last loss the client reconnects at its next call (nothing to carry over)
            assertArrayEquals(new byte[] {9}, results(client.reconnector.call(callMsg(0x9999, 1, new byte[] {9}), RETRY)
                    .get(10, TimeUnit.SECONDS)));
            ConnectionEngine now = client.reconnector.openConnection();
            assertTrue(now != null, "connected after");
            assertTrue(CoreDefectsTest.await(() -> now.requester().outstanding() == 0
                    && now.requester().waiting() == 0, 5_000), "nothing outstanding after");
        }
    }

    /**
     * The soak's traffic in memory: forward calls with retry through the reconnector and
     * backward calls through the server's {@link Backchannel} (RFC 8167 §5.4: they wait for
     * the client and are sent again on its next connection), each with a timeout of its
     * own, some shorter than the outages, while connections are lost at random moments.
     * Every call ends exactly once: answered with its own reply, or failed with
     * {@link CallTimeoutException} no later than its deadline (plus a margin for a loaded
     * host); none fails with anything else, and afterwards nothing is parked on either
     * side and no call is outstanding.
     */
    @Test
    void forwardAndBackwardCallsEndByTheirDeadlineAcrossRacingLosses() throws Exception {
        for (int round = 0; round < 3; round++) { // each round's connections are released after it
            forwardAndBackwardRound(300);
        }
    }

    private static void forwardAndBackwardRound(int perCaller) throws Exception {
        RpcRdmaOptions o = RpcRdmaOptions.builder().reconnectAttempts(5).credits(4).backwardCredits(2).build();
        try (Client client = new Client(o, RpcRdmaOptions.builder().build())) {
            AtomicBoolean calling = new AtomicBoolean(true);
            AtomicInteger drops = new AtomicInteger();
            Set<InMemoryPair> dropped = ConcurrentHashMap.newKeySet();
            Thread chaos = Thread.ofPlatform().name("chaos").start(() -> {
                while (calling.get() && drops.get() < 30) { // each lost pair keeps its threads until the end
                    LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(500_000, 5_000_000));
                    InMemoryPair current = client.reconnector.current();
                    if (dropped.add(current)) { // one loss each connection (its loss reaches the client a moment later)
                        client.drop(current);
                        drops.incrementAndGet();
                    }
                }
            });
            AtomicInteger issued = new AtomicInteger();
            Map<Integer, Ended> ends = new ConcurrentHashMap<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                boolean backward = t >= 2;
                int base = (backward ? 0x40000000 : 0) | 0x10000 * (t + 1);
                threads.add(Thread.ofPlatform().start(() -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    // at least perCaller calls, and on until 30 losses raced them
                    for (int i = 0; (i < perCaller || drops.get() < 30) && i < 0xffff; i++) {
                        issued.incrementAndGet();
                        int xid = base + i;
                        byte[] arg = {(byte) xid, (byte) (xid >> 8)};
                        long timeoutMs = i % 4 == 0 ? rnd.nextLong(1, 20) : 20_000;
                        CallOptions co = CallOptions.timeout(timeoutMs, TimeUnit.MILLISECONDS).withRetry(true);
                        long start = System.nanoTime();
                        MemorySegment m = callMsg(xid, 1, arg);
                        CompletableFuture<ReceivedMessage> f = backward ? client.backchannel.call(m, co)
                                : client.call(m, co, (i & 1) == 0);
                        CompletableFuture<Void> ended = f.handle((r, x) -> {
                            ends.put(xid, new Ended(timeoutMs, System.nanoTime() - start,
                                    x != null ? x : java.util.Arrays.equals(arg, results(r)) ? null
                                            : new AssertionError("wrong reply")));
                            return null;
                        });
                        if (i % 8 == 7) {
                            ended.join(); // a window of about 8 per caller
                        }
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            calling.set(false);
            chaos.join();
            // the client comes back (its backchannel makes it reconnect after every loss)
            assertTrue(CoreDefectsTest.await(() -> ends.size() == issued.get(), 60_000),
                    (issued.get() - ends.size()) + " calls neither answered nor failed 60 s after the last loss;"
                    + " parked: client " + client.reconnector.parked() + ", backchannel "
                    + client.backchannel.waitingCalls());
            List<String> problems = new ArrayList<>();
            int timedOut = 0;
            for (var e : new java.util.TreeMap<>(ends).entrySet()) {
                Ended d = e.getValue();
                Throwable x = d.failure instanceof java.util.concurrent.CompletionException c ? c.getCause() : d.failure;
                long ms = TimeUnit.NANOSECONDS.toMillis(d.nanos);
                if (x instanceof CallTimeoutException) {
                    timedOut++;
                }
                String p = x != null && !(x instanceof CallTimeoutException) ? "failed: " + x
                        : ms > d.timeoutMs + 3_000 ? "ended after " + ms + " ms, its timeout " + d.timeoutMs + " ms"
                        : null;
                if (p != null && problems.size() < 8) {
                    problems.add("0x" + Integer.toHexString(e.getKey()) + " " + p);
                }
            }
            assertEquals(List.of(), problems, "across " + client.reconnector.reconnects() + " reconnects, "
                    + timedOut + " timed out");
            assertEquals(0, client.reconnector.parked(), "nothing parked by the client after");
            assertTrue(CoreDefectsTest.await(() -> client.backchannel.waitingCalls() == 0, 5_000),
                    "nothing parked by the backchannel after");
            // a client with a backchannel reconnects after every loss (RFC 8167 §5.4)
            assertTrue(CoreDefectsTest.await(() -> client.reconnector.openConnection() != null
                    && client.backchannel.connection().isOpen(), 10_000), "connected after, the backchannel bound");
            assertTrue(CoreDefectsTest.await(() -> client.reconnector.reconnects() == drops.get(), 5_000),
                    client.reconnector.reconnects() + " reconnects after " + drops.get() + " losses: one after each");
            ConnectionEngine now = client.reconnector.openConnection();
            Connection server = client.backchannel.connection();
            assertTrue(CoreDefectsTest.await(() -> now.requester().outstanding() == now.requester().abandonedInFlight()
                    && now.requester().waiting() == 0 && server.engine().requester().waiting() == 0
                    && server.engine().requester().outstanding() == server.engine().requester().abandonedInFlight(),
                    5_000), "no call outstanding after but abandoned ones awaiting their late reply");
        }
    }

    private record Ended(long timeoutMs, long nanos, Throwable failure) {}
}
