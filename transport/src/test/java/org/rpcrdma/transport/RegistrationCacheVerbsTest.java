package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ChunkTest.ddpEcho;
import static org.rpcrdma.transport.ChunkTest.pattern;
import static org.rpcrdma.transport.ChunkTest.writeCall;
import static org.rpcrdma.transport.ReconnectVerbsTest.waitFor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.chunk.RegistrationCache;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.verbs.LiveResources;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * The {@link RegistrationCache} on real verbs (Soft-RoCE guest): a WRITE-like DDP argument
 * and a READ-like receptacle in an {@code Arena.ofShared()} segment go in place under the
 * call's own windows, byte for byte; the second call over the same memory hits (no new
 * ibv_reg_mr, no copy); after the arena is closed, memory of a new arena at the same
 * address is a miss (no stale registration) and the dead entries are deregistered; a late
 * RDMA Write with a completed call's rkey fails and leaves the caller's bytes alone;
 * closing the client deregisters every entry exactly once; and after a reconnect the
 * entries are still found and registered again in the new connection's PD.
 */
@Tag("verbs")
class RegistrationCacheVerbsTest {
    private static final int SIZE = 128 << 10;
    private RpcRdmaServer server;
    private RpcRdmaClient client;
    private final AtomicReference<Connection> serverConn = new AtomicReference<>();

    @AfterEach
    void tearDown() throws Exception {
        EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
    }

