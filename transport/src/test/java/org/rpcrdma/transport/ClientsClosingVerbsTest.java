package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;
import static org.rpcrdma.transport.EndpointVerbsTest.closeAndCheckNothingLeft;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.link.VerbsLink;

/**
 * Many clients of one JVM closed at once (an application shutting down, the scale bench's
 * end): every client's completion poller stops when its link is destroyed, none is left
 * behind for the destroy to wait out (VerbsLink gives up on one after 2 s, with a warning,
 * and each such close took that long).
 */
@Tag("verbs")
class ClientsClosingVerbsTest {
    private static final int CLIENTS = 20;

    private RpcRdmaServer server;
    private final List<RpcRdmaClient> clients = new ArrayList<>();
    @AfterEach
    void tearDown() throws Exception {
        List<AutoCloseable> all = new ArrayList<>(clients);
        all.add(server);
        closeAndCheckNothingLeft(all.toArray(new AutoCloseable[0]));
    }

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void twentyClientsClosedTogetherStopTheirPollersPromptly() throws Exception {
        long freedPastBefore = VerbsLink.pollersFreedPast();
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        // 120 s to connect: twenty connects in a guest that shares its host's cores took over 30 s each at times
        RpcRdmaOptions o = EndpointVerbsTest.OPTS.toBuilder().connectTimeoutMillis(120_000).backwardCredits(2).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo(), null);
        for (int i = 0; i < CLIENTS; i++) {
            RpcRdmaClient c = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
            clients.add(c);
            c.enableBackchannel(echo()).get(60, TimeUnit.SECONDS);
            byte[] args = {(byte) i, 1, 2, 3};
            assertArrayEquals(args, results(c.call(callMsg(100 + i, 1, args)).get(60, TimeUnit.SECONDS)));
        }
        // all at once, from as many threads, as an application's shutdown hooks would
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<Long>> closes = new ArrayList<>();
        for (RpcRdmaClient c : clients) {
            CompletableFuture<Long> took = new CompletableFuture<>();
            closes.add(took);
            Thread.ofPlatform().name("closer").start(() -> {
                try {
                    go.await();
                    long t0 = System.nanoTime();
                    c.close();
                    took.complete(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                } catch (Throwable e) {
                    took.completeExceptionally(e);
                }
            });
        }
        long t0 = System.nanoTime();
        go.countDown();
        List<Long> millis = new ArrayList<>();
        for (CompletableFuture<Long> f : closes) {
            millis.add(f.get(300, TimeUnit.SECONDS));
        }
        long all = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        long freedPast = VerbsLink.pollersFreedPast() - freedPastBefore;
        String summary = CLIENTS + " clients closed in " + all + " ms, each " + millis + "; pollers that did not stop"
                + " within 2 s of their link's destroy: " + freedPast;
        System.out.println("clients closing: " + summary);
        assertEquals(0, freedPast, summary);
    }
}
