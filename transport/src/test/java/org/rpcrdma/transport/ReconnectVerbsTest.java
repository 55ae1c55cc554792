package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;
import static org.rpcrdma.transport.EndpointVerbsTest.OPTS;
import static org.rpcrdma.transport.EndpointVerbsTest.deviceAddress;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Connection loss with recovery, on real verbs: forward calls resent after the client
 * reconnects (same XID), and backward calls that wait for the client to come back
 * (RFC 8167 §5.4) or fail when it does not in time.
 */
@Tag("verbs")
class ReconnectVerbsTest {
    private RpcRdmaServer server;
    private RpcRdmaClient client;

    @AfterEach
    void tearDown() throws Exception {
        EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
    }

    /**
     * Records every call it sees as "connection/xid"; on the first connection it holds
     * (never answers) calls whose first argument byte is 'H', everything else it echoes.
     */
    private static final class HoldFirst implements CallHandler {
        final List<String> seen = new CopyOnWriteArrayList<>();
        final AtomicReference<Connection> first = new AtomicReference<>();

        @Override
        public void handle(IncomingCall call) {
            first.compareAndSet(null, call.connection());
            seen.add(System.identityHashCode(call.connection()) + "/" + Integer.toHexString(call.xid()));
            MemorySegment m = call.message().bytes();
            boolean hold = m.byteSize() > 40 && m.get(ValueLayout.JAVA_BYTE, 40) == 'H';
            if (call.connection() != first.get() || !hold) {
                echo().handle(call);
            }
        }

        long count(int xid) {
            return seen.stream().filter(s -> s.endsWith("/" + Integer.toHexString(xid))).count();
        }

        long connections() {
            return seen.stream().map(s -> s.substring(0, s.indexOf('/'))).distinct().count();
        }
    }

