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
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;
import org.rpcrdma.transport.chunk.CallExposure;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.chunk.ChunkBuffer;

/**
 * Chunks between our client and server, on every link: long calls pulled by the server's
 * RDMA Reads and long replies written into Reply chunks, content checked byte for byte;
 * Reply chunks offered but not needed, missing or too small; DDP arguments and receptacles;
 * chunked backward calls (RFC 8167 §5.3); the requester's checks of what a responder
 * returns by hand; and rkeys that die with their call.
 */
abstract class ChunkBehaviour {
    abstract LinkFixture link();

    static byte[] pattern(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** A call header for messages posted by hand. */
    static RpcRdmaHeader header(int xid, int proc) {
        return new RpcRdmaHeader(64, 8, 64, 8).clear().xid(xid).credit(4).proc(proc);
    }

    static RpcRdmaOptions opts(int inline) {
        return RpcRdmaOptions.builder().inlineThreshold(inline).reconnectAttempts(0).build();
    }

    ReceivedMessage get(CompletableFuture<ReceivedMessage> f) throws Exception {
        return f.get(link().patienceMillis(), TimeUnit.MILLISECONDS);
    }

    /** What {@code f} failed with. */
    Throwable failure(CompletableFuture<ReceivedMessage> f) {
        return assertThrows(ExecutionException.class, () -> get(f)).getCause();
    }

    void noRkeysLeft(LinkFixture.Ends e) throws Exception {
        assertTrue(link().await(() -> e.exposedNow() == 0), () -> e.exposedNow() + " rkeys still exposed");
    }

    /** Echoes of every size at {@code inline}, each counted as a long call or reply exactly when it does not fit. */
    @ParameterizedTest(name = "inline {0}")
    @ValueSource(ints = {1024, 4096})
    void echoRoundTripsThroughChunksWhenTheyDoNotFitInline(int inline) throws Exception {
        int[] sizes = inline == 1024 ? new int[] {0, 1, 3, 1023, 1024, 1025, 4096, 65536, 1 << 20}
                : new int[] {0, 1023, 4095, 4096, 4097, 65536, 1 << 20, 16 << 20};
        try (LinkFixture.Ends e = link().open(opts(inline).toBuilder().maxChunkBytes(17 << 20).build(), echo())) {
            Connection c = e.client();
            for (int size : sizes) {
                long calls = c.stats().longCallsSent();
                long replies = e.serverStats().replyChunksUsed();
                long through = c.stats().repliesThroughReplyChunk();
                byte[] args = pattern(size, size);
                ReceivedMessage m = get(c.call(callMsg(size, 1, args), CallOptions.DEFAULT.withMaxReplyBytes(size + 64)));
                assertArrayEquals(args, results(m), size + " bytes at inline " + inline);
                m.release();
                boolean longCall = 40 + size + RpcRdma.INLINE_MSG_HEADER_BYTES > inline;
                boolean longReply = 24 + size + RpcRdma.INLINE_MSG_HEADER_BYTES > inline;
                assertEquals(longCall ? 1 : 0, c.stats().longCallsSent() - calls, size + ": long call");
                assertEquals(longReply ? 1 : 0, e.serverStats().replyChunksUsed() - replies,
                        size + ": reply through the Reply chunk");
                assertEquals(longReply ? 1 : 0, c.stats().repliesThroughReplyChunk() - through,
                        size + ": the client counts the reply that came through its Reply chunk");
                noRkeysLeft(e);
            }
            assertTrue(e.serverStats().rdmaReads() > 0 && e.serverStats().rdmaWrites() > 0);
            assertEquals(0, e.serverStats().errChunkSent());
            assertTrue(c.isOpen() && e.server().isOpen());
        }
    }

    @Test
    void concurrentLongCallsShareTheRdmaDepth() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(1024).toBuilder().rdmaDepth(1).build(), echo())) {
            List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
            List<byte[]> args = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                byte[] a = pattern(20_000 + i, i);
                args.add(a);
                fs.add(e.client().call(callMsg(100 + i, 1, a), CallOptions.DEFAULT.withMaxReplyBytes(a.length + 64)));
            }
            for (int i = 0; i < fs.size(); i++) {
                ReceivedMessage m = get(fs.get(i));
                assertArrayEquals(args.get(i), results(m));
                m.release();
            }
            noRkeysLeft(e);
        }
    }

    /** A WRITE-like payload goes as a DDP read chunk, a READ-like result lands in the receptacle. */
    @Test
    void aWritePayloadTravelsAsAReadChunkAndAReadResultLandsInTheReceptacle() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(1024), ddpEcho())) {
            for (int size : new int[] {1, 1023, 10_001, 65_537, 1 << 20}) {
                long reads = e.serverStats().rdmaReads();
                byte[] data = pattern(size, size); // unaligned: the pad is not sent
                MemorySegment receptacle = MemorySegment.ofArray(new byte[size + 3]);
                ReceivedMessage m = get(e.client().call(writeCall(size, data),
                        CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, size)).withReceptacle(receptacle)));
                assertEquals(size, m.placedBytes());
                assertArrayEquals(data, receptacle.asSlice(0, size).toArray(ValueLayout.JAVA_BYTE));
                assertEquals(0, receptacle.get(ValueLayout.JAVA_BYTE, size), "no pad written");
                assertEquals(28, m.bytes().byteSize(), "the reduced reply: the opaque's length word, no data");
                assertEquals(size, Xdr.getInt(m.bytes(), 24));
                m.release();
                if (size > 1024) {
                    assertEquals(reads + 1, e.serverStats().rdmaReads(), size + ": the payload in one read");
                }
                noRkeysLeft(e);
            }
            assertEquals(0, e.client().stats().longCallsSent(), "RDMA_MSG with a DDP read chunk, not a long call");
        }
    }

    /** The error arm of a union: a result with no DDP data leaves the offered write chunk unused. */
    @Test
    void aReceptacleTheServerDoesNotUseReportsZeroPlacedAndIsLeftAlone() throws Exception {
        try (LinkFixture.Ends e = link().open(opts(1024), RemoteInvalidationTest.SMALL_REPLY)) {
            MemorySegment receptacle = MemorySegment.ofArray(new byte[8192]);
            receptacle.fill((byte) 0x55);
            ReceivedMessage m = get(e.client().call(callMsg(4, 1, new byte[8]),
                    CallOptions.DEFAULT.withReceptacle(receptacle)));
            assertEquals(0, m.placedBytes());
            m.release();
            assertEquals(0, e.serverStats().rdmaWrites());
            for (int i = 0; i < receptacle.byteSize(); i++) {
                assertEquals((byte) 0x55, receptacle.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
            }
            noRkeysLeft(e);
        }
    }

    /** RFC 8167 §5.3: our client said it takes chunked backward calls; the roles of the forward direction swap. */
    @Test
    void chunkedBackwardCallsBetweenOurEnds() throws Exception {
        RpcRdmaOptions o = opts(1024).toBuilder().backwardCredits(4).build();
        try (LinkFixture.Ends e = link().open(o, echo())) {
            e.client().enableBackchannel(echo()).get(link().patienceMillis(), TimeUnit.MILLISECONDS);
            Connection sc = e.server();
            for (int size : new int[] {5000, 1 << 20}) {
                byte[] args = pattern(size, size);
                ReceivedMessage m = get(sc.call(callMsg(size, 1, args), CallOptions.DEFAULT.withMaxReplyBytes(size + 64)));
                assertArrayEquals(args, results(m), size + " bytes");
                m.release();
            }
            Connection c = e.client();
            assertEquals(2, sc.stats().longCallsSent());
            assertTrue(c.stats().rdmaReads() > 0 && c.stats().rdmaWrites() > 0, "the client read and wrote");
            assertEquals(2, c.stats().replyChunksUsed());
            if (link().bindsWindows(o)) {
                assertEquals(2, sc.stats().windowsBound(), "the server exposed each call and its Reply chunk through one"
                        + " window: " + sc.stats());
                assertEquals(2, sc.stats().remoteInvalidations(), "withdrawn by the client's Send with Invalidate");
            }
            byte[] fwd = pattern(3000, 1);
            assertArrayEquals(fwd, results(get(c.call(callMsg(1, 1, fwd), CallOptions.DEFAULT.withMaxReplyBytes(3064)))),
                    "forward calls carry on");
            noRkeysLeft(e);
        }
    }

    @Test
    void aReplyChunkOfferedButNotNeededLeavesTheReplyInline() throws Exception {
        // The Linux NFSv4.1 client's EXCHANGE_ID: it offers a Reply chunk although the reply fits.
        try (LinkFixture.Ends p = link().open(opts(1024), echo())) {
            ReceivedMessage m = get(p.client().call(callMsg(8, 1, new byte[] {1, 2, 3, 4}),
                    CallOptions.DEFAULT.withMaxReplyBytes(8192)));
            assertArrayEquals(new byte[] {1, 2, 3, 4}, results(m));
            m.release();
            assertEquals(1, p.serverStats().chunkedCallsReceived());
            assertEquals(0, p.serverStats().replyChunksUsed(), "a reply that fits goes inline (RDMA_MSG)");
            assertEquals(0, p.client().stats().repliesThroughReplyChunk());
            noRkeysLeft(p);
        }
    }

    @Test
    void aBlockingCallOffersItsReplyChunkToo() throws Exception {
        try (LinkFixture.Ends p = link().open(opts(1024), echo())) {
            byte[] args = pattern(20_000, 7);
            ReceivedMessage m = p.client().callAndWait(callMsg(12, 1, args),
                    CallOptions.timeout(10, TimeUnit.SECONDS).withMaxReplyBytes(24 + args.length));
            assertArrayEquals(args, results(m));
            assertEquals(1, p.serverStats().replyChunksUsed());
            noRkeysLeft(p);
            assertThrows(IllegalArgumentException.class, () -> p.client()
                    .callAndWait(callMsg(13, 1, args), CallOptions.timeout(1, TimeUnit.SECONDS)
                            .withMaxReplyBytes(Integer.MAX_VALUE)));
        }
    }

    @Test
    void aReplyTooLargeForItsReplyChunkIsRefusedAndTheHandlerTold() throws Exception {
        AtomicReference<RuntimeException> told = new AtomicReference<>();
        CallHandler big = call -> {
            MemorySegment r = MemorySegment.ofArray(new byte[5000]);
            Xdr.putInt(r, 0, call.xid());
            Xdr.putInt(r, 4, OncRpc.REPLY);
            try {
                call.reply(r);
            } catch (ReplyRefusedException e) {
                told.set(e);
            }
        };
        try (LinkFixture.Ends p = link().open(opts(1024), big)) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(9, 1, new byte[0]),
                    CallOptions.DEFAULT.withMaxReplyBytes(2048));
            Throwable e = failure(f);
            assertInstanceOf(RdmaErrorException.class, e);
            assertEquals(RpcRdma.ERR_CHUNK, ((RdmaErrorException) e).errorCode());
            assertTrue(link().await(() -> told.get() != null), "the handler was told");
            assertTrue(told.get().getMessage().contains("Reply chunk"), told.get().getMessage());
            // and without any Reply chunk
            told.set(null);
            assertTrue(p.client().isOpen());
            f = p.client().call(callMsg(10, 1, new byte[0]));
            e = failure(f);
            assertInstanceOf(RdmaErrorException.class, e);
            assertEquals(RpcRdma.ERR_CHUNK, ((RdmaErrorException) e).errorCode());
            assertTrue(link().await(() -> told.get() != null), "the handler was told");
            assertTrue(told.get().getMessage().contains("offered no Reply chunk"), told.get().getMessage());
            noRkeysLeft(p);
            assertTrue(p.client().isOpen() && p.server().isOpen());
        }
    }

    @Test
    void aBackwardCallTooLargeToGoInlineFailsAtOnceToAClientThatTakesNoChunks() throws Exception {
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(1024).backwardCredits(2)
                .backwardChunks(false).build();
        try (LinkFixture.Ends p = link().open(o, echo())) {
            p.client().enableBackchannel(echo()).get(link().patienceMillis(), TimeUnit.MILLISECONDS);
            CompletableFuture<ReceivedMessage> f = p.server().call(callMsg(11, 1, new byte[2000]));
            assertTrue(f.isDone(), "failed at once");
            Throwable e = failure(f);
            assertInstanceOf(ChunksUnavailableException.class, e);
            assertTrue(e.getMessage().contains("did not say it takes backward calls with chunks"), e.getMessage());
        }
    }

    /**
     * RFC 8166 §3.4.5: a DDP result's XDR pad is not written into the chunk. A 1001-byte
     * result goes into a receptacle of exactly 1001 bytes (the padded 1004 would not fit),
     * and the pulled 1001-byte payload arrives with its pad in place.
     */
    @Test
    void anOddLengthDdpResultFillsAnExactlySizedReceptacle() throws Exception {
        try (LinkFixture.Ends p = link().open(opts(1024), ddpEcho())) {
            byte[] data = pattern(1001, 7);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[1001]);
            ReceivedMessage m = get(p.client().call(writeCall(0xc5, data),
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length)).withReceptacle(receptacle)));
            assertEquals(1001, m.placedBytes());
            assertArrayEquals(data, receptacle.toArray(ValueLayout.JAVA_BYTE));
            assertEquals(1001, Xdr.getInt(m.bytes(), 24), "the opaque's length word stays in the reply");
            m.release();
            assertEquals(1, p.serverStats().rdmaReads(), "the payload pulled from its read chunk");
            assertEquals(1001, p.serverStats().rdmaBytesWritten(), "no pad written");
            assertEquals(0, p.serverStats().chunkListsRefused());
            noRkeysLeft(p);
        }
    }

    /**
     * A DDP payload plus the rest of the call over the inline threshold: the whole call goes
     * in a Position-Zero Read chunk (RFC 8166 §3.5.3: the reduced call would not fit either);
     * and a DDP result plus the rest of the reply over the threshold: the result in the
     * write chunk and the rest through the Reply chunk (§3.5.4), both in one reply.
     */
    @Test
    void aPayloadPlusAnOverThresholdRemainderTakesAPositionZeroChunkAndAReplyChunk() throws Exception {
        byte[] trailer = pattern(2000, 9);
        CallHandler handler = call -> {
            MemorySegment in = call.message().bytes();
            int len = Xdr.getInt(in, 40);
            MemorySegment data = in.asSlice(44, len);
            MemorySegment rest = in.asSlice(44 + Xdr.roundUp(len), trailer.length);
            MemorySegment r = MemorySegment.ofArray(new byte[28 + trailer.length]);
            int[] w = {call.xid(), OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS, len};
            for (int i = 0; i < w.length; i++) {
                Xdr.putInt(r, i * 4L, w[i]);
            }
            MemorySegment.copy(rest, 0, r, 28, trailer.length);
            call.reply(r, data);
        };
        try (LinkFixture.Ends p = link().open(opts(1024), handler)) {
            byte[] data = pattern(5003, 11);
            byte[] args = new byte[4 + Xdr.roundUp(data.length) + trailer.length];
            MemorySegment a = MemorySegment.ofArray(args);
            Xdr.putInt(a, 0, data.length);
            MemorySegment.copy(MemorySegment.ofArray(data), 0, a, 4, data.length);
            MemorySegment.copy(MemorySegment.ofArray(trailer), 0, a, 4 + Xdr.roundUp(data.length), trailer.length);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[8192]);
            ReceivedMessage m = get(p.client().call(callMsg(0xc6, 2, args),
                    CallOptions.DEFAULT.withMaxReplyBytes(4096).withDdpArgument(new DdpArgument(44, data.length))
                            .withReceptacle(receptacle)));
            assertEquals(data.length, m.placedBytes());
            assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(28 + trailer.length, m.bytes().byteSize());
            assertArrayEquals(trailer, m.bytes().asSlice(28).toArray(ValueLayout.JAVA_BYTE));
            m.release();
            assertEquals(1, p.client().stats().longCallsSent(), "the call went whole in a Position-Zero chunk");
            assertEquals(1, p.client().stats().repliesThroughReplyChunk());
            assertEquals(1, p.serverStats().replyChunksUsed());
            noRkeysLeft(p);
        }
    }

    @Test
    void aReceptacleTheServerDoesNotUseReportsZeroPlaced() throws Exception {
        try (LinkFixture.Ends p = link().open(opts(1024), echo())) {
            MemorySegment receptacle = MemorySegment.ofArray(new byte[64]);
            ReceivedMessage m = get(p.client().call(callMsg(0xc1, 1, new byte[] {1, 2, 3, 4}),
                    CallOptions.DEFAULT.withReceptacle(receptacle)));
            assertEquals(0, m.placedBytes());
            assertArrayEquals(new byte[] {1, 2, 3, 4}, results(m));
            m.release();
        }
    }

    @Test
    void aWriteChunkClaimingMoreThanOfferedFailsTheCall() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends p = link().open(opts(1024), held::add)) {
            MemorySegment receptacle = MemorySegment.ofArray(new byte[64]);
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0xc2, 1, new byte[0]),
                    CallOptions.DEFAULT.withReceptacle(receptacle));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            RpcRdmaHeader h = header(0xc2, RpcRdma.RDMA_MSG);
            h.writeList().beginChunk();
            h.writeList().addSegment(offered.writeList().handle(0, 0), 65, offered.writeList().offset(0, 0));
            MemorySegment r = MemorySegment.ofArray(new byte[24]);
            Xdr.putInt(r, 0, 0xc2);
            Xdr.putInt(r, 4, OncRpc.REPLY);
            RawAccess.send(p.server(), raw(h, r));
            Throwable e = failure(f);
            assertInstanceOf(MalformedReplyException.class, e);
            assertTrue(e.getMessage().contains("claims 65 bytes"), e.getMessage());
            noRkeysLeft(p);
        }
    }

    @Test
    void aReplyClaimingMoreThanTheReplyChunkOfferedFailsTheCallAndReadsNothing() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends p = link().open(opts(1024), held::add)) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x90, 1, new byte[0]),
                    CallOptions.DEFAULT.withMaxReplyBytes(4096));
            CallExposure x = ((CallFuture) f).request().exposure();
            RpcRdmaHeader offered = x.header();
            RpcRdmaHeader h = header(0x90, RpcRdma.RDMA_NOMSG).hasReplyChunk(true);
            h.replyChunk().add(offered.replyChunk().handle(0), offered.replyChunk().length(0) + 1,
                    offered.replyChunk().offset(0));
            RawAccess.send(p.server(), raw(h, null));
            Throwable e = failure(f);
            assertInstanceOf(MalformedReplyException.class, e);
            assertTrue(e.getMessage().contains("claims 4097 bytes"), e.getMessage());
            noRkeysLeft(p);
            // a different handle is refused too
            f = p.client().call(callMsg(0x91, 1, new byte[0]), CallOptions.DEFAULT.withMaxReplyBytes(4096));
            offered = ((CallFuture) f).request().exposure().header();
            h = header(0x91, RpcRdma.RDMA_NOMSG).hasReplyChunk(true);
            h.replyChunk().add(offered.replyChunk().handle(0) + 1, 24, offered.replyChunk().offset(0));
            RawAccess.send(p.server(), raw(h, null));
            assertInstanceOf(MalformedReplyException.class, failure(f));
        }
    }

    @Test
    void aLateRdmaWriteWithACompletedCallsRkeyFails() throws Exception {
        try (LinkFixture.Ends p = link().open(opts(1024), echo())) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0xa0, 1, new byte[4]),
                    CallOptions.DEFAULT.withMaxReplyBytes(4096));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            get(f).release();
            ChunkBuffer b = RawAccess.link(p.server()).allocateChunk(8);
            RawAccess.link(p.server()).postWrite(0, b, 0, 8, offered.replyChunk().handle(0), offered.replyChunk().offset(0));
            Connection c = p.client();
            assertTrue(link().await(() -> !c.isOpen()), "the write with a withdrawn rkey is a remote access error");
        }
    }

    @Test
    void aTimedOutCallWithdrawsItsRkeys() throws Exception {
        ConcurrentLinkedQueue<IncomingCall> held = new ConcurrentLinkedQueue<>();
        try (LinkFixture.Ends p = link().open(opts(1024), held::add)) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0xb0, 1, new byte[2000]),
                    CallOptions.DEFAULT.withReceptacle(MemorySegment.ofArray(new byte[64])));
            assertEquals(2, p.exposedNow(), "a long call and a write chunk");
            assertTrue(link().await(() -> held.size() == 1), "the server pulled the call");
            f.cancel(false);
            noRkeysLeft(p);
        }
    }

    /** A call header with {@code inline} after it (null for RDMA_NOMSG). */
    static MemorySegment raw(RpcRdmaHeader h, MemorySegment inline) {
        int hl = RpcRdmaEncoder.encodedLength(h);
        MemorySegment m = MemorySegment.ofArray(new byte[hl + (inline == null ? 0 : (int) inline.byteSize())]);
        RpcRdmaEncoder.encode(h, m, 0, hl);
        if (inline != null) {
            MemorySegment.copy(inline, 0, m, hl, inline.byteSize());
        }
        return m;
    }

    /** Serves "WRITE" calls (program 2): the payload after a length word at 40, echoed as a DDP result if it can be. */
    static CallHandler ddpEcho() {
        return call -> {
            MemorySegment in = call.message().bytes();
            int len = Xdr.getInt(in, 40);
            MemorySegment data = in.asSlice(44, len);
            MemorySegment r = MemorySegment.ofArray(new byte[24 + 4 + (call.writeChunkCount() > 0 ? 0
                    : Xdr.roundUp(len))]);
            int[] w = {call.xid(), OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS, len};
            for (int i = 0; i < w.length; i++) {
                Xdr.putInt(r, i * 4L, w[i]);
            }
            if (call.writeChunkCount() > 0) {
                call.reply(r, data); // the opaque's data goes to the write chunk, its length word stays
            } else {
                MemorySegment.copy(data, 0, r, 28, len);
                call.reply(r);
            }
        };
    }

    /** A call whose arguments are an opaque of {@code data} followed by 8 bytes of trailer. */
    static MemorySegment writeCall(int xid, byte[] data) {
        byte[] args = new byte[4 + Xdr.roundUp(data.length) + 8];
        MemorySegment a = MemorySegment.ofArray(args);
        Xdr.putInt(a, 0, data.length);
        MemorySegment.copy(MemorySegment.ofArray(data), 0, a, 4, data.length);
        Xdr.putLong(a, 4 + Xdr.roundUp(data.length), 0x0102030405060708L);
        return callMsg(xid, 2, args);
    }

}
