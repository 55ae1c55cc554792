package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.echo;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rpcrdma.transport.chunk.CallExposure;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * Chunks over {@link InMemoryPair}: long calls and replies end to end, the responder's
 * handling of read, write and reply chunks (including hostile lists played by hand), and
 * the requester's checks of what a responder returns. The pair emulates RDMA Read/Write
 * with rkey, bounds and invalidation checks, like an RNIC.
 */
class ChunkTest {
    static byte[] pattern(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @ParameterizedTest(name = "{0} bytes at inline {1}")
    @CsvSource({"0,1024", "1,1024", "3,1024", "1023,1024", "1024,1024", "1025,1024", "4096,1024", "65536,1024",
            "1048576,1024", "0,4096", "1023,4096", "4096,4096", "4097,4096", "65536,4096", "1048576,4096"})
    void echoRoundTripsThroughChunksWhenTheyDoNotFitInline(int size, int inline) {
        RpcRdmaOptions o = RpcRdmaOptions.defaults().withInlineThreshold(inline);
        try (InMemoryPair p = InMemoryPair.open(o, echo())) {
            byte[] args = pattern(size, size);
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(7, 1, args),
                    CallOptions.DEFAULT.withMaxReplyBytes(size + 64));
            ReceivedMessage m = f.join();
            assertArrayEquals(args, results(m));
            m.release();
            boolean longCall = 40 + size + RpcRdma.INLINE_MSG_HEADER_BYTES > inline;
            boolean longReply = 24 + size + RpcRdma.INLINE_MSG_HEADER_BYTES > inline;
            assertEquals(longCall ? 1 : 0, p.client().stats().longCallsSent(), "long call");
            assertEquals(longReply ? 1 : 0, p.server().stats().replyChunksUsed(), "reply through the Reply chunk");
            assertEquals(longReply ? 1 : 0, p.client().stats().repliesThroughReplyChunk(),
                    "the client counts the reply that came through its Reply chunk");
            assertEquals(0, p.server().stats().errChunkSent());
            assertEquals(0, p.exposedCount(), "every rkey withdrawn once the call completed");
            assertTrue(p.client().isOpen() && p.server().isOpen());
        }
    }