    /** One WRITE-like call from {@code mem} with its result into {@code rec}, checked byte for byte; its offer. */
    private static RpcRdmaHeader writeAndRead(Connection c, MemorySegment mem, MemorySegment rec, int xid)
            throws Exception {
        byte[] data = pattern(100_001, xid);
        MemorySegment msg = writeCall(xid, data);
        MemorySegment call = mem.asSlice(0, msg.byteSize());
        call.copyFrom(msg);
        rec.fill((byte) 0x55);
        CompletableFuture<ReceivedMessage> f = c.call(call,
                CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length)).withReceptacle(rec));
        RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
        assertEquals(call.address() + 44, offered.readList().segments().offset(0), "the payload is read in place");
        assertEquals(rec.address(), offered.writeList().offset(0, 0), "the result is written in place");
        ReceivedMessage m = f.get(60, TimeUnit.SECONDS);
        assertEquals(data.length, m.placedBytes());
        m.release();
        assertArrayEquals(data, rec.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0x55, rec.get(ValueLayout.JAVA_BYTE, data.length), "no pad written");
        return offered;
    }

    /** A server answering DDP calls in place and a client, inline threshold 1 KiB. */
    private void start(int reconnectAttempts) throws Exception {
        RpcRdmaOptions o = EndpointVerbsTest.OPTS.toBuilder().inlineThreshold(1024).reconnectAttempts(reconnectAttempts)
                .build();
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, ddpEcho(), serverConn::set);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
    }

    @Test
    void callerMemoryIsRegisteredOnceFoundAgainAndNeverServedStale() throws Exception {
        start(0);
        Connection c = client.connection();
        Supplier<RpcRdmaStats> cs = c::stats;
        RegistrationCache cache = client.registeredBuffers().cache();
        int mrsBefore = LiveResources.count("MemoryRegion");
        try (Arena backing = Arena.ofShared()) {
            MemorySegment pages = backing.allocate(2L * SIZE, 4096);
            Arena first = Arena.ofShared();
            MemorySegment mem = first.allocate(SIZE);
            MemorySegment rec = first.allocate(SIZE);
            writeAndRead(c, mem, rec, 1);
            assertEquals(2, cs.get().registrationCacheMisses());
            assertEquals(2, cs.get().registeredBufferRegistrations());
            assertEquals(2, cs.get().zeroCopyExposures());
            assertEquals(mrsBefore + 2, LiveResources.count("MemoryRegion"), "one ibv_reg_mr per entry");
            writeAndRead(c, mem, rec, 2);
            assertEquals(2, cs.get().registrationCacheHits(), "the second call found both");
            assertEquals(2, cs.get().registeredBufferRegistrations(), "no ibv_reg_mr again");
            assertEquals(4, cs.get().zeroCopyExposures(), "no copy");
            assertEquals(4, cs.get().windowsBound(), "a window of its own per chunk and call");
            first.close();

            // the same address under another arena's scope (memory freed and allocated again)
            Arena second = Arena.ofShared();
            MemorySegment mem2 = pages.asSlice(0, SIZE).reinterpret(SIZE, second, null);
            MemorySegment rec2 = pages.asSlice(SIZE, SIZE).reinterpret(SIZE, second, null);
            Arena third = Arena.ofShared();
            writeAndRead(c, pages.asSlice(0, SIZE).reinterpret(SIZE, third, null),
                    pages.asSlice(SIZE, SIZE).reinterpret(SIZE, third, null), 3);
            third.close();
            RpcRdmaHeader offered = writeAndRead(c, mem2, rec2, 4);
            assertEquals(2, cs.get().registrationCacheHits(), "a new scope at the same address is a miss");
            assertEquals(6, cs.get().registrationCacheMisses());
            assertEquals(4, cs.get().registeredBufferDeregistrations(), "the closed arenas' entries were dropped");
            assertEquals(2, cache.entries());

            // the completed call's write-chunk rkey is dead: a late RDMA Write fails, the bytes stay
            byte[] before = rec2.toArray(ValueLayout.JAVA_BYTE);
            Connection sc = serverConn.get();
            ChunkBuffer junk = RawAccess.link(sc).allocateChunk(64);
            try {
                junk.segment().fill((byte) 0x77);
                RawAccess.link(sc).postWrite(0, junk, 0, 64, offered.writeList().handle(0, 0), rec2.address());
                assertTrue(waitFor(() -> !sc.isOpen()), "a late RDMA Write with the completed call's rkey failed");
            } finally {
                junk.release();
            }
            assertArrayEquals(before, rec2.toArray(ValueLayout.JAVA_BYTE), "untouched");
            client.close();
            assertEquals(cs.get().registeredBufferRegistrations(), cs.get().registeredBufferDeregistrations(),
                    "every registration deregistered once");
            assertEquals(0, cache.pinnedBytes());
            second.close();
        }
    }

    @Test
    void anEntryIsRegisteredAgainInTheNewConnectionsPdAfterAReconnect() throws Exception {
        start(3);
        try (Arena a = Arena.ofShared()) {
            MemorySegment mem = a.allocate(SIZE);
            MemorySegment rec = a.allocate(SIZE);
            Connection before = client.connection();
            writeAndRead(before, mem, rec, 1);
            assertEquals(2, before.stats().registrationCacheMisses());

            serverConn.get().close(0, TimeUnit.MILLISECONDS); // the server drops the connection
            assertTrue(waitFor(() -> !before.isOpen()), "the client saw the loss");
            assertTrue(waitFor(() -> before.stats().registeredBufferDeregistrations() == 2),
                    "the lost link deregistered both");
            client.call(ConnectionLoopbackTest.callMsg(0x300, 1, new byte[4]),
                    CallOptions.timeout(60, TimeUnit.SECONDS))
                    .get(60, TimeUnit.SECONDS).release(); // waits while the client reconnects
            Connection after = client.connection();
            assertEquals(1, client.reconnects());

            writeAndRead(after, mem, rec, 2);
            Supplier<RpcRdmaStats> as = after::stats;
            assertEquals(2, as.get().registrationCacheHits(), "the entries outlive the connection");
            assertEquals(0, as.get().registrationCacheMisses());
            assertEquals(2, as.get().registeredBufferRegistrations(), "registered in the new PD at first use");
            assertEquals(2, as.get().zeroCopyExposures(), "in place on the new connection too");
        }
    }
}
