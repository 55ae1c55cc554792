package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * {@link ChunkBehaviour} over the in-memory pair, and the responder against calls built by
 * hand over memory exposed by hand (read chunks at a position, Position-Zero chunks in
 * segments, hostile lists, unused and several write chunks): in memory only, as only the
 * in-memory pair exposes any memory a test hands it; the hostile lists' cost on verbs is
 * {@link ChunkVerbsTest}'s.
 */
class ChunkTest extends ChunkBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.IN_MEMORY;
    }

    /**
     * For calls posted by hand: the client keeps receives posted for the answers to them
     * (its backward credits; without, an answer to a call it never made would find none).
     */
    private static final RpcRdmaOptions RAW = RpcRdmaOptions.builder().backwardCredits(8).build();

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
    void aPositionZeroChunkInEightSegmentsIsReadOneSegmentAtATimeAtDepthOne() {
        RpcRdmaOptions o = RAW.toBuilder().inlineThreshold(1024).rdmaDepth(1).build();
        Recorder rec = new Recorder();
        try (InMemoryPair p = InMemoryPair.open(o, rec); Arena a = Arena.ofShared()) { // the peer's thread reaches it
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
            assertEquals(8, RawAccess.settled(p).server().stats().rdmaReads());
            assertTrue(RawAccess.settled(p).server().stats().rdmaDepthWaits() == 0, "one job: its operations wait inside it");
        }

    }

    @Test
    void aDdpArgumentInTheMiddleIsPlacedAtItsPositionWithItsPadAndInlineContentResumesAligned() {
        Recorder rec = new Recorder();
        try (InMemoryPair p = InMemoryPair.open(RAW, rec); Arena a = Arena.ofShared()) { // the peer's thread reaches it
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
            assertEquals(1, RawAccess.settled(p).server().stats().rdmaReads());
            assertEquals(0, p.server().heldReceives(), "no receive buffer held once the reply went");
        }
    }

    @Test
    void aPositionZeroReadChunkInSeveralSegmentsCarriesTheWholeCall() {
        Recorder rec = new Recorder();
        try (InMemoryPair p = InMemoryPair.open(RAW, rec); Arena a = Arena.ofShared()) { // the peer's thread reaches it
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
        RpcRdmaOptions o = RAW.toBuilder().maxChunkSegments(4).build();
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
            assertEquals(5, RawAccess.settled(p).server().stats().errChunkSent(), () -> RawAccess.settled(p).server().stats() + " / " + p.client().stats());
            assertEquals(0, RawAccess.settled(p).server().stats().rdmaReads(), "nothing was read");
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
        try (InMemoryPair p = InMemoryPair.open(RAW, held::add); Arena a = Arena.ofShared()) { // the peer reaches it
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
            assertEquals(0, RawAccess.settled(p).server().stats().rdmaWrites());
            Xdr.putInt(r, 0, 0x81);
            held.get(1).reply(r, MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 5}));
            assertEquals(1, RawAccess.settled(p).server().stats().rdmaWrites(), () -> RawAccess.settled(p).server().stats().toString());
            byte[] got = target.toArray(ValueLayout.JAVA_BYTE);
            assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
                    0x55}, got, "5 bytes written, no pad");
            assertEquals(2, RawAccess.settled(p).server().stats().repliesSent());
            assertEquals(0, p.server().peerOutstandingCalls());
        }
    }

    @Test
    void severalDdpResultsGoIntoTheirWriteChunksInOrderAndMoreResultsThanChunksAreRefused() {
        List<IncomingCall> held = new ArrayList<>();
        try (InMemoryPair p = InMemoryPair.open(RAW, held::add); Arena a = Arena.ofShared()) { // the peer reaches it
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
            assertEquals(14, RawAccess.settled(p).server().stats().rdmaBytesWritten());
            // two results for the one chunk of 0x91: refused, the requester answered ERR_CHUNK
            Xdr.putInt(r, 0, 0x91);
            IncomingCall one = held.get(1);
            org.junit.jupiter.api.Assertions.assertThrows(ReplyRefusedException.class, () -> one.replyDdp(r,
                    List.of(MemorySegment.ofArray(new byte[1]), MemorySegment.ofArray(new byte[1]))));
            assertEquals(1, RawAccess.settled(p).server().stats().errChunkSent());
            assertEquals(14, RawAccess.settled(p).server().stats().rdmaBytesWritten(), "nothing written for the refused reply");
            assertEquals(0, p.server().peerOutstandingCalls());
        }
    }

    /**
     * The responder's reply through the Reply chunk allocates nothing per reply once warm
     * beyond the handle of the chunk buffer the link hands out for it (as an inline reply
     * allocates nothing): measured with the thread's allocation counter around the handler's
     * {@code reply} (RDMA Write into the Reply chunk and the RDMA_NOMSG Send), on the
     * in-memory pair, where the whole round trip runs on this thread. The bound, the
     * handle's bytes and the in-memory link's own objects plus 1, is far below what the
     * header and callbacks ReplyWriter made per reply cost (624 bytes with the handle).
     */
    @Test
    void aReplyThroughTheReplyChunkAllocatesNothingPerReply() throws Exception {
        int size = 5000;
        MemorySegment reply = MemorySegment.ofArray(new byte[24 + size]);
        long[] allocated = new long[1];
        int[] replies = new int[1];
        CallHandler h = CallHandler.immediate(c -> {
            Xdr.putInt(reply, 0, c.xid());
            Xdr.putInt(reply, 4, OncRpc.REPLY);
            long before = ThreadAllocation.bytes();
            c.reply(reply);
            allocated[0] += ThreadAllocation.bytes() - before;
            replies[0]++;
        });
        // a plain Send: the in-memory model of Send with Invalidate keeps a set of boxed rkeys
        try (InMemoryPair pair = InMemoryPair.open(opts(1024).toBuilder().remoteInvalidation(false).build(), h)) {
            MemorySegment call = callMsg(0, 1, new byte[16]);
            CallOptions o = CallOptions.timeout(5, java.util.concurrent.TimeUnit.SECONDS).withMaxReplyBytes(24 + size);
            ReplyReader<Long> reader = r -> r.byteSize();
            int measured = 20_000;
            int xid = 0;
            for (int round = 0; round < 2; round++) { // round 0 warms up
                allocated[0] = 0;
                replies[0] = 0;
                for (int i = 0; i < measured; i++) {
                    Xdr.putInt(call, 0, ++xid);
                    assertEquals(24L + size, pair.client().callAndRead(call, o, reader));
                }
            }
            assertEquals(measured, replies[0]);
            assertEquals(2L * measured, pair.server().stats().replyChunksUsed(), "every reply went through the Reply chunk");
            // what the link allocates for the reply's chunk buffer (its handle over pooled chunk memory)
            org.rpcrdma.transport.link.Link link = RawAccess.link(pair.server());
            long handle = 0;
            for (int round = 0; round < 2; round++) {
                long before = ThreadAllocation.bytes();
                for (int i = 0; i < measured; i++) {
                    link.allocateChunk(24 + size).release();
                }
                handle = (ThreadAllocation.bytes() - before) / measured;
            }
            // the in-memory link boxes the rkey of each RDMA Write to find the peer's memory (an Integer),
            // and after other tests made its copy's call sites megamorphic, it may keep one segment view
            // (40 bytes) the JIT otherwise removes
            long linkModel = 16 + 40;
            long perReply = allocated[0] / measured;
            assertTrue(perReply < handle + linkModel + 1, "the responder allocated " + perReply + " bytes per reply"
                    + " through the Reply chunk, where the chunk buffer's handle is " + handle + " and the in-memory"
                    + " link's own " + linkModel);
        }
    }
}
