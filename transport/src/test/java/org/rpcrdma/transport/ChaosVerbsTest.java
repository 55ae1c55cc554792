package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The chaos test on real verbs (shorter than {@link ChaosTest}): two callers with
 * random timeouts, cancellations and retry flags, backward calls through the server's
 * {@link Backchannel}, late answers, and a server that closes connections at random while
 * {@link RpcRdmaClient} reconnects. Every call ends with its own reply or an allowed
 * error; the last connection settles; nothing is left open.
 */
@Tag("verbs")
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ChaosVerbsTest {
    private static final long RUN_MILLIS = Long.getLong("rpcrdma.chaos.millis", 20_000);

    @Test
    void callsTimeoutsCancellationsBackwardCallsAndDropsOnRealVerbs() throws Exception {
        ScheduledExecutorService later = Executors.newScheduledThreadPool(2);
        AtomicLong drops = new AtomicLong();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS);
        CallHandler serverHandler = call -> {
            if (System.nanoTime() < end && ThreadLocalRandom.current().nextInt(150) == 0) {
                drops.incrementAndGet();
                Connection c = call.connection();
                later.execute(() -> c.close(0, TimeUnit.MILLISECONDS)); // the peer drops the connection
            }
            later.schedule(() -> echo().handle(call), ThreadLocalRandom.current().nextInt(3), TimeUnit.MILLISECONDS);
        };
        RpcRdmaOptions o = EndpointVerbsTest.OPTS.toBuilder().backwardCredits(4).credits(8).reconnectAttempts(50)
                .backchannelWaitMillis(60_000).build();
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, serverHandler, null);
        RpcRdmaClient client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
        try {
            client.enableBackchannel(echo()).get(60, TimeUnit.SECONDS);
            Backchannel back = server.backchannel(client.clientId());
            List<CompletableFuture<ReceivedMessage>> all = new CopyOnWriteArrayList<>();
            List<String> wrong = new CopyOnWriteArrayList<>();
            Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
            AtomicInteger xids = new AtomicInteger(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Random rnd = new Random(t);
                threads.add(Thread.ofPlatform().name("chaos-caller-" + t).start(() -> {
                    while (System.nanoTime() < end) {
                        int xid = xids.getAndIncrement();
                        long token = rnd.nextLong();
                        byte[] args = ChaosTest.tokenArgs(token);
                        long timeout = rnd.nextInt(3) == 0 ? 0 : 5 + rnd.nextInt(200);
                        CompletableFuture<ReceivedMessage> f = client.call(callMsg(xid, 1, args),
                                CallOptions.timeout(timeout, TimeUnit.MILLISECONDS).withRetry(rnd.nextBoolean()));
                        all.add(f);
                        ChaosTest.judgeWhenDone(f, xid, token, wrong);
                        if (rnd.nextInt(10) == 0) {
                            later.schedule(() -> f.cancel(false), rnd.nextInt(5), TimeUnit.MILLISECONDS);
                        }
                        ChaosTest.pace(f, 200);
                    }
                }));
            }
            threads.add(Thread.ofPlatform().name("chaos-backward").start(() -> {
                Random rnd = new Random(7);
                while (System.nanoTime() < end) {
                    CompletableFuture<ReceivedMessage> f = back.call(callMsg(xids.getAndIncrement(), 9, new byte[4]),
                            CallOptions.timeout(20 + rnd.nextInt(500), TimeUnit.MILLISECONDS));
                    all.add(f);
                    f.thenAccept(ReceivedMessage::release);
                    ChaosTest.pace(f, 300);
                }
            }));
            for (Thread t : threads) {
                t.join(RUN_MILLIS + 60_000);
                assertTrue(!t.isAlive(), t.getName() + " is stuck");
            }
            for (CompletableFuture<ReceivedMessage> f : all) {
                outcomes.computeIfAbsent(ChaosTest.outcome(f, 60_000, wrong), k -> new AtomicInteger()).incrementAndGet();
            }
            String summary = "outcomes " + outcomes + ", " + drops.get() + " drops, " + client.reconnects()
                    + " reconnects, last client connection " + client.connection().stats();
            System.out.println("chaos (verbs): " + summary);
            assertEquals(List.of(), wrong, summary);
            // The client's connection as it is when it settles, not as it was when the callers
            // stopped: a drop decided just before the end may land after that, and the client
            // then reconnects (its backchannel is enabled); it must end open and idle either way.
            assertTrue(CoreDefectsTest.await(() -> {
                Connection now = client.connection();
                return now.isOpen() && now.outstandingCalls() == 0 && now.heldReceives() == 0
                        && now.peerOutstandingCalls() == 0;
            }, 60_000), () -> "the last connection did not settle: open " + client.connection().isOpen()
                    + ", outstanding " + client.connection().outstandingCalls() + ", held "
                    + client.connection().heldReceives() + ", " + client.reconnects() + " reconnects now; " + summary);
            Connection c = client.connection();
            assertEquals(0, c.waitingCalls());
            assertTrue(outcomes.getOrDefault("reply", new AtomicInteger()).get() > 50, summary);
            assertTrue(client.reconnects() > 0, "the chaos must have happened: " + summary);
            // still works both ways
            ConnectionLoopbackTest.results(client.call(callMsg(-1, 1, new byte[8])).get(30, TimeUnit.SECONDS));
            back.call(callMsg(-2, 9, new byte[4])).get(30, TimeUnit.SECONDS).release();
        } finally {
            later.shutdownNow();
            EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
        }
    }
}
