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
 * Zero copy on real verbs (Soft-RoCE guest): a WRITE-like DDP argument, a long call and a
 * READ-like receptacle in a client's {@link RegisteredBuffer} are exposed in place under
 * the call's own memory windows (the chunk addresses are the caller's memory, the stat
 * counts them, the bytes arrive byte for byte); the rkey dies with the call (a late RDMA
 * Read fails the server's connection); and the same segment works after the client
 * reconnected (registered again in the new connection's PD at its first use there).
 */
@Tag("verbs")
class ZeroCopyVerbsTest {
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
        EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
        if (client != null) {
            assertEquals(0, client.registeredBuffers().live(), "the client's close freed what was left");
        }
    }

    private static RpcRdmaOptions opts() {
        return EndpointVerbsTest.OPTS.withInlineThreshold(1024);
    }

    /** {@code msg} copied to the start of {@code b}; the slice. */
    private static MemorySegment into(RegisteredBuffer b, MemorySegment msg) {
        MemorySegment s = b.segment().asSlice(0, msg.byteSize());
        s.copyFrom(msg);
        return s;
    }

    @Test
    void aWritePayloadAndAReadReceptacleInRegisteredMemoryMoveWithoutACopy() throws Exception {
        start(opts().withReconnectAttempts(0));
        RegisteredBuffer b = client.allocateRegistered(1 << 20);
        byte[] data = pattern(100_001, 7); // unaligned: the 3 pad bytes are neither sent nor written
        MemorySegment call = into(b, writeCall(0x100, data));
        MemorySegment receptacle = b.segment().asSlice(512 << 10, 128 << 10);
        receptacle.fill((byte) 0x55);
        Connection c = client.connection();
        CompletableFuture<ReceivedMessage> f = c.call(call,
                CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length)).withReceptacle(receptacle));
        RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
        assertEquals(call.address() + 44, offered.readList().segments().offset(0), "the read chunk is the caller's");
        assertEquals(receptacle.address(), offered.writeList().offset(0, 0), "the write chunk is the receptacle");
        int readRkey = offered.readList().segments().handle(0);
        ReceivedMessage m = f.get(60, TimeUnit.SECONDS);
        assertEquals(data.length, m.placedBytes());
        assertEquals(data.length, Xdr.getInt(m.bytes(), 24));
        m.release();
        assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0x55, receptacle.get(ValueLayout.JAVA_BYTE, data.length), "no pad written");
        Supplier<RpcRdmaStats> cs = c::stats;
        assertEquals(2, cs.get().zeroCopyExposures(), "the payload and the receptacle, in place");
        assertEquals(2, cs.get().windowsBound(), "under windows of their own");
        assertEquals(1, cs.get().registeredBufferRegistrations(), "registered once, at allocation");
        assertEquals(data.length, server.stats().rdmaBytesRead());
        assertEquals(data.length, server.stats().rdmaBytesWritten());

        // a long call (RDMA_NOMSG) from the same memory, its reply through a Reply chunk
        ReceivedMessage r = c.call(call,
                CallOptions.DEFAULT.withMaxReplyBytes(data.length + 256)).get(60, TimeUnit.SECONDS);
        assertArrayEquals(data, r.bytes().asSlice(28, data.length).toArray(ValueLayout.JAVA_BYTE));
        r.release();
        assertEquals(3, cs.get().zeroCopyExposures());
        assertEquals(1, cs.get().longCallsSent());
        assertEquals(1, cs.get().registeredBufferRegistrations());

        // the completed first call's rkey is dead: the server's late RDMA Read fails its connection
        Connection sc = serverConn.get();
        Link link = RawAccess.link(sc);
        ChunkBuffer local = link.allocateChunk(64);
        try {
            link.postRead(0, local, 0, 64, readRkey, call.address() + 44);
            assertTrue(waitFor(() -> !sc.isOpen()), "a late RDMA Read with the completed call's rkey failed");
        } finally {
            local.release();
        }
        b.close();
        // freed once the lost connection's link deregistered it (its release may still be under way)
        assertTrue(waitFor(() -> client.registeredBuffers().freed() == 1));
    }

    @Test
    void aRegisteredBufferWorksAfterTheClientReconnected() throws Exception {
        start(opts().withReconnectAttempts(3));
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