    @Test
    void retriedCallIsResentWithItsXidAfterReconnectAndOthersFail() throws Exception {
        InetAddress ip = deviceAddress();
        HoldFirst h = new HoldFirst();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), OPTS, h, null);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), OPTS);
        Connection before = client.connection();
        byte[] args = {'H', 2, 3, 4};
        // one answered call first: its reply grants more than the initial single credit
        assertArrayEquals(new byte[4], results(client.call(callMsg(0x76, 1, new byte[4])).get(30, TimeUnit.SECONDS)));
        CompletableFuture<ReceivedMessage> retried = client.call(callMsg(0x77, 1, args),
                CallOptions.DEFAULT.withRetry(true));
        CompletableFuture<ReceivedMessage> plain = client.call(callMsg(0x78, 1, args), CallOptions.DEFAULT);
        assertTrue(waitFor(() -> h.seen.size() == 3), "server saw " + h.seen);

        h.first.get().close(0, TimeUnit.MILLISECONDS); // the server drops the connection

        assertArrayEquals(args, results(retried.get(60, TimeUnit.SECONDS)));
        ExecutionException e = assertThrows(ExecutionException.class, () -> plain.get(10, TimeUnit.SECONDS));
        assertInstanceOf(ConnectionLostException.class, e.getCause());
        assertEquals(2, h.count(0x77), "XID 0x77 sent on both connections: " + h.seen);
        assertEquals(1, h.count(0x78), "the call without retry is not resent: " + h.seen);
        assertEquals(2, h.connections());
        assertEquals(1, client.reconnects());
        assertNotSame(before, client.connection());
        assertTrue(client.connection().isOpen());
        // and the new connection carries new calls
        assertArrayEquals(args, results(client.call(callMsg(0x79, 1, args)).get(10, TimeUnit.SECONDS)));
    }

    @Test
    void backwardCallWaitsForTheClientToReconnectAndIsResentWithItsXid() throws Exception {
        InetAddress ip = deviceAddress();
        RpcRdmaOptions o = OPTS.toBuilder().backwardCredits(4).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo(), null);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
        HoldFirst h = new HoldFirst();
        client.enableBackchannel(h).get(30, TimeUnit.SECONDS);
        Backchannel bc = server.backchannel(client.clientId());
        assertTrue(waitFor(() -> bc.connection() != null), "client never bound its backchannel");
        Connection firstServerSide = bc.connection();

        byte[] args = {'H', 8, 7, 6};
        CompletableFuture<ReceivedMessage> f = bc.call(callMsg(0x99, 7, args));
        assertTrue(waitFor(() -> h.seen.size() == 1), "client saw " + h.seen);

        // the client loses its link (not a close): it must come back for the backchannel
        client.connection().engine().onLinkLost(new RpcRdmaException("test: link down"));

        assertArrayEquals(args, results(f.get(60, TimeUnit.SECONDS)));
        assertEquals(2, h.count(0x99), "backward XID 0x99 sent on both connections: " + h.seen);
        assertEquals(1, client.reconnects());
        assertNotSame(firstServerSide, bc.connection());
        assertEquals(0, bc.waitingCalls());
    }

    @Test
    void backwardCallFailsWhenTheClientDoesNotReturnInTime() throws Exception {
        InetAddress ip = deviceAddress();
        RpcRdmaOptions o = OPTS.toBuilder().backwardCredits(2).backchannelWaitMillis(300).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo(), null);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
        HoldFirst h = new HoldFirst();
        client.enableBackchannel(h).get(30, TimeUnit.SECONDS);
        Backchannel bc = server.backchannel(client.clientId());
        assertTrue(waitFor(() -> bc.connection() != null));
        CompletableFuture<ReceivedMessage> f = bc.call(callMsg(0x55, 7, new byte[] {'H', 0, 0, 0}));
        assertTrue(waitFor(() -> h.seen.size() == 1));

        long id = client.clientId();
        client.close(); // for good
        client = null;

        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        assertInstanceOf(ConnectionLostException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("did not reconnect within 300 ms"), e.getCause().getMessage());
        // then the server forgets the absent client's backchannel, and calls on it fail at once
        assertTrue(waitFor(() -> server.backchannel(id) != bc), "the abandoned backchannel was not forgotten");
        CompletableFuture<ReceivedMessage> later = bc.call(callMsg(0x56, 7, new byte[0]));
        assertInstanceOf(ConnectionLostException.class,
                assertThrows(ExecutionException.class, () -> later.get(1, TimeUnit.SECONDS)).getCause());
    }

    @Test
    void retriedCallFailsNamingTheAttemptsWhenTheServerIsGone() throws Exception {
        InetAddress ip = deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), OPTS, call -> { }, null);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()),
                // a gone server rejects at once; 10 s covers a slow first connect under TCG
                OPTS.toBuilder().connectTimeoutMillis(10_000).reconnectAttempts(2).build());
        CompletableFuture<ReceivedMessage> f = client.call(callMsg(0x31, 1, new byte[0]),
                CallOptions.DEFAULT.withRetry(true));
        assertTrue(waitFor(() -> server.stats().callsReceived() == 1));
        server.close();
        server = null;
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
        assertInstanceOf(ConnectionLostException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("2 reconnect attempts failed"), e.getCause().getMessage());
        assertEquals(0, client.reconnects());
    }

    /**
     * RFC 8167 §5.4: a client that may get callbacks keeps its connection, so it goes on
     * past its reconnect attempts (2 here) until the server takes it again (the server
     * refuses connections meanwhile: its onConnect throws, so each attempt is rejected).
     */
    @Test
    void aClientWithABackchannelKeepsReconnectingPastItsAttemptsUntilTheServerReturns() throws Exception {
        InetAddress ip = deviceAddress();
        RpcRdmaOptions o = OPTS.toBuilder().backwardCredits(2).reconnectAttempts(2).connectTimeoutMillis(10_000).build();
        AtomicBoolean refuse = new AtomicBoolean();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, echo(), c -> {
            if (refuse.get()) {
                throw new IllegalStateException("test: the server takes no connections for now");
            }
        });
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
        client.enableBackchannel(echo()).get(30, TimeUnit.SECONDS);
        Backchannel bc = server.backchannel(client.clientId());
        assertTrue(waitFor(() -> bc.connection() != null), "client never bound its backchannel");
        Connection firstServerSide = bc.connection();

        refuse.set(true);
        client.connection().engine().onLinkLost(new RpcRdmaException("test: link down"));
        assertTrue(waitFor(() -> client.failedReconnects() > 3), "the client tried " + client.failedReconnects()
                + " times");
        refuse.set(false);
        assertTrue(waitFor(() -> client.reconnects() == 1), "the client gave up reconnecting after "
                + client.failedReconnects() + " attempts");
        assertTrue(waitFor(() -> bc.connection() != firstServerSide), "the client did not enable its backchannel again");
        byte[] args = {5, 6, 7, 8};
        assertArrayEquals(args, results(bc.call(callMsg(0x61, 7, args)).get(30, TimeUnit.SECONDS)));
        assertArrayEquals(args, results(client.call(callMsg(0x62, 1, args)).get(30, TimeUnit.SECONDS)));
    }

    /**
     * Settings may differ on every connection (RFC 8797 §3): the server comes back with a
     * 1 KiB inline threshold instead of 4 KiB, and a call parked meanwhile, which fitted
     * inline before, goes as a long call (RDMA_NOMSG, Position-Zero Read chunk) on the new
     * connection and is answered.
     */
    @Test
    void aCallParkedWhileTheServerRestartsWithASmallerThresholdGoesAsALongCall() throws Exception {
        InetAddress ip = deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), OPTS, echo(), null);
        int port = server.port();
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, port), OPTS.toBuilder().reconnectAttempts(20).build());
        assertArrayEquals(new byte[4], results(client.call(callMsg(0x90, 1, new byte[4])).get(30, TimeUnit.SECONDS)));
        assertEquals(4096, client.connection().sendInlineThreshold());
        Connection before = client.connection();

        server.close();
        server = null;
        assertTrue(waitFor(() -> !before.isOpen()), "the client saw its connection go");
        byte[] args = ChunkTest.pattern(2000, 11); // inline at 4 KiB, not at 1 KiB
        CompletableFuture<ReceivedMessage> parked = client.call(callMsg(0x91, 1, args),
                CallOptions.timeout(60, TimeUnit.SECONDS).withRetry(true));
        // the server comes back on the same port, taking 1 KiB Sends; it answers with the argument's length
        RpcRdmaOptions small = OPTS.toBuilder().inlineThreshold(1024).build();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, port), small, call -> {
            MemorySegment r = CoreDefectsTest.acceptedReply(call.xid(), org.rpcrdma.xdr.OncRpc.SUCCESS, 4);
            org.rpcrdma.xdr.Xdr.putInt(r, 24, (int) call.message().bytes().byteSize() - 40);
            call.reply(r);
        }, null);

        ReceivedMessage m = parked.get(60, TimeUnit.SECONDS);
        assertEquals(args.length, org.rpcrdma.xdr.Xdr.getInt(m.bytes(), 24), "the server got it whole");
        m.release();
        assertNotSame(before, client.connection());
        assertEquals(1024, client.connection().sendInlineThreshold(), "the new connection's threshold");
        assertEquals(1, client.connection().stats().longCallsSent(), "sent as a long call");
        assertTrue(client.reconnects() >= 1);
    }

    static boolean waitFor(BooleanSupplier p) throws InterruptedException {
        for (int i = 0; i < 3000 && !p.getAsBoolean(); i++) {
            Thread.sleep(10);
        }
        return p.getAsBoolean();
    }
}
