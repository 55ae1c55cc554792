package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.verbs.LiveResources;

/**
 * Closing a server while its rdma_cm thread is still accepting a connection request: the
 * thread uses the event channel, the request's cm_id and the connection's verbs objects, so
 * {@link RpcRdmaServer#close()} must not free them under it (a free under a running thread
 * is a use-after-free in native memory: EBADF from rdma_accept and rdma_destroy_id at best).
 */
@Tag("verbs")
class ServerCloseVerbsTest {
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void closeWaitsForAConnectRequestBeingAcceptedAndFreesEverythingOnce() throws Exception {
        InetAddress ip = deviceAddress();
        RpcRdmaOptions o = RpcRdmaOptions.builder().connectTimeoutMillis(120_000).reconnectAttempts(0).build();
        CountDownLatch inAccept = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo(), c -> {
            inAccept.countDown();
            try {
                release.await(120, TimeUnit.SECONDS); // the accept is in progress for as long as this runs
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        AtomicReference<RpcRdmaClient> client = new AtomicReference<>();
        Thread connector = Thread.ofPlatform().start(() -> {
            try {
                client.set(RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o));
            } catch (RuntimeException e) {
                // refused or lost because the server closed: either is fine here
            }
        });
        assertTrue(inAccept.await(120, TimeUnit.SECONDS), "the connect request reached the server");
        AtomicReference<Throwable> closeFailed = new AtomicReference<>();
        Thread closer = Thread.ofPlatform().start(() -> {
            try {
                server.close();
            } catch (Throwable t) {
                closeFailed.set(t);
            }
        });
        closer.join(5_000);
        boolean closedUnderTheAccept = !closer.isAlive();
        release.countDown();
        closer.join(120_000);
        connector.join(180_000);
        RpcRdmaClient c = client.get();
        if (c != null) {
            c.close();
        }
        assertFalse(closedUnderTheAccept,
                "close() returned while the rdma_cm thread was still accepting a connection request");
        assertFalse(closer.isAlive(), "close() returned once the accept ended");
        assertNull(closeFailed.get(), "close() completed without an error");
        assertEquals(0, LiveResources.total(), () -> "verbs objects left open: " + LiveResources.snapshot());
    }
}
