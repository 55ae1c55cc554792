package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * Chunks between our client and server on real verbs (Soft-RoCE guest): long calls pulled
 * by the server's RDMA Reads, long replies written into Reply chunks, content checked byte
 * for byte; a Reply chunk offered but not needed; a missing Reply chunk; chunked backward
 * calls between our ends.
 */
@Tag("verbs")
class ChunkVerbsTest {
    private RpcRdmaServer server;
    private RpcRdmaClient client;
    private final AtomicReference<Connection> serverConn = new AtomicReference<>();

    private void start(RpcRdmaOptions o, CallHandler h) throws Exception {
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, h, serverConn::set);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
    }

    @AfterEach
    void tearDown() throws Exception {
        EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
    }

    private static byte[] pattern(int n) {
        byte[] b = new byte[n];
        new Random(n).nextBytes(b);
        return b;
    }

    private byte[] echoOf(byte[] args) throws Exception {
        ReceivedMessage m = client.connection().call(callMsg(args.length, 1, args),
                CallOptions.DEFAULT.withMaxReplyBytes(args.length + 64))
                .get(60, TimeUnit.SECONDS);
        try {
            return results(m);
        } finally {
            m.release();
        }
    }

    private void roundTrips(int inline, int... sizes) throws Exception {
        start(EndpointVerbsTest.OPTS.withInlineThreshold(inline).withMaxChunkBytes(17 << 20), echo());
        for (int size : sizes) {
            byte[] args = pattern(size);
            assertArrayEquals(args, echoOf(args), size + " bytes at inline " + inline);
        }
        Connection c = client.connection();
        assertTrue(c.stats().longCallsSent() > 0);
        assertTrue(server.stats().replyChunksUsed() > 0);
        assertTrue(server.stats().rdmaReads() > 0 && server.stats().rdmaWrites() > 0);
        assertEquals(0, server.stats().errChunkSent());
        assertTrue(c.isOpen());
    }

    @Test
    void echoRoundTripsAtInline1024() throws Exception {
        roundTrips(1024, 0, 1, 3, 1023, 1024, 1025, 4096, 65536, 1 << 20);
    }

    @Test
    void echoRoundTripsAtInline4096UpTo16MiB() throws Exception {
        roundTrips(4096, 0, 1023, 4095, 4096, 4097, 65536, 1 << 20, 16 << 20);
    }

    @Test
    void concurrentLongCallsShareTheRdmaDepth() throws Exception {
        start(EndpointVerbsTest.OPTS.withInlineThreshold(1024).withRdmaDepth(2), echo());
        List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
        List<byte[]> args = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            byte[] a = pattern(20_000 + i);
            args.add(a);
            fs.add(client.connection().call(callMsg(100 + i, 1, a),
                    CallOptions.DEFAULT.withMaxReplyBytes(a.length + 64)));
        }
        for (int i = 0; i < fs.size(); i++) {
            ReceivedMessage m = fs.get(i).get(60, TimeUnit.SECONDS);
            assertArrayEquals(args.get(i), results(m));
            m.release();
        }
    }

    @Test
    void aReplyChunkOfferedButNotNeededIsLeftUnused() throws Exception {
        start(EndpointVerbsTest.OPTS.withInlineThreshold(1024), echo());
        ReceivedMessage m = client.connection().call(callMsg(1, 1, new byte[] {9, 8, 7}),
                CallOptions.DEFAULT.withMaxReplyBytes(4240))
                .get(30, TimeUnit.SECONDS);
        assertArrayEquals(new byte[] {9, 8, 7}, results(m));
        m.release();
        assertEquals(1, server.stats().chunkedCallsReceived());
        assertEquals(0, server.stats().replyChunksUsed());
    }

    @Test
    void aLongReplyWithoutAReplyChunkIsErrChunk() throws Exception {
        start(EndpointVerbsTest.OPTS.withInlineThreshold(1024), echo());
        CompletableFuture<ReceivedMessage> f = client.connection().call(callMsg(2, 1, new byte[2000]));
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        assertInstanceOf(RdmaErrorException.class, e.getCause());
        assertEquals(RpcRdma.ERR_CHUNK, ((RdmaErrorException) e.getCause()).errorCode());
        assertTrue(client.connection().isOpen());
    }

    @Test
    void aDdpWritePayloadAndReadReceptacle() throws Exception {
        start(EndpointVerbsTest.OPTS.withInlineThreshold(1024), ChunkTest.ddpEcho());
        for (int size : new int[] {1, 1023, 65_537, 1 << 20}) {
            byte[] data = ChunkTest.pattern(size, size);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[size + 3]);
            ReceivedMessage m = client.connection().call(ChunkTest.writeCall(size, data),
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, size))
                            .withReceptacle(receptacle)).get(60, TimeUnit.SECONDS);
            assertEquals(size, m.placedBytes());
            assertArrayEquals(data, receptacle.asSlice(0, size).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            m.release();
        }
        assertEquals(0, client.connection().stats().longCallsSent(), "payloads went as DDP read chunks");
    }

    /** The error arm of a union: a result with no DDP data leaves the offered write chunk unused. */
    @Test
    void aWriteChunkLeftUnusedReportsNothingPlaced() throws Exception {
        start(EndpointVerbsTest.OPTS.withInlineThreshold(1024), RemoteInvalidationTest.SMALL_REPLY);
        MemorySegment receptacle = MemorySegment.ofArray(new byte[8192]);
        receptacle.fill((byte) 0x55);
        ReceivedMessage m = client.connection().call(callMsg(4, 1, new byte[8]),
                CallOptions.DEFAULT.withReceptacle(receptacle))
                .get(30, TimeUnit.SECONDS);
        assertEquals(0, m.placedBytes());
        m.release();
        assertEquals(0, server.stats().rdmaWrites());
        for (int i = 0; i < receptacle.byteSize(); i++) {
            assertEquals((byte) 0x55, receptacle.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i), "byte " + i);
        }
    }

    @Test
    void hostileChunkListsCostTheirCallAndABadRkeyOnlyItsOwnConnection() throws Exception {
        start(EndpointVerbsTest.OPTS.withInlineThreshold(1024), echo());
        // a second client that plays by hand; backward credits keep receives posted for
        // the answers to calls it never made through its requester
        RpcRdmaClient hostile = RpcRdmaClient.connect(new InetSocketAddress(EndpointVerbsTest.deviceAddress(),
                server.port()), EndpointVerbsTest.OPTS.withInlineThreshold(1024).withBackwardCredits(4)
                .withReconnectAttempts(0));
        try {
            // 4 GiB - 1 in a Position-Zero Read chunk: refused before anything is allocated or read
            RpcRdmaHeader h = new RpcRdmaHeader(8, 1, 1, 1).clear().xid(0x70).credit(1).proc(RpcRdma.RDMA_NOMSG);
            h.readList().add(0, 0x1234, 0xFFFF_FFFFL, 0x1000);
            RawAccess.send(hostile.connection(), encoded(h));
            assertTrue(EndpointDefectsVerbsTest.waitFor(() -> server.stats().errChunkSent() == 1, 10_000));
            assertEquals(0, server.stats().rdmaReads());
            assertTrue(hostile.connection().isOpen());
            // a read chunk under an rkey the client never exposed: the server's RDMA Read fails
            h = new RpcRdmaHeader(8, 1, 1, 1).clear().xid(0x71).credit(1).proc(RpcRdma.RDMA_NOMSG);
            h.readList().add(0, 0x7777, 100, 0x1000);
            RawAccess.send(hostile.connection(), encoded(h));
            assertTrue(EndpointDefectsVerbsTest.waitFor(() -> !hostile.connection().isOpen(), 20_000),
                    "a remote access error ends that connection");
            // the well-behaved client carries on
            byte[] args = pattern(5000);
            assertArrayEquals(args, echoOf(args));
        } finally {
            hostile.close();
        }
    }

    /** RFC 8167 §5.3: our client said it takes chunked backward calls; the roles of the forward direction swap. */
    @Test
    void chunkedBackwardCallsBetweenOurEnds() throws Exception {
        start(EndpointVerbsTest.OPTS.withInlineThreshold(1024).withBackwardCredits(4), echo());
        client.enableBackchannel(echo()).get(30, TimeUnit.SECONDS);
        Connection sc = serverConn.get();
        for (int size : new int[] {5000, 1 << 20}) {
            byte[] args = pattern(size);
            ReceivedMessage m = sc.call(callMsg(size, 1, args),
                    CallOptions.DEFAULT.withMaxReplyBytes(size + 64)).get(60, TimeUnit.SECONDS);
            assertArrayEquals(args, results(m), size + " bytes");
        }
        Connection c = client.connection();
        assertEquals(2, sc.stats().longCallsSent());
        assertTrue(c.stats().rdmaReads() > 0 && c.stats().rdmaWrites() > 0, "the client read and wrote");
        assertEquals(2, c.stats().replyChunksUsed());
        assertTrue(sc.stats().windowsBound() >= 4, "the server exposed through windows: " + sc.stats());
        byte[] fwd = pattern(3000);
        assertArrayEquals(fwd, echoOf(fwd), "forward calls carry on");
    }

    private static MemorySegment encoded(RpcRdmaHeader h) {
        int n = org.rpcrdma.transport.wire.RpcRdmaEncoder.encodedLength(h);
        MemorySegment m = MemorySegment.ofArray(new byte[n]);
        org.rpcrdma.transport.wire.RpcRdmaEncoder.encode(h, m, 0, n);
        return m;
    }

    // late RDMA Reads and Writes with a completed call's rkey: ExposureVerbsTest
}
