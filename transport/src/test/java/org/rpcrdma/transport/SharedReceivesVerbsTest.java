package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ReconnectVerbsTest.waitFor;
import static org.rpcrdma.transport.EndpointVerbsTest.closeAndCheckNothingLeft;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.xdr.Xdr;

/**
 * A server whose connections take their receives from one shared receive queue
 * ({@link RpcRdmaOptions.Builder#sharedReceives}): 20 (and 100) clients on real verbs,
 * every call answered with its own XID and bytes and executed exactly once (the executing
 * side counts per XID), backward calls to a random subset, no connection refused, registered
 * receive memory the same at 2 connections as at all of them, the grants of all clients
 * together never more than the receives that back them, and every buffer back on the
 * queue at the end.
 */
@Tag("verbs")
class SharedReceivesVerbsTest {
    private static final int SHARED = 256;
    /** What backs forward grants: SHARED less an eighth for backward replies and the watermark (8). */
    private static final int FORWARD = SHARED - SHARED / 8 - 8;
    private static final int CALLS = 16;

    private RpcRdmaServer server;
    private final List<RpcRdmaClient> clients = new ArrayList<>();
    private final List<Connection> serverSide = new CopyOnWriteArrayList<>();
    /** Executions per XID: forward calls by the server's handler, backward ones by the clients'. */
    private final Map<Integer, AtomicInteger> forwardRuns = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> backwardRuns = new ConcurrentHashMap<>();

    @AfterEach
    void tearDown() throws Exception {
        List<AutoCloseable> all = new ArrayList<>(clients);
        all.add(server);
        closeAndCheckNothingLeft(all.toArray(new AutoCloseable[0]));
    }

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void twentyClientsShareOneReceiveQueue() throws Exception {
        clientsShareOneReceiveQueue(20, 4, RpcRdmaOptions.defaults().chunkMemoryBytes());
    }

    /** 100 connections (in one guest JVM: no chunk memory, which would be 4 MiB a side per connection). */
    @Test
    @Timeout(value = 1800, unit = TimeUnit.SECONDS)
    void aHundredClientsShareOneReceiveQueue() throws Exception {
        clientsShareOneReceiveQueue(100, 10, 0);
    }

    /** Counts each call's execution under its XID, then echoes it. */
    private static CallHandler counting(Map<Integer, AtomicInteger> runs) {
        CallHandler echo = echo();
        return c -> {
            runs.computeIfAbsent(c.xid(), k -> new AtomicInteger()).incrementAndGet();
            echo.handle(c);
        };
    }

    /** Every XID of {@code xids} executed once, and nothing else executed. */
    private static void assertExecutedOnce(List<Integer> xids, Map<Integer, AtomicInteger> runs, String what) {
        for (int x : xids) {
            AtomicInteger r = runs.get(x);
            assertEquals(1, r == null ? 0 : r.get(), what + " XID " + Integer.toHexString(x) + " executions");
        }
        assertEquals(xids.size(), runs.size(), what + ": executions of XIDs nobody sent");
    }

    /** {@code n} clients, backward calls to a random {@code 1/backEvery} of them. */
    private void clientsShareOneReceiveQueue(int n, int backEvery, long chunkMemory) throws Exception {
        InetAddress ip = deviceAddress();
        RpcRdmaOptions o = RpcRdmaOptions.builder().sharedReceives(SHARED).backwardCredits(2)
                .connectTimeoutMillis(120_000).chunkMemoryBytes(chunkMemory).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, counting(forwardRuns), serverSide::add);
        connect(ip, o, 2);
        callEach(0);
        long memoryAt2 = server.receiveMemoryBytes();
        int threadsAt2 = serverPollers();
        assertEquals((long) SHARED * o.inlineThreshold(), memoryAt2, "one queue's buffers, none per connection");

        long connectStart = System.nanoTime();
        connect(ip, o, n - 2);
        long connectMillisEach = (System.nanoTime() - connectStart) / 1_000_000 / (n - 2);
        long callStart = System.nanoTime();
        callEach(1);
        long callsPerSecond = (long) n * CALLS * 1_000_000_000L / (System.nanoTime() - callStart);
        assertEquals(memoryAt2, server.receiveMemoryBytes(), "registered receive memory at " + n + " connections as at 2");
        int windows = 0;
        for (RpcRdmaClient c : clients) {
            int w = c.connection().ownCallWindow();
            assertTrue(w >= 1, "never 0: " + w);
            windows += w;
        }
        assertTrue(windows <= FORWARD, "the clients' windows add up to " + windows + ", more than the " + FORWARD
                + " receives that back them");