    @Test
    void readsAndWritesBeyondTheDepthWaitTheirTurn() {
        RpcRdmaOptions o = RAW.withInlineThreshold(1024).withRdmaDepth(1);
        Recorder rec = new Recorder();
        try (InMemoryPair p = InMemoryPair.open(o, rec); Arena a = Arena.ofConfined()) {
            // one call in 8 segments of a Position-Zero Read chunk: one RDMA Read at a time
            MemorySegment call = callMsg(0x53, 1, pattern(8000, 8));
            MemorySegment mem = a.allocate(call.byteSize());
            mem.copyFrom(call);
            int rkey = RawAccess.expose(p.client(), mem, false);
            RpcRdmaHeader h = header(0x53, RpcRdma.RDMA_NOMSG);
            long per = call.byteSize() / 8;
            for (int i = 0; i < 8; i++) {
                long len = i == 7 ? call.byteSize() - 7 * per : per;
                h.readList().add(0, rkey, len, mem.address() + i * per);
            }
            RawAccess.send(p.client(), raw(h, null));
            assertEquals(1, rec.seen.size());
            assertArrayEquals(call.toArray(ValueLayout.JAVA_BYTE), rec.seen.get(0));
            assertEquals(8, p.server().stats().rdmaReads());
            assertTrue(p.server().stats().rdmaDepthWaits() == 0, "one job: its operations wait inside it");
        }
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024).withRdmaDepth(1),
                echo())) {
            List<CompletableFuture<ReceivedMessage>> fs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                fs.add(p.client().call(callMsg(0x54 + i, 1, pattern(3000 + i, i)),
                        CallOptions.DEFAULT.withMaxReplyBytes(4096)));
            }
            for (int i = 0; i < 4; i++) {
                ReceivedMessage m = fs.get(i).join();
                assertArrayEquals(pattern(3000 + i, i), results(m));
                m.release();
            }
        }
    }

    @Test
    void aReplyChunkOfferedButNotNeededLeavesTheReplyInline() {
        // The Linux NFSv4.1 client's EXCHANGE_ID: it offers a Reply chunk although the reply fits.
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024), echo())) {
            ReceivedMessage m = p.client().call(callMsg(8, 1, new byte[] {1, 2, 3, 4}),
                    CallOptions.DEFAULT.withMaxReplyBytes(8192)).join();
            assertArrayEquals(new byte[] {1, 2, 3, 4}, results(m));
            m.release();
            assertEquals(1, p.server().stats().chunkedCallsReceived());
            assertEquals(0, p.server().stats().replyChunksUsed(), "a reply that fits goes inline (RDMA_MSG)");
            assertEquals(0, p.client().stats().repliesThroughReplyChunk());
            assertEquals(0, p.exposedCount());
        }
    }

    @Test
    void aBlockingCallOffersItsReplyChunkToo() throws Exception {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024), echo())) {
            byte[] args = pattern(20_000, 7);
            ReceivedMessage m = p.client().callAndWait(callMsg(12, 1, args),
                    CallOptions.timeout(10, java.util.concurrent.TimeUnit.SECONDS).withMaxReplyBytes(24 + args.length));
            assertArrayEquals(args, results(m));
            assertEquals(1, p.server().stats().replyChunksUsed());
            assertEquals(0, p.exposedCount());
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> p.client()
                    .callAndWait(callMsg(13, 1, args), CallOptions.timeout(1, java.util.concurrent.TimeUnit.SECONDS)
                            .withMaxReplyBytes(Integer.MAX_VALUE)));
        }
    }

    @Test
    void aReplyTooLargeForItsReplyChunkIsRefusedAndTheHandlerTold() {
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
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024), big)) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(9, 1, new byte[0]),
                    CallOptions.DEFAULT.withMaxReplyBytes(2048));
            CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, f::join);
            assertInstanceOf(RdmaErrorException.class, e.getCause());
            assertEquals(RpcRdma.ERR_CHUNK, ((RdmaErrorException) e.getCause()).errorCode());
            assertNotNull(told.get());
            assertTrue(told.get().getMessage().contains("Reply chunk"), told.get().getMessage());
            // and without any Reply chunk
            told.set(null);
            f = p.client().call(callMsg(10, 1, new byte[0]));
            e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, f::join);
            assertInstanceOf(RdmaErrorException.class, e.getCause());
            assertTrue(told.get().getMessage().contains("offered no Reply chunk"), told.get().getMessage());
            assertEquals(0, p.exposedCount());
            assertTrue(p.client().isOpen() && p.server().isOpen());
        }
    }

    @Test
    void aBackwardCallTooLargeToGoInlineFailsAtOnceToAClientThatTakesNoChunks() {
        RpcRdmaOptions o = RpcRdmaOptions.defaults().withInlineThreshold(1024).withBackwardCredits(2)
                .withBackwardChunks(false);
        try (InMemoryPair p = InMemoryPair.open(o, echo())) {
            p.client().enableBackchannel(echo()).join();
            CompletableFuture<ReceivedMessage> f = p.server().call(callMsg(11, 1, new byte[2000]));
            assertTrue(f.isDone(), "failed at once");
            CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, f::join);
            assertInstanceOf(ChunksUnavailableException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("did not say it takes backward calls with chunks"),
                    e.getCause().getMessage());
        }
    }

    // ---- the responder against calls built by hand ----

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

    /**
     * For calls posted by hand: the client keeps receives posted for the answers to them
     * (its backward credits; without, an answer to a call it never made would find none).
     */
    private static final RpcRdmaOptions RAW = RpcRdmaOptions.defaults().withBackwardCredits(8);

    private static RpcRdmaHeader header(int xid, int proc) {
        return new RpcRdmaHeader(64, 8, 64, 8).clear().xid(xid).credit(4).proc(proc);
    }

    /** A handler that keeps the calls it is given, answering each with an empty accepted reply. */
    private static final class Recorder implements CallHandler {
        final List<byte[]> seen = new ArrayList<>();
        final List<IncomingCall> calls = new ArrayList<>();

        @Override
        public void handle(IncomingCall call) {
            seen.add(call.message().toByteArray());
            calls.add(call);
            MemorySegment r = MemorySegment.ofArray(new byte[24]);
            Xdr.putInt(r, 0, call.xid());
            Xdr.putInt(r, 4, OncRpc.REPLY);
            call.reply(r);
        }
    }

    @Test
    void aDdpArgumentInTheMiddleIsPlacedAtItsPositionWithItsPadAndInlineContentResumesAligned() {
        Recorder rec = new Recorder();
        try (InMemoryPair p = InMemoryPair.open(RAW, rec); Arena a = Arena.ofConfined()) {
            // call: 40-byte header, a 4-byte length word, 5 bytes of opaque data (+3 pad) in a
            // read chunk at position 44, then 8 bytes of inline content after it
            byte[] data = {11, 12, 13, 14, 15};
            MemorySegment exposed = a.allocate(5);
            exposed.copyFrom(MemorySegment.ofArray(data));
            int rkey = RawAccess.expose(p.client(), exposed, false);
            MemorySegment reduced = callMsg(0x51, 1, new byte[] {0, 0, 0, 5, 21, 22, 23, 24, 25, 26, 27, 28});
            RpcRdmaHeader h = header(0x51, RpcRdma.RDMA_MSG);
            h.readList().add(44, rkey, 5, exposed.address());
            RawAccess.send(p.client(), raw(h, reduced));
            assertEquals(1, rec.seen.size(), "the handler got the call once its chunk was pulled");
            byte[] want = new byte[40 + 4 + 8 + 8];
            System.arraycopy(reduced.toArray(ValueLayout.JAVA_BYTE), 0, want, 0, 44);
            System.arraycopy(data, 0, want, 44, 5); // then 3 zero pad bytes
            System.arraycopy(new byte[] {21, 22, 23, 24, 25, 26, 27, 28}, 0, want, 52, 8);
            assertArrayEquals(want, rec.seen.get(0));
            assertEquals(1, p.server().stats().rdmaReads());
            assertEquals(0, p.server().heldReceives(), "no receive buffer held once the reply went");
        }
    }

    @Test
    void aPositionZeroReadChunkInSeveralSegmentsCarriesTheWholeCall() {
        Recorder rec = new Recorder();
        try (InMemoryPair p = InMemoryPair.open(RAW, rec); Arena a = Arena.ofConfined()) {
            MemorySegment call = callMsg(0x52, 1, pattern(3000, 3));
            MemorySegment mem = a.allocate(call.byteSize());
            mem.copyFrom(call);
            int rkey = RawAccess.expose(p.client(), mem, false);
            RpcRdmaHeader h = header(0x52, RpcRdma.RDMA_NOMSG);
            h.readList().add(0, rkey, 1000, mem.address()).add(0, rkey, 0, mem.address() + 1000)
                    .add(0, rkey, call.byteSize() - 1000, mem.address() + 1000);
            RawAccess.send(p.client(), raw(h, null));
            assertEquals(1, rec.seen.size());
            assertArrayEquals(call.toArray(ValueLayout.JAVA_BYTE), rec.seen.get(0));
        }
    }

    @Test
    void hostileChunkListsAreAnsweredErrChunkWithoutAllocatingWhatTheyClaim() {
        Recorder rec = new Recorder();
        RpcRdmaOptions o = RAW.withMaxChunkSegments(4);
        try (InMemoryPair p = InMemoryPair.open(o, rec)) {
            MemorySegment inline = callMsg(0x60, 1, new byte[8]);
            // 4 GiB - 1 in one read segment: over maxChunkBytes, refused before any allocation
            RpcRdmaHeader h = header(0x60, RpcRdma.RDMA_NOMSG);
            h.readList().add(0, 0x1234, 0xFFFF_FFFFL, 0x1000);
            RawAccess.send(p.client(), raw(h, null));
            // five segments against a limit of four
            h = header(0x61, RpcRdma.RDMA_MSG);
            for (int i = 0; i < 5; i++) {
                h.readList().add(40, 0x1234, 4, 0x1000 + 4 * i);
            }
            RawAccess.send(p.client(), raw(h, callMsg(0x61, 1, new byte[8])));
            // a Position-Zero chunk with another read chunk after it that makes the call too long
            h = header(0x62, RpcRdma.RDMA_NOMSG);
            h.readList().add(0, 0x1234, 100, 0x1000).add(40, 0x1234, 0xFFFF_FFFFL, 0x2000);
            RawAccess.send(p.client(), raw(h, null));
            // overlapping read chunks (the decoder's check, RFC 8166 §3.4.5)
            h = header(0x63, RpcRdma.RDMA_MSG);
            h.readList().add(40, 0x1234, 8, 0x1000).add(44, 0x1234, 4, 0x2000);
            RawAccess.send(p.client(), raw(h, callMsg(0x63, 1, new byte[8])));
            // a write chunk claiming 10,000 segments in a 1 KiB message
            MemorySegment m = raw(header(0x64, RpcRdma.RDMA_MSG), inline);
            MemorySegment bad = MemorySegment.ofArray(new byte[(int) m.byteSize() + 8 + 16]);
            MemorySegment.copy(m, 0, bad, 0, 20); // fixed header + empty read list
            Xdr.putInt(bad, 20, 1);
            Xdr.putInt(bad, 24, 10_000);
            Xdr.putInt(bad, 0, 0x64);
            RawAccess.send(p.client(), bad);
            assertEquals(0, rec.seen.size(), "no hostile call reached the handler");
            assertEquals(5, p.server().stats().errChunkSent(), () -> p.server().stats() + " / " + p.client().stats());
            assertEquals(0, p.server().stats().rdmaReads(), "nothing was read");
            assertEquals(0, p.server().peerOutstandingCalls());
            assertTrue(p.server().isOpen() && p.client().isOpen(), "a hostile call costs its call, not the connection");
            // and the connection still serves
            ReceivedMessage r = p.client().call(callMsg(0x65, 1, new byte[0])).join();
            r.release();
        }
    }

    @Test
    void aReadChunkWithAnRkeyThePeerNeverExposedIsARemoteAccessErrorThatEndsTheConnection() {
        Recorder rec = new Recorder();
        try (InMemoryPair p = InMemoryPair.open(RAW, rec)) {
            RpcRdmaHeader h = header(0x70, RpcRdma.RDMA_NOMSG);
            h.readList().add(0, 0x7777, 100, 0x1000);
            RawAccess.send(p.client(), raw(h, null));
            assertEquals(0, rec.seen.size());
            assertFalse(p.server().isOpen());
            assertFalse(p.client().isOpen());
        }
    }

    @Test
    void unusedWriteChunksAndADdpResultWithoutPad() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RAW, held::add); Arena a = Arena.ofConfined()) {
            MemorySegment target = a.allocate(16);
            target.fill((byte) 0x55);
            int rkey = RawAccess.expose(p.client(), target, true);
            RpcRdmaHeader h = header(0x80, RpcRdma.RDMA_MSG);
            h.writeList().beginChunk();
            h.writeList().addSegment(rkey, 8, target.address()).addSegment(rkey, 8, target.address() + 8);
            RawAccess.send(p.client(), raw(h, callMsg(0x80, 1, new byte[0])));
            h = header(0x81, RpcRdma.RDMA_MSG);
            h.writeList().beginChunk();
            // an rkey of its own: the reply to 0x80 invalidates the first (remote invalidation)
            h.writeList().addSegment(RawAccess.expose(p.client(), target, true), 16, target.address());
            RawAccess.send(p.client(), raw(h, callMsg(0x81, 1, new byte[0])));
            assertEquals(2, held.size());
            IncomingCall unused = held.get(0);
            assertEquals(1, unused.writeChunkCount());
            assertEquals(16, unused.writeChunkCapacity(0));
            MemorySegment r = MemorySegment.ofArray(new byte[24]);
            Xdr.putInt(r, 0, 0x80);
            Xdr.putInt(r, 4, OncRpc.REPLY);
            unused.reply(r); // the error arm of a union: no DDP result, chunk returned with zero lengths
            assertEquals(0, p.server().stats().rdmaWrites());
            Xdr.putInt(r, 0, 0x81);
            held.get(1).reply(r, MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 5}));
            assertEquals(1, p.server().stats().rdmaWrites(), () -> p.server().stats().toString());
            byte[] got = target.toArray(ValueLayout.JAVA_BYTE);
            assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
                    0x55}, got, "5 bytes written, no pad");
            assertEquals(2, p.server().stats().repliesSent());
            assertEquals(0, p.server().peerOutstandingCalls());
        }
    }

    @Test
    void severalDdpResultsGoIntoTheirWriteChunksInOrderAndMoreResultsThanChunksAreRefused() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RAW, held::add); Arena a = Arena.ofConfined()) {
            MemorySegment first = a.allocate(16);
            MemorySegment second = a.allocate(16);
            first.fill((byte) 0x55);
            second.fill((byte) 0x66);
            int rkey = RawAccess.expose(p.client(), first, true);
            int rkey2 = RawAccess.expose(p.client(), second, true);
            RpcRdmaHeader h = header(0x90, RpcRdma.RDMA_MSG);
            h.writeList().beginChunk();
            h.writeList().addSegment(rkey, 16, first.address());
            h.writeList().beginChunk();
            h.writeList().addSegment(rkey2, 8, second.address()).addSegment(rkey2, 8, second.address() + 8);
            RawAccess.send(p.client(), raw(h, callMsg(0x90, 1, new byte[0])));
            h = header(0x91, RpcRdma.RDMA_MSG);
            h.writeList().beginChunk();
            h.writeList().addSegment(RawAccess.expose(p.client(), first, true), 16, first.address());
            RawAccess.send(p.client(), raw(h, callMsg(0x91, 1, new byte[0])));
            assertEquals(2, held.size());
            assertEquals(2, held.get(0).writeChunkCount());
            MemorySegment r = MemorySegment.ofArray(new byte[24]);
            Xdr.putInt(r, 0, 0x90);
            Xdr.putInt(r, 4, OncRpc.REPLY);
            // result 0 into chunk 0, result 1 (spanning both segments) into chunk 1; no pad
            held.get(0).replyDdp(r, List.of(MemorySegment.ofArray(new byte[] {1, 2, 3}),
                    MemorySegment.ofArray(new byte[] {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9})));
            assertArrayEquals(new byte[] {1, 2, 3, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
                    0x55, 0x55}, first.toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(new byte[] {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 0x66, 0x66, 0x66, 0x66, 0x66},
                    second.toArray(ValueLayout.JAVA_BYTE));
            assertEquals(14, p.server().stats().rdmaBytesWritten());
            // two results for the one chunk of 0x91: refused, the requester answered ERR_CHUNK
            Xdr.putInt(r, 0, 0x91);
            IncomingCall one = held.get(1);
            org.junit.jupiter.api.Assertions.assertThrows(ReplyRefusedException.class, () -> one.replyDdp(r,
                    List.of(MemorySegment.ofArray(new byte[1]), MemorySegment.ofArray(new byte[1]))));
            assertEquals(1, p.server().stats().errChunkSent());
            assertEquals(14, p.server().stats().rdmaBytesWritten(), "nothing written for the refused reply");
            assertEquals(0, p.server().peerOutstandingCalls());
        }
    }

    // ---- DDP from the requester's side: a WRITE payload and a READ receptacle ----

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

    @Test
    void aWritePayloadTravelsAsAReadChunkAndAReadResultLandsInTheReceptacle() {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024), ddpEcho())) {
            byte[] data = pattern(10_001, 5); // unaligned: 3 bytes of pad not sent
            MemorySegment call = writeCall(0xc0, data);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[16_384]);
            ReceivedMessage m = p.client().call(call,
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length))
                            .withReceptacle(receptacle)).join();
            assertEquals(data.length, m.placedBytes());
            assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0, receptacle.get(ValueLayout.JAVA_BYTE, data.length), "no pad written");
            assertEquals(28, m.bytes().byteSize(), "the reduced reply: the opaque's length word, no data");
            assertEquals(data.length, Xdr.getInt(m.bytes(), 24));
            m.release();
            assertEquals(0, p.client().stats().longCallsSent(), "RDMA_MSG with a DDP read chunk, not a long call");
            assertEquals(1, p.server().stats().rdmaReads());
            assertEquals(0, p.exposedCount());
        }
    }

    /**
     * RFC 8166 §3.4.5: a DDP result's XDR pad is not written into the chunk. A 1001-byte
     * result goes into a receptacle of exactly 1001 bytes (the padded 1004 would not fit),
     * and the pulled 1001-byte payload arrives with its pad in place.
     */
    @Test
    void anOddLengthDdpResultFillsAnExactlySizedReceptacle() {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024), ddpEcho())) {
            byte[] data = pattern(1001, 7);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[1001]);
            ReceivedMessage m = p.client().call(writeCall(0xc5, data),
                    CallOptions.DEFAULT.withDdpArgument(new DdpArgument(44, data.length)).withReceptacle(receptacle))
                    .join();
            assertEquals(1001, m.placedBytes());
            assertArrayEquals(data, receptacle.toArray(ValueLayout.JAVA_BYTE));
            assertEquals(1001, Xdr.getInt(m.bytes(), 24), "the opaque's length word stays in the reply");
            m.release();
            assertEquals(1, p.server().stats().rdmaReads(), "the payload pulled from its read chunk");
            assertEquals(1001, p.server().stats().rdmaBytesWritten(), "no pad written");
            assertEquals(0, p.server().stats().chunkListsRefused());
            assertEquals(0, p.exposedCount());
        }
    }

    /**
     * A DDP payload plus the rest of the call over the inline threshold: the whole call goes
     * in a Position-Zero Read chunk (RFC 8166 §3.5.3: the reduced call would not fit either);
     * and a DDP result plus the rest of the reply over the threshold: the result in the
     * write chunk and the rest through the Reply chunk (§3.5.4), both in one reply.
     */
    @Test
    void aPayloadPlusAnOverThresholdRemainderTakesAPositionZeroChunkAndAReplyChunk() {
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
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024), handler)) {
            byte[] data = pattern(5003, 11);
            byte[] args = new byte[4 + Xdr.roundUp(data.length) + trailer.length];
            MemorySegment a = MemorySegment.ofArray(args);
            Xdr.putInt(a, 0, data.length);
            MemorySegment.copy(MemorySegment.ofArray(data), 0, a, 4, data.length);
            MemorySegment.copy(MemorySegment.ofArray(trailer), 0, a, 4 + Xdr.roundUp(data.length), trailer.length);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[8192]);
            ReceivedMessage m = p.client().call(callMsg(0xc6, 2, args),
                    CallOptions.DEFAULT.withMaxReplyBytes(4096).withDdpArgument(new DdpArgument(44, data.length))
                            .withReceptacle(receptacle)).join();
            assertEquals(data.length, m.placedBytes());
            assertArrayEquals(data, receptacle.asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(28 + trailer.length, m.bytes().byteSize());
            assertArrayEquals(trailer, m.bytes().asSlice(28).toArray(ValueLayout.JAVA_BYTE));
            m.release();
            assertEquals(1, p.client().stats().longCallsSent(), "the call went whole in a Position-Zero chunk");
            assertEquals(1, p.client().stats().repliesThroughReplyChunk());
            assertEquals(1, p.server().stats().replyChunksUsed());
            assertEquals(0, p.exposedCount());
        }
    }

    @Test
    void aReceptacleTheServerDoesNotUseReportsZeroPlaced() {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), echo())) {
            MemorySegment receptacle = MemorySegment.ofArray(new byte[64]);
            ReceivedMessage m = p.client().call(callMsg(0xc1, 1, new byte[] {1, 2, 3, 4}),
                    CallOptions.DEFAULT.withReceptacle(receptacle))
                    .join();
            assertEquals(0, m.placedBytes());
            assertArrayEquals(new byte[] {1, 2, 3, 4}, results(m));
            m.release();
        }
    }

    @Test
    void aWriteChunkClaimingMoreThanOfferedFailsTheCall() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), held::add)) {
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
            CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, f::join);
            assertInstanceOf(MalformedReplyException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("claims 65 bytes"), e.getCause().getMessage());
            assertEquals(0, p.exposedCount());
        }
    }

    // ---- the requester against a hostile responder ----

    @Test
    void aReplyClaimingMoreThanTheReplyChunkOfferedFailsTheCallAndReadsNothing() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024), held::add)) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0x90, 1, new byte[0]),
                    CallOptions.DEFAULT.withMaxReplyBytes(4096));
            CallExposure x = ((CallFuture) f).request().exposure();
            RpcRdmaHeader offered = x.header();
            RpcRdmaHeader h = header(0x90, RpcRdma.RDMA_NOMSG).hasReplyChunk(true);
            h.replyChunk().add(offered.replyChunk().handle(0), offered.replyChunk().length(0) + 1,
                    offered.replyChunk().offset(0));
            RawAccess.send(p.server(), raw(h, null));
            CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, f::join);
            assertInstanceOf(MalformedReplyException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("claims 4097 bytes"), e.getCause().getMessage());
            assertEquals(0, p.exposedCount(), "the call's rkeys were withdrawn");
            // a different handle is refused too
            f = p.client().call(callMsg(0x91, 1, new byte[0]), CallOptions.DEFAULT.withMaxReplyBytes(4096));
            offered = ((CallFuture) f).request().exposure().header();
            h = header(0x91, RpcRdma.RDMA_NOMSG).hasReplyChunk(true);
            h.replyChunk().add(offered.replyChunk().handle(0) + 1, 24, offered.replyChunk().offset(0));
            RawAccess.send(p.server(), raw(h, null));
            e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, f::join);
            assertInstanceOf(MalformedReplyException.class, e.getCause());
        }
    }

    @Test
    void aLateRdmaWriteWithACompletedCallsRkeyFails() {
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024), echo())) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0xa0, 1, new byte[4]),
                    CallOptions.DEFAULT.withMaxReplyBytes(4096));
            RpcRdmaHeader offered = ((CallFuture) f).request().exposure().header();
            f.join().release();
            ChunkBuffer b = RawAccess.link(p.server()).allocateChunk(8);
            RawAccess.link(p.server()).postWrite(0, b, 0, 8, offered.replyChunk().handle(0), offered.replyChunk().offset(0));
            assertFalse(p.client().isOpen(), "the write with a withdrawn rkey is a remote access error");
        }
    }

    @Test
    void aTimedOutCallWithdrawsItsRkeys() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults().withInlineThreshold(1024), held::add)) {
            CompletableFuture<ReceivedMessage> f = p.client().call(callMsg(0xb0, 1, new byte[2000]),
                    CallOptions.DEFAULT.withMaxReplyBytes(4096));
            assertEquals(2, p.exposedCount(), "a long call and a Reply chunk");
            f.cancel(false);
            assertEquals(0, p.exposedCount());
            assertEquals(1, held.size(), "the server had pulled the call before it was cancelled");
        }
    }
}
