package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.EndpointVerbsTest.closeAndCheckNothingLeft;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;
import static org.rpcrdma.transport.ReconnectVerbsTest.waitFor;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.xdr.Xdr;

/**
 * A server whose connections complete on a fixed group of shared completion queues
 * ({@link RpcRdmaOptions.Builder#completionThreads}), in each completion mode, on real verbs:
 * every call of 2 and then 20 clients answered with its own XID and bytes, backward calls
 * to a subset answered (from futures and from a blocking caller, which on a shared queue
 * waits for the group's thread), the server's threads the same at 20 connections as at 2,
 * as many completion queues as the group's size, and nothing native left at the end.
 */
@Tag("verbs")
class PollerGroupVerbsTest {
    private static final int THREADS = 2;
    private static final int CALLS = 8;
    /** Entries of a small completion queue: two connections with default credits and no shared receives. */
    private static final int SMALL_CQ = 400;

    private RpcRdmaServer server;
    private final List<RpcRdmaClient> clients = new ArrayList<>();
    private final List<Connection> serverSide = new CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        List<AutoCloseable> all = new ArrayList<>(clients);
        all.add(server);
        closeAndCheckNothingLeft(all.toArray(new AutoCloseable[0]));
    }

    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void eventsTwentyClientsOnTwoCompletionThreads() throws Exception {
        clientsOnAGroup(RpcRdmaOptions.builder().completionThreads(THREADS).build(), 20);
    }

    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void busyPollTwentyClientsOnTwoCompletionThreads() throws Exception {
        clientsOnAGroup(RpcRdmaOptions.builder().completionThreads(THREADS).busyPoll(true).build(), 20);
    }

    /** Adaptive, with the shared receive queue: its receives complete on the group's queues too. */
    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void adaptiveTwentyClientsOnTwoCompletionThreadsWithSharedReceives() throws Exception {
        clientsOnAGroup(RpcRdmaOptions.builder().completionThreads(THREADS).pollSpinMicros(50).sharedReceives(256)
                .build(), 20);
    }

    /**
     * Completion queues of {@value #SMALL_CQ} entries hold two connections each (about 190
     * entries each with default credits): the group opens more queues as clients come, on its
     * two threads, and every client is served, the first ones on queues that came later too.
     */
    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void eventsAGroupWhoseQueuesAreFullGrowsByQueuesNotThreads() throws Exception {
        clientsOnAGroup(RpcRdmaOptions.builder().completionThreads(THREADS).build(), 12, SMALL_CQ);
    }

    /** Adaptive, with shared receives: each small queue keeps room for all of them, so it holds one connection. */
    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void adaptiveAGroupWhoseQueuesAreFullGrowsWithSharedReceives() throws Exception {
        clientsOnAGroup(RpcRdmaOptions.builder().completionThreads(THREADS).pollSpinMicros(50).sharedReceives(128)
                .build(), 8, SMALL_CQ);
    }

    /**
     * The group outlives the connection it was made for: after the first client (whose
     * cm_id brought the device) left, clients that fill the group's queues still connect,
     * on a queue the group opens then.
     */
    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void aGroupOpensQueuesAfterTheConnectionItWasMadeForLeft() throws Exception {
        InetAddress ip = deviceAddress();
        RpcRdmaOptions so = RpcRdmaOptions.builder().completionThreads(THREADS).connectTimeoutMillis(120_000)
                .chunkMemoryBytes(0).build();
        RpcRdmaOptions co = RpcRdmaOptions.builder().backwardCredits(2).connectTimeoutMillis(120_000)
                .chunkMemoryBytes(0).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), so, echo(), serverSide::add, SMALL_CQ);
        connect(ip, co, 2);
        callEach(0);
        clients.removeFirst().close();
        assertTrue(waitFor(() -> server.connections().size() == 1), "the server saw the first client leave");
        // two queues of two connections each: the fourth newcomer needs a third queue
        connect(ip, co, 4);
        callEach(1);
        assertTrue(server.completionQueues() > THREADS, "the group grew: " + server.completionQueues());
    }

    private void clientsOnAGroup(RpcRdmaOptions serverOptions, int n) throws Exception {
        clientsOnAGroup(serverOptions, n, Integer.MAX_VALUE);
    }

    /**
     * {@code n} clients against a server with options {@code serverOptions} whose completion
     * queues have at most {@code cqEntries} entries; the clients wait on events (20 spinning
     * client pollers would starve the guest's two vCPUs).
     */
    private void clientsOnAGroup(RpcRdmaOptions serverOptions, int n, int cqEntries) throws Exception {
        InetAddress ip = deviceAddress();
        boolean grows = cqEntries < Integer.MAX_VALUE;
        RpcRdmaOptions so = serverOptions.toBuilder().connectTimeoutMillis(120_000).chunkMemoryBytes(0).build();
        RpcRdmaOptions co = RpcRdmaOptions.builder().backwardCredits(2).connectTimeoutMillis(120_000)
                .chunkMemoryBytes(0).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), so, echo(), serverSide::add, cqEntries);
        connect(ip, co, 2);
        callEach(0);
        int serverThreadsAt2 = threads("rpcrdma-server");
        assertEquals(THREADS, threads("rpcrdma-server-cq"), "one thread per completion queue of the group");
        assertEquals(THREADS, server.completionQueues());

        connect(ip, co, n - 2);
        callEach(1);
        assertTrue(waitFor(() -> serverSide.size() == n));
        assertEquals(serverThreadsAt2, threads("rpcrdma-server"), "the server's threads at " + n
                + " connections as at 2");
        if (grows) {
            assertTrue(server.completionQueues() > THREADS, "the group grew: " + server.completionQueues()
                    + " completion queues for " + n + " connections");
            assertTrue(server.completionQueues() < n, "still shared: " + server.completionQueues()
                    + " completion queues for " + n + " connections");
        } else {
            assertEquals(THREADS, server.completionQueues(), "no completion queue per connection");
        }

        // a client's blocking call: on its own queue the caller leads
        int xid = 0x6000_0001;
        assertArrayEquals(payload(xid), reply(xid, clients.get(1).connection().callAndWait(callMsg(xid, 1,
                payload(xid)), CallOptions.DEFAULT)));

        // backward calls to every fourth client, from futures and from a caller blocked on a shared queue
        List<CompletableFuture<ReceivedMessage>> back = new ArrayList<>();
        List<Integer> backXids = new ArrayList<>();
        for (int k = 0; k < n; k += 4) {
            clients.get(k).connection().enableBackchannel(echo()).get(60, TimeUnit.SECONDS);
        }
        for (int k = 0; k < n; k += 4) {
            Backchannel b = server.backchannel(clients.get(k).clientId());
            for (int j = 0; j < 4; j++) {
                int x = 0x7000_0000 | (k << 8) | j;
                backXids.add(x);
                back.add(b.call(callMsg(x, 9, payload(x)), CallOptions.DEFAULT));
            }
            int x = 0x7100_0000 | k;
            assertArrayEquals(payload(x), reply(x, b.callAndWait(callMsg(x, 9, payload(x)), CallOptions.DEFAULT)));
        }
        for (int i = 0; i < back.size(); i++) {
            assertArrayEquals(payload(backXids.get(i)), reply(backXids.get(i), back.get(i).get(60, TimeUnit.SECONDS)));
        }
        System.out.printf("completion group (%s): server threads %d at 2 and %d at %d connections, %d completion"
                + " queues, channel wake-ups %d%n", mode(so), serverThreadsAt2, threads("rpcrdma-server"), n,
                server.completionQueues(), server.stats().channelWakeups());

        // all but one leave; the last one is still served, on a queue whose other QPs are gone
        for (int i = 1; i < clients.size(); i++) {
            clients.get(i).close();
        }
        assertTrue(waitFor(() -> server.connections().size() == 1), "the server saw every disconnect but one");
        assertArrayEquals(payload(42), reply(42, clients.get(0).connection().call(callMsg(42, 1, payload(42)))
                .get(60, TimeUnit.SECONDS)));
        assertEquals(THREADS, threads("rpcrdma-server-cq"));
        assertEquals(0, server.stats().creditViolations());
        if (grows) {
            // a newcomer takes the room the others left, on a queue the group already has
            int queues = server.completionQueues();
            connect(ip, co, 1);
            assertArrayEquals(payload(43), reply(43, clients.getLast().connection().call(callMsg(43, 1, payload(43)))
                    .get(60, TimeUnit.SECONDS)));
            assertEquals(queues, server.completionQueues(), "no queue opened while the others have room");
        }
    }

    private static String mode(RpcRdmaOptions o) {
        return o.busyPoll() ? "busy-poll" : o.pollSpinMicros() > 0 ? "adaptive" : "events";
    }

    private void connect(InetAddress ip, RpcRdmaOptions o, int n) {
        for (int i = 0; i < n; i++) {
            clients.add(RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o));
        }
    }

    /** CALLS calls from every client at once, each answered with its own XID and bytes. */
    private void callEach(int round) throws Exception {
        List<CompletableFuture<ReceivedMessage>> f = new ArrayList<>();
        List<Integer> xids = new ArrayList<>();
        for (int k = 0; k < clients.size(); k++) {
            for (int j = 0; j < CALLS; j++) {
                int xid = (round << 24) | (k << 12) | j;
                xids.add(xid);
                f.add(clients.get(k).connection().call(callMsg(xid, 1, payload(xid))));
            }
        }
        for (int i = 0; i < f.size(); i++) {
            assertArrayEquals(payload(xids.get(i)), reply(xids.get(i), f.get(i).get(120, TimeUnit.SECONDS)));
        }
    }

    private static byte[] reply(int xid, ReceivedMessage m) {
        try (m) {
            byte[] all = m.toByteArray();
            assertEquals(xid, Xdr.getInt(MemorySegment.ofArray(all), 0), "the reply's XID");
            return Arrays.copyOfRange(all, 24, all.length);
        }
    }

    private static byte[] payload(int xid) {
        byte[] b = new byte[64];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (xid * 31 + i);
        }
        return b;
    }

    private static int threads(String prefix) {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix)) {
                n++;
            }
        }
        return n;
    }
}