        // no connection refused: the server holds every one
        assertTrue(waitFor(() -> serverSide.size() == n), serverSide.size() + " of " + n + " connections accepted");
        assertEquals(n, server.connections().size());

        // backward calls to a random subset of the clients: their replies land in the shared queue too
        List<Integer> subset = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            subset.add(k);
        }
        long seed = System.nanoTime();
        Collections.shuffle(subset, new Random(seed));
        subset = subset.subList(0, (n + backEvery - 1) / backEvery);
        System.out.println("backward calls to clients " + subset + " (seed " + seed + ")");
        List<CompletableFuture<ReceivedMessage>> back = new ArrayList<>();
        List<Integer> backXids = new ArrayList<>();
        for (int k : subset) {
            clients.get(k).connection().enableBackchannel(counting(backwardRuns)).get(60, TimeUnit.SECONDS);
        }
        for (int k : subset) {
            Backchannel b = server.backchannel(clients.get(k).clientId());
            for (int j = 0; j < 4; j++) {
                int xid = 0x7000_0000 | (k << 8) | j;
                backXids.add(xid);
                back.add(b.call(callMsg(xid, 9, payload(xid)), CallOptions.DEFAULT));
            }
        }
        assertEquals(4 * ((n + backEvery - 1) / backEvery), back.size());
        for (int i = 0; i < back.size(); i++) {
            check(backXids.get(i), back.get(i).get(60, TimeUnit.SECONDS));
        }
        assertExecutedOnce(backXids, backwardRuns, "backward");
        assertExecutedOnce(forwardXids, forwardRuns, "forward");
        System.out.printf("shared receives: threads rpcrdma-server-cq %d at 2, %d at %d connections;"
                + " receive memory %d bytes at both; client windows %d in all; connect %d ms per client;"
                + " %d calls/s (%d calls at once)%n", threadsAt2, serverPollers(), n, memoryAt2, windows,
                connectMillisEach, callsPerSecond, n * CALLS);

        // all but one leave: every buffer is back on the queue (or free under the watermark)
        for (int i = 1; i < clients.size(); i++) {
            clients.get(i).close();
        }
        assertTrue(waitFor(() -> server.connections().size() == 1), "the server saw every disconnect but one");
        Connection last = server.connections().get(0);
        assertTrue(waitFor(() -> last.heldReceives() == 0));
        assertTrue(last.postedReceives() > SHARED - 8, "posted " + last.postedReceives() + " of " + SHARED);
        assertArrayEquals(payload(42), reply(42, clients.get(0).connection().call(callMsg(42, 1, payload(42)))
                .get(60, TimeUnit.SECONDS)));
        assertEquals(0, server.stats().creditViolations());
    }

    private void connect(InetAddress ip, RpcRdmaOptions o, int n) {
        for (int i = 0; i < n; i++) {
            clients.add(RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o));
        }
    }

    /** The forward calls sent so far. */
    private final List<Integer> forwardXids = new ArrayList<>();

    /** CALLS calls from every client at once, each answered with its own XID and bytes. */
    private void callEach(int round) throws Exception {
        List<CompletableFuture<ReceivedMessage>> f = new ArrayList<>();
        List<Integer> xids = forwardXids;
        int first = xids.size();
        for (int k = 0; k < clients.size(); k++) {
            for (int j = 0; j < CALLS; j++) {
                int xid = (round << 24) | (k << 12) | j;
                xids.add(xid);
                f.add(clients.get(k).connection().call(callMsg(xid, 1, payload(xid))));
            }
        }
        for (int i = 0; i < f.size(); i++) {
            check(xids.get(first + i), f.get(i).get(120, TimeUnit.SECONDS));
        }
    }

    private static void check(int xid, ReceivedMessage m) {
        assertArrayEquals(payload(xid), reply(xid, m));
    }

    private static byte[] reply(int xid, ReceivedMessage m) {
        try (m) {
            byte[] all = m.toByteArray();
            assertEquals(xid, Xdr.getInt(MemorySegment.ofArray(all), 0), "the reply's XID");
            return java.util.Arrays.copyOfRange(all, 24, all.length);
        }
    }

    private static byte[] payload(int xid) {
        byte[] b = new byte[64];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (xid * 31 + i);
        }
        return b;
    }

    private static int serverPollers() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("rpcrdma-server-cq")) {
                n++;
            }
        }
        return n;
    }
}
