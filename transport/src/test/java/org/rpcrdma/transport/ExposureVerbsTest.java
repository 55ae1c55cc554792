package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.SegmentList;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * How chunk memory is exposed on real verbs (Soft-RoCE guest): a type-2 memory window bound
 * per RPC with a fresh rkey, withdrawn by our LOCAL_INV or by the responder's Send with
 * Invalidate (RFC 8797 §7; rxe flags it wrongly, so it is recognised by the rkey), with
 * remote invalidation on and off and a Send with Invalidate R did not ask for; the
 * registration-per-RPC fallback (with R clear) and none while R is set; an abandoned
 * one-rkey call holding its window until its late reply while the connection goes on; and
 * a late RDMA Read or Write with a completed call's rkey failing the connection that made
 * it, not another.
 */
@Tag("verbs")
class ExposureVerbsTest {
    private RpcRdmaServer server;
    private RpcRdmaClient client;
    private RpcRdmaClient other;
    private final AtomicReference<Connection> serverConn = new AtomicReference<>();

    private void start(RpcRdmaOptions serverOpts, RpcRdmaOptions clientOpts, CallHandler h) throws Exception {
        InetAddress ip = EndpointVerbsTest.deviceAddress();
        server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), serverOpts, h, serverConn::set);
        client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), clientOpts);
    }

    @AfterEach
    void tearDown() throws Exception {
        EndpointVerbsTest.closeAndCheckNothingLeft(other, client, server);
    }

    private static RpcRdmaOptions opts() {
        return EndpointVerbsTest.OPTS.toBuilder().inlineThreshold(1024).reconnectAttempts(0).build();
    }

    /** A long call (one rkey), then one offering a write chunk too (two rkeys); returns the client's stats. */
    private RpcRdmaStats oneAndTwoRkeys() throws Exception {
        Connection c = client.connection();
        c.call(callMsg(1, 1, new byte[3000]),
                CallOptions.DEFAULT).get(30, TimeUnit.SECONDS).release();
        c.call(callMsg(2, 1, new byte[3000]),
                CallOptions.DEFAULT.withReceptacle(receptacle())).get(30, TimeUnit.SECONDS).release();
        return c.stats();
    }

    /** Room for a DDP result: the call offers a write chunk under an rkey of its own. */
    private static MemorySegment receptacle() {
        return MemorySegment.ofArray(new byte[64]);
    }

    @Test
    void windowsWithRemoteInvalidation() throws Exception {
        start(opts(), opts(), RemoteInvalidationTest.SMALL_REPLY);
        assertTrue(client.connection().remoteInvalidation(), "both set R");
        RpcRdmaStats cs = oneAndTwoRkeys();
        assertEquals(3, cs.windowsBound());
        assertEquals(0, cs.exposureRegistrations());
        assertEquals(2, cs.remoteInvalidations(), "the first call's one rkey and one of the second's, by the server's Send");
        assertEquals(1, cs.localInvalidations(), "the second call's other rkey, by our LOCAL_INV");
        assertEquals(0, cs.remoteInvalidationsUnnegotiated());
        assertEquals(2, server.stats().sendsWithInvalidate());
    }

    private void echoChecked(int size) throws Exception {
        byte[] args = new byte[size];
        new Random(size).nextBytes(args);
        ReceivedMessage m = client.connection().call(callMsg(size, 1, args),
                CallOptions.DEFAULT.withMaxReplyBytes(size + 64)).get(60, TimeUnit.SECONDS);
        try {
            assertArrayEquals(args, results(m), size + " bytes");
        } finally {
            m.release();
        }
    }

    @Test
    void sixteenMiBBothWaysThroughWindowsOverMemoryRegisteredForIt() throws Exception {
        RpcRdmaOptions o = opts().toBuilder().maxChunkBytes(17 << 20).chunkMemoryBytes(40L << 20).build();
        start(o, o, echo());
        // windows are reused, each bind under a fresh rkey
        for (int size : new int[] {1025, 65536, 1 << 20, 16 << 20}) {
            echoChecked(size);
        }
        Supplier<RpcRdmaStats> cs = client.connection()::stats;
        assertEquals(4, cs.get().windowsBound(), "each call: one window over its Position-Zero Read chunk and Reply chunk");
        assertEquals(4, cs.get().remoteInvalidations(), "each withdrawn by the server's Send with Invalidate");
        assertEquals(0, cs.get().localInvalidations());
        assertEquals(0, cs.get().exposureRegistrations());
        assertTrue(server.stats().rdmaBytesRead() >= 16 << 20 && server.stats().rdmaBytesWritten() >= 16 << 20);
    }

    @Test
    void remoteInvalidationOff() throws Exception {
        RpcRdmaOptions off = opts().toBuilder().remoteInvalidation(false).build();
        start(off, off, RemoteInvalidationTest.SMALL_REPLY);
        assertFalse(client.connection().remoteInvalidation());
        RpcRdmaStats cs = oneAndTwoRkeys();
        assertEquals(3, cs.localInvalidations());
        assertEquals(0, cs.remoteInvalidations());
        assertEquals(0, server.stats().sendsWithInvalidate());
    }

    @Test
    void aServerThatClearsRSendsNoInvalidation() throws Exception {
        start(opts().toBuilder().remoteInvalidation(false).build(), opts(), RemoteInvalidationTest.SMALL_REPLY);
        assertFalse(client.connection().remoteInvalidation());
        RpcRdmaStats cs = oneAndTwoRkeys();
        assertEquals(3, cs.localInvalidations());
        assertEquals(0, server.stats().sendsWithInvalidate());
    }

    /**
     * Linux's nfsd clears R yet answers with Send with Invalidate: our client (here with R
     * clear itself) takes it, posts no LOCAL_INV for that rkey, and counts it.
     */
    @Test
    void anInvalidatingSendIsTakenWhateverWasNegotiated() throws Exception {
        LinkedBlockingQueue<IncomingCall> held = new LinkedBlockingQueue<>();
        start(opts(), opts().toBuilder().remoteInvalidation(false).build(), call -> {
            if (call.xid() == 5) {
                held.add(call); // answered by hand below
            } else {
                RemoteInvalidationTest.SMALL_REPLY.handle(call);
            }
        });
        CompletableFuture<ReceivedMessage> f = client.connection().call(callMsg(5, 1, new byte[3000]),
                CallOptions.DEFAULT);
        RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
        int rkey = offered.readList().segments().handle(0);
        long addr = offered.readList().segments().offset(0);
        IncomingCall call = held.poll(30, TimeUnit.SECONDS);
        RawAccess.send(serverConn.get(), replyBytes(call.xid()), rkey);
        f.get(30, TimeUnit.SECONDS).release();
        Supplier<RpcRdmaStats> cs = client.connection()::stats;
        assertEquals(1, cs.get().remoteInvalidations());
        assertEquals(1, cs.get().remoteInvalidationsUnnegotiated());
        assertEquals(0, cs.get().localInvalidations(), "never invalidated twice");
        lateOpFailsOnlyItsConnection(false, rkey, addr);
    }

    /**
     * A call whose one rkey the server may invalidate by Send with Invalidate times out. Our
     * LOCAL_INV must not come before that Send: an invalidation of an rkey already invalid
     * is an error (Debian 6.1's rxe even dereferenced NULL on it, panicking the guest). Nor
     * must the connection go for it: the call's window stays bound until its late reply
     * withdraws it, and the connection serves the next call.
     */
    @Test
    void aTimedOutCallThatTheServerMayInvalidateKeepsItsWindowUntilTheReply() throws Exception {
        java.util.concurrent.ScheduledExecutorService later = java.util.concurrent.Executors
                .newSingleThreadScheduledExecutor();
        java.util.concurrent.CountDownLatch answered = new java.util.concurrent.CountDownLatch(1);
        try {
            start(opts(), opts(), call -> {
                if (call.xid() == 7) {
                    later.schedule(() -> {
                        RemoteInvalidationTest.SMALL_REPLY.handle(call);
                        answered.countDown();
                    }, 4, TimeUnit.SECONDS);
                } else {
                    RemoteInvalidationTest.SMALL_REPLY.handle(call);
                }
            });
            Connection first = client.connection();
            first.call(callMsg(6, 1, new byte[16]),
                    CallOptions.DEFAULT).get(30, TimeUnit.SECONDS).release();
            CompletableFuture<ReceivedMessage> f = first.call(callMsg(7, 1, new byte[3000]),
                    CallOptions.timeout(1, TimeUnit.SECONDS));
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
            assertInstanceOf(CallTimeoutException.class, e.getCause());
            assertTrue(answered.await(30, TimeUnit.SECONDS));
            first.call(callMsg(8, 1, new byte[3000]),
                    CallOptions.timeout(30, TimeUnit.SECONDS)).get(30, TimeUnit.SECONDS).release();
            assertTrue(first.isOpen(), "the connection stays");
            assertSame(first, client.connection());
            Supplier<RpcRdmaStats> cs = first::stats;
            assertEquals(2, cs.get().remoteInvalidations(), "the late reply's and call 8's, never our LOCAL_INV first");
            assertEquals(0, cs.get().localInvalidations());
            assertEquals(1, cs.get().lateReplies());
        } finally {
            later.shutdownNow();
        }
    }

    /**
     * Six one-rkey calls out, the server holding them; the caller cancels one. The other
     * five are answered on the same connection; the cancelled one's late reply withdraws
     * its window by Send with Invalidate.
     */
    @Test
    void cancellingOneOfSixChunkedCallsKeepsTheOtherFive() throws Exception {
        LinkedBlockingQueue<IncomingCall> held = new LinkedBlockingQueue<>();
        start(opts(), opts(), call -> {
            if (call.xid() >= 20 && call.xid() < 30) {
                held.add(call);
            } else {
                RemoteInvalidationTest.SMALL_REPLY.handle(call);
            }
        });
        Connection c = client.connection();
        c.call(callMsg(1, 1, new byte[16]),
                CallOptions.DEFAULT).get(30, TimeUnit.SECONDS).release(); // opens the credit window
        java.util.List<CompletableFuture<ReceivedMessage>> calls = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            calls.add(c.call(callMsg(20 + i, 1, new byte[3000]), CallOptions.DEFAULT));
        }
        java.util.List<IncomingCall> in = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            in.add(held.poll(30, TimeUnit.SECONDS));
        }
        assertTrue(calls.get(2).cancel(false));
        assertTrue(c.isOpen(), "cancelling one call keeps the connection");
        for (IncomingCall call : in) {
            RemoteInvalidationTest.SMALL_REPLY.handle(call);
        }
        for (int i = 0; i < 6; i++) {
            if (i != 2) {
                calls.get(i).get(30, TimeUnit.SECONDS).release();
            }
        }
        assertTrue(c.isOpen());
        c.call(callMsg(30, 1, new byte[16]),
                CallOptions.DEFAULT).get(30, TimeUnit.SECONDS).release(); // after the late reply
        Supplier<RpcRdmaStats> cs = c::stats;
        assertEquals(6, cs.get().windowsBound());
        assertEquals(6, cs.get().remoteInvalidations(), "every window withdrawn, each once, by the server's Send");
        assertEquals(0, cs.get().localInvalidations());
        assertEquals(1, cs.get().lateReplies());
    }

    /**
     * A client without memory windows registers each exposure, and a registration cannot be
     * invalidated by the peer's Send with Invalidate (rxe refuses anything but windows and
     * fast-registered keys: the receive fails, the QP goes to error). So it clears R
     * (RFC 8797 §3.2, §4.1) whatever the option says: the server answers its one-key long
     * call with a plain Send, and the connection stays.
     */
    @Test
    void aClientWithoutWindowsClearsRSoItsOneKeyCallSurvives() throws Exception {
        start(opts(), opts().toBuilder().memoryWindows(false).build(), RemoteInvalidationTest.SMALL_REPLY);
        Connection c = client.connection();
        c.call(callMsg(1, 1, new byte[3000]),
                CallOptions.DEFAULT).get(30, TimeUnit.SECONDS).release();
        c.call(callMsg(2, 1, new byte[16]),
                CallOptions.DEFAULT).get(30, TimeUnit.SECONDS).release();
        assertTrue(c.isOpen());
        assertFalse(c.remoteInvalidation(), "R clear: a registration cannot be invalidated remotely");
        assertEquals(0, server.stats().sendsWithInvalidate());
        assertEquals(1, c.stats().exposureRegistrations());
        assertEquals(0, c.stats().windowsBound());
    }

    /**
     * R negotiated and every window bound (a client of one credit has 10: five calls of two
     * rkeys wait behind a held one): a sixth call finds none. It must not fall back to a
     * registration the server would invalidate by Send with Invalidate; it fails at once
     * with ChunksUnavailableException, and once windows are free again one-key calls go
     * through on the same connection.
     */
    @Test
    void withRNegotiatedACallFindingNoFreeWindowFailsInsteadOfRegistering() throws Exception {
        LinkedBlockingQueue<IncomingCall> held = new LinkedBlockingQueue<>();
        start(opts(), opts().toBuilder().credits(1).build(), call -> {
            if (call.xid() == 40) {
                held.add(call);
            } else {
                RemoteInvalidationTest.SMALL_REPLY.handle(call);
            }
        });
        Connection c = client.connection();
        assertTrue(c.remoteInvalidation());
        java.util.List<CompletableFuture<ReceivedMessage>> calls = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
            calls.add(c.call(callMsg(40 + i, 1, new byte[3000]),
                    CallOptions.DEFAULT.withReceptacle(receptacle()))); // two rkeys each
        }
        IncomingCall first = held.poll(30, TimeUnit.SECONDS);
        CompletableFuture<ReceivedMessage> sixth = c.call(callMsg(50, 1, new byte[3000]),
                CallOptions.DEFAULT);
        RemoteInvalidationTest.SMALL_REPLY.handle(first);
        for (CompletableFuture<ReceivedMessage> f : calls) {
            f.get(30, TimeUnit.SECONDS).release();
        }
        ExecutionException e = assertThrows(ExecutionException.class, () -> sixth.get(30, TimeUnit.SECONDS));
        assertInstanceOf(ChunksUnavailableException.class, e.getCause());
        c.call(callMsg(51, 1, new byte[3000]),
                CallOptions.DEFAULT).get(30, TimeUnit.SECONDS).release();
        assertTrue(c.isOpen());
        Supplier<RpcRdmaStats> cs = c::stats;
        assertEquals(0, cs.get().exposureRegistrations(), "never a registration while R is negotiated");
        assertEquals(11, cs.get().windowsBound());
        // counted on our side: the server counts its Send after posting it, maybe after we saw the reply
        assertEquals(6, cs.get().remoteInvalidations(), "one window of each call answered, by the server's Send");
    }

    /** An RDMA_MSG reply with no chunks and an empty accepted RPC reply. */
    private static MemorySegment replyBytes(int xid) {
        MemorySegment r = MemorySegment.ofArray(new byte[24]);
        Xdr.putInt(r, 0, xid);
        Xdr.putInt(r, 4, OncRpc.REPLY);
        RpcRdmaHeader h = new RpcRdmaHeader(1, 1, 1, 1).clear().xid(xid).credit(8).proc(RpcRdma.RDMA_MSG);
        return ChunkTest.raw(h, r);
    }

    @Test
    void registrationPerRpcWithoutWindows() throws Exception {
        RpcRdmaOptions o = opts().toBuilder().memoryWindows(false).build();
        start(o, o, echo());
        echoChecked(5000);
        Supplier<RpcRdmaStats> cs = client.connection()::stats;
        assertEquals(0, cs.get().windowsBound());
        assertEquals(1, cs.get().exposureRegistrations(), "one for the call and its Reply chunk");
        lateOp(true, Chunks.REPLY_CHUNK, o);
    }

    @Test
    void aLateRdmaReadOfAWindowWithdrawnByTheRespondersSendFails() throws Exception {
        lateOp(false, Chunks.CALL_ONLY, opts());
        assertEquals(1, client.connection().stats().remoteInvalidations());
    }

    /** Without R: both of the call's windows withdrawn by our LOCAL_INV. */
    @Test
    void aLateRdmaReadOfAWindowWithdrawnByLocalInvalidateFails() throws Exception {
        lateOp(false, Chunks.WRITE_CHUNK, opts().toBuilder().remoteInvalidation(false).build());
        assertEquals(2, client.connection().stats().localInvalidations());
    }

    /** With R: the reply's Send withdrew the call's first rkey (its Read chunk's), our LOCAL_INV the write chunk's. */
    @Test
    void aLateRdmaWriteOfAWindowWithdrawnByLocalInvalidateFails() throws Exception {
        lateOp(true, Chunks.WRITE_CHUNK, opts());
        assertEquals(1, client.connection().stats().remoteInvalidations());
        assertEquals(1, client.connection().stats().localInvalidations());
    }

    /** The Reply chunk shares the call's window: the reply's Send with Invalidate withdrew both at once. */
    @Test
    void aLateRdmaWriteOfAReplyChunkWithdrawnByTheRespondersSendFails() throws Exception {
        lateOp(true, Chunks.REPLY_CHUNK, opts());
        assertEquals(1, client.connection().stats().remoteInvalidations());
        assertEquals(0, client.connection().stats().localInvalidations());
    }

    /** What a long call offers besides its Position-Zero Read chunk. */
    private enum Chunks { CALL_ONLY, REPLY_CHUNK, WRITE_CHUNK }

    /**
     * A long call completes: alone, or with its Reply chunk under the same rkey, that rkey
     * is withdrawn by the server's Send with Invalidate; with a write chunk too (two rkeys)
     * both are withdrawn by our LOCAL_INV. Then the server uses the call's (Read) or the
     * other chunk's (Write) rkey again.
     */
    private void lateOp(boolean write, Chunks chunks, RpcRdmaOptions o) throws Exception {
        if (server == null) {
            start(o, o, RemoteInvalidationTest.SMALL_REPLY);
        }
        CallOptions opts = switch (chunks) {
            case CALL_ONLY -> CallOptions.DEFAULT.withMaxReplyBytes(0);
            case REPLY_CHUNK -> CallOptions.DEFAULT.withMaxReplyBytes(4096);
            case WRITE_CHUNK -> CallOptions.DEFAULT.withMaxReplyBytes(0).withReceptacle(receptacle());
        };
        CompletableFuture<ReceivedMessage> f = client.connection().call(callMsg(3, 1, new byte[3000]), opts);
        RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
        SegmentList other = chunks == Chunks.REPLY_CHUNK ? offered.replyChunk() : offered.writeList().segments();
        int rkey = write ? other.handle(0) : offered.readList().segments().handle(0);
        long addr = write ? other.offset(0) : offered.readList().segments().offset(0);
        f.get(30, TimeUnit.SECONDS).release();
        lateOpFailsOnlyItsConnection(write, rkey, addr);
    }

    private void lateOpFailsOnlyItsConnection(boolean write, int rkey, long addr) throws Exception {
        Connection sc = serverConn.get(); // ORDER: before the other client's connection replaces it
        other = RpcRdmaClient.connect(new InetSocketAddress(EndpointVerbsTest.deviceAddress(), server.port()), opts());
        Link link = RawAccess.link(sc);
        ChunkBuffer b = link.allocateChunk(64);
        try {
            if (write) {
                link.postWrite(0, b, 0, 64, rkey, addr);
            } else {
                link.postRead(0, b, 0, 64, rkey, addr);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (sc.isOpen() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertFalse(sc.isOpen(), "the server's " + (write ? "Write" : "Read") + " with a withdrawn rkey failed");
        } finally {
            b.release();
        }
        // the other client's connection carries on
        other.connection().call(callMsg(9, 1, new byte[3000]),
                CallOptions.DEFAULT.withMaxReplyBytes(8000)).get(30, TimeUnit.SECONDS).release();
        assertTrue(other.connection().isOpen());
    }
}
