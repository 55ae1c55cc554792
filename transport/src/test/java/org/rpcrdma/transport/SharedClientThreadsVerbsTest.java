package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;
import static org.rpcrdma.transport.EndpointVerbsTest.closeAndCheckNothingLeft;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.verbs.ProcessProbe;

/**
 * Clients that share threads ({@code shareClientThreads}): however many there are, the JVM
 * has the group's completion threads and one rdma_cm thread for them all; every client's
 * calls are answered; a server going away reaches each client through the shared rdma_cm
 * thread (its calls fail, typed); and the last close takes the shared threads and every
 * verbs object with it.
 */
@Tag("verbs")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SharedClientThreadsVerbsTest {
    /** The kernel's (15-character) name of every client thread: pollers, group threads, rdma_cm threads. */
    private static final String CLIENT_THREADS = "rpcrdma-client-";
    private static final int CLIENTS = 8;
    private static final int GROUP_THREADS = 2;

    private RpcRdmaServer server;
    private final List<RpcRdmaClient> clients = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        List<AutoCloseable> all = new ArrayList<>(clients);
        all.add(server);
        closeAndCheckNothingLeft(all.toArray(AutoCloseable[]::new));
    }

    @Test
    void manyClientsShareTheirThreadsAndTheLastCloseEndsThem() throws Exception {
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), EndpointVerbsTest.OPTS, echo(), null);
        // connects of a loaded TCG guest can take tens of seconds
        RpcRdmaOptions o = EndpointVerbsTest.OPTS.toBuilder().shareClientThreads(true).completionThreads(GROUP_THREADS)
                .reconnectAttempts(0).connectTimeoutMillis(120_000).build();
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o));
        }
        List<CompletableFuture<ReceivedMessage>> replies = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            replies.add(clients.get(i).call(callMsg(100 + i, 1, new byte[] {(byte) i, 2, 3, 4})));
        }
        for (int i = 0; i < CLIENTS; i++) {
            assertArrayEquals(new byte[] {(byte) i, 2, 3, 4}, results(replies.get(i).get(60, TimeUnit.SECONDS)),
                    "client " + i + "'s reply");
        }
        List<Integer> tids = ProcessProbe.threadsNamed(CLIENT_THREADS);
        assertEquals(GROUP_THREADS + 1, tids.size(), () -> CLIENTS + " clients: the group's " + GROUP_THREADS
                + " completion threads and one rdma_cm thread expected, found " + tids.size() + " client threads");

        // the server goes: each client hears its DISCONNECTED on the shared thread, and its calls fail
        server.close();
        for (int i = 0; i < CLIENTS; i++) {
            RpcRdmaClient c = clients.get(i);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> awaitFailure(c), "client " + i + " after the server closed");
            assertInstanceOf(RpcRdmaException.class, e.getCause(), "client " + i + ": " + e.getCause());
        }

        for (RpcRdmaClient c : clients) {
            c.close();
        }
        assertTrue(noClientThreadsWithin(5000),
                () -> "client threads still run after the last close: " + ProcessProbe.threadsNamed(CLIENT_THREADS));
    }

    /** A call after the server went, until one fails (one sent before the disconnect arrived may still be taken). */
    private static void awaitFailure(RpcRdmaClient c) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() - deadline < 0) {
            CompletableFuture<ReceivedMessage> f;
            try {
                f = c.call(callMsg(7, 1, new byte[] {1}));
            } catch (RpcRdmaException refused) { // known lost already: refused at once
                throw new ExecutionException(refused);
            }
            f.get(30, TimeUnit.SECONDS);
            Thread.sleep(50);
        }
    }

    private static boolean noClientThreadsWithin(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!ProcessProbe.threadsNamed(CLIENT_THREADS).isEmpty()) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }
}
