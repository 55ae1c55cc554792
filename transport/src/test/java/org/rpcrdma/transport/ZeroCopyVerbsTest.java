package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ChunkTest.ddpEcho;
import static org.rpcrdma.transport.ChunkTest.pattern;
import static org.rpcrdma.transport.ChunkTest.writeCall;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.Xdr;

/**
 * {@link ZeroCopyBehaviour} over real verbs (Soft-RoCE guest), and what only verbs has: a
 * reconnecting client and a protection domain per connection, so the same registered
 * segment works after a reconnect (registered again in the new connection's PD at its
 * first use there).
 */
@Tag("verbs")
class ZeroCopyVerbsTest extends ZeroCopyBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.VERBS;
    }

    private RpcRdmaServer server;
    private RpcRdmaClient client;
    private final AtomicReference<Connection> serverConn = new AtomicReference<>();

    private void start(RpcRdmaOptions o) throws Exception {
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, ddpEcho(), serverConn::set);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (client != null || server != null) {
            EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
        }
        if (client != null) {
            assertEquals(0, client.registeredBuffers().live(), "the client's close freed what was left");
        }
    }

    private static RpcRdmaOptions opts() {
        return EndpointVerbsTest.OPTS.toBuilder().inlineThreshold(1024).build();
    }

    @Test
    void aRegisteredBufferWorksAfterTheClientReconnected() throws Exception {
        start(opts().toBuilder().reconnectAttempts(3).build());
        RegisteredBuffer b = client.allocateRegistered(64 << 10);
        byte[] data = pattern(20_001, 8);
        MemorySegment call = into(b, writeCall(0x200, data));
        MemorySegment receptacle = b.segment().asSlice(32 << 10, 32 << 10);
        Connection before = client.connection();
        before.call(call,
                CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length))
                        .withReceptacle(receptacle)).get(60, TimeUnit.SECONDS).release();
        assertEquals(2, before.stats().zeroCopyExposures());

        serverConn.get().close(0, TimeUnit.MILLISECONDS); // the server drops the connection
        assertTrue(waitFor(() -> !before.isOpen()), "the client saw the loss");
        // a plain call finds no connection: it waits while the client reconnects
        client.call(callMsg(0x201, 1, new byte[4]),
                CallOptions.timeout(60, TimeUnit.SECONDS)).get(60, TimeUnit.SECONDS).release();
        Connection after = client.connection();
        assertNotSame(before, after);
        assertEquals(1, client.reconnects());

        receptacle.fill((byte) 0);
        Xdr.putInt(call, 0, 0x202);
        CompletableFuture<ReceivedMessage> f = after.call(call,
                CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length)).withReceptacle(receptacle));
        RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
        ReceivedMessage m = f.get(60, TimeUnit.SECONDS);
        assertEquals(data.length, m.placedBytes());
        m.release();
        assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(2, after.stats().zeroCopyExposures(), "in place on the new connection too");
        assertEquals(1, after.stats().registeredBufferRegistrations(), "registered in its PD at first use");

        // the completed call's write-chunk rkey is dead: a late RDMA Write fails and leaves the caller's bytes alone
        Connection sc = serverConn.get();
        ChunkBuffer junk = RawAccess.link(sc).allocateChunk(64);
        try {
            junk.segment().fill((byte) 0x77);
            RawAccess.link(sc).postWrite(0, junk, 0, 64, offered.writeList().handle(0, 0), receptacle.address());
            assertTrue(waitFor(() -> !sc.isOpen()), "a late RDMA Write with the completed call's rkey failed");
        } finally {
            junk.release();
        }
        assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE), "untouched");
        b.close();
        assertTrue(waitFor(() -> client.registeredBuffers().freed() == 1));
        assertFalse(call.scope().isAlive());
    }

    private static boolean waitFor(BooleanSupplier c) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!c.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return c.getAsBoolean();
    }
}
