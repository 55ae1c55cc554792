package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * Hostile chunk lists on real verbs (Soft-RoCE guest), RFC 8166 §3.4 and §5: a requester
 * advertising 10,000 segments (and more than our limit that do fit a Send) is answered
 * ERR_CHUNK without a byte read and keeps its connection; a responder claiming more bytes
 * than a Reply or write chunk offered fails that call, reads nothing and withdraws its rkeys.
 */
@Tag("verbs")
class HostileChunksVerbsTest {
    private RpcRdmaServer server;
    private RpcRdmaClient client;
    private RpcRdmaClient hostile;
    private final AtomicReference<Connection> serverConn = new AtomicReference<>();

    private void start(RpcRdmaOptions o, CallHandler h) throws Exception {
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, h, serverConn::set);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
    }

    @AfterEach
    void tearDown() throws Exception {
        EndpointVerbsTest.closeAndCheckNothingLeft(hostile, client, server);
    }

    private static RpcRdmaOptions opts() {
        return EndpointVerbsTest.OPTS.toBuilder().inlineThreshold(4096).reconnectAttempts(0).build();
    }

    @Test
    void aRequesterAdvertising10000SegmentsGetsErrChunkAndNothingIsRead() throws Exception {
        start(opts(), RemoteInvalidationTest.SMALL_REPLY);
        // backward credits keep receives posted for the answers to calls made by hand
        hostile = RpcRdmaClient.connect(new InetSocketAddress(EndpointVerbsTest.deviceAddress(), server.port()),
                opts().toBuilder().backwardCredits(4).build());
        // a write chunk whose segment count claims 10,000 in a message of a few dozen bytes
        MemorySegment call = callMsg(0x64, 1, new byte[8]);
        RpcRdmaHeader h = new RpcRdmaHeader(1, 1, 1, 1).clear().xid(0x64).credit(1).proc(RpcRdma.RDMA_MSG);
        MemorySegment m = ChunkTest.raw(h, call);
        MemorySegment bad = MemorySegment.ofArray(new byte[(int) m.byteSize() + 8 + 16]);
        MemorySegment.copy(m, 0, bad, 0, 20); // fixed header + empty read list
        Xdr.putInt(bad, 20, 1); // a write chunk follows
        Xdr.putInt(bad, 24, 10_000); // of 10,000 segments
        RawAccess.send(hostile.connection(), bad);
        // 100 read segments that do fit the Send, over the limit of 64
        h = new RpcRdmaHeader(128, 1, 1, 1).clear().xid(0x65).credit(1).proc(RpcRdma.RDMA_MSG);
        for (int i = 0; i < 100; i++) {
            h.readList().add(40, 0x1234, 4, 0x1000 + 4 * i);
        }
        RawAccess.send(hostile.connection(), ChunkTest.raw(h, callMsg(0x65, 1, new byte[8])));
        assertTrue(EndpointDefectsVerbsTest.waitFor(() -> server.stats().errChunkSent() == 2, 10_000),
                () -> server.stats().toString());
        assertEquals(0, server.stats().rdmaReads(), "nothing was read");
        assertTrue(hostile.connection().isOpen(), "a hostile call costs its call, not the connection");
        client.connection().call(callMsg(1, 1, new byte[3000]),
                CallOptions.DEFAULT).get(30, TimeUnit.SECONDS).release();
    }

    @Test
    void aResponderClaimingMoreThanTheReplyChunkOfferedFailsTheCallAndReadsNothing() throws Exception {
        start(opts(), call -> { }); // never answers: the test answers by hand
        CompletableFuture<ReceivedMessage> f = client.connection().call(callMsg(0x90, 1, new byte[0]),
                CallOptions.DEFAULT.withMaxReplyBytes(8192));
        RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
        RpcRdmaHeader h = new RpcRdmaHeader(1, 1, 1, 1).clear().xid(0x90).credit(8).proc(RpcRdma.RDMA_NOMSG)
                .hasReplyChunk(true);
        h.replyChunk().add(offered.replyChunk().handle(0), offered.replyChunk().length(0) + 1,
                offered.replyChunk().offset(0));
        assertTrue(EndpointDefectsVerbsTest.waitFor(() -> serverConn.get() != null, 10_000));
        RawAccess.send(serverConn.get(), ChunkTest.raw(h, null));
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        assertInstanceOf(MalformedReplyException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("claims 8193 bytes"), e.getCause().getMessage());
        // and a write chunk claiming more than offered
        MemorySegment receptacle = MemorySegment.ofArray(new byte[64]);
        CompletableFuture<ReceivedMessage> g = client.connection().call(callMsg(0x91, 1, new byte[0]),
                CallOptions.DEFAULT.withReceptacle(receptacle));
        offered = ((CallFuture) g).request().exposure().header();
        h = new RpcRdmaHeader(1, 1, 1, 1).clear().xid(0x91).credit(8).proc(RpcRdma.RDMA_MSG);
        h.writeList().beginChunk();
        h.writeList().addSegment(offered.writeList().handle(0, 0), 65, offered.writeList().offset(0, 0));
        MemorySegment r = MemorySegment.ofArray(new byte[24]);
        Xdr.putInt(r, 0, 0x91);
        Xdr.putInt(r, 4, OncRpc.REPLY);
        RawAccess.send(serverConn.get(), ChunkTest.raw(h, r));
        e = assertThrows(ExecutionException.class, () -> g.get(30, TimeUnit.SECONDS));
        assertInstanceOf(MalformedReplyException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("claims 65 bytes"), e.getCause().getMessage());
        Supplier<RpcRdmaStats> cs = client.connection()::stats;
        assertTrue(EndpointDefectsVerbsTest.waitFor(() -> cs.get().localInvalidations() == 2, 10_000),
                "both calls' windows withdrawn by LOCAL_INV: " + cs.get());
        assertTrue(client.connection().isOpen());
    }
}
