package org.rpcrdma.transport.wire;

import static org.junit.jupiter.api.Assertions.*;
import static org.rpcrdma.transport.wire.RpcRdma.*;
import static org.rpcrdma.transport.wire.Wire.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Golden byte images written by hand from the RFC 8166 XDR, for every proc and every list
 * shape Linux's rpc_rdma.c draws. Each is checked both ways: our encoder produces exactly
 * these bytes, and our decoder reads them back to the same header.
 */
class RpcRdmaGoldenTest {
    static final int XID = 0xcafe0001;
    static final int CREDIT = 128;

    private static void assertBothWays(RpcRdmaHeader expected, byte[] golden, byte[] rpc) throws Exception {
        assertEquals(hex(golden), hex(encode(expected)), "encoder output");
        RpcRdmaHeader got = decode(cat(golden, rpc));
        assertTrue(got.sameWireContent(expected), () -> "decoded " + got + " expected " + expected);
        assertEquals(golden.length, got.headerLength());
        assertEquals(golden.length, got.messageOffset());
    }

    @Test
    void inlineRdmaMsgCall() throws Exception {
        byte[] golden = words(XID, 1, CREDIT, RDMA_MSG, 0, 0, 0);
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT).proc(RDMA_MSG);
        byte[] rpc = rpc(XID, RPC_CALL, 8);
        assertBothWays(h, golden, rpc);

        RpcRdmaHeader got = decode(cat(golden, rpc));
        assertEquals(28, got.messageOffset());
        assertEquals(rpc.length, got.messageLength());
        assertEquals(XID, got.rpcXid());
        assertEquals(RPC_CALL, got.rpcMsgType());
        assertTrue(got.hasNoChunks());
    }

    @Test
    void encodeInlineMsgInPlace() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(64);
            seg.fill((byte) 0x55);
            int n = RpcRdmaEncoder.encodeInlineMsg(seg, 4, XID, CREDIT);
            assertEquals(28, n);
            byte[] out = seg.asSlice(4, 28).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            assertEquals(hex(words(XID, 1, CREDIT, RDMA_MSG, 0, 0, 0)), hex(out));
            assertEquals(0x55, seg.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 3));
            assertEquals(0x55, seg.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 32));
        }
    }

    @Test
    void inlineRdmaMsgReply() throws Exception {
        byte[] golden = words(XID, 1, 32, RDMA_MSG, 0, 0, 0);
        RpcRdmaHeader got = decode(cat(golden, rpc(XID, RPC_REPLY, 4)));
        assertEquals(RPC_REPLY, got.rpcMsgType());
        assertEquals(32, got.credit());
    }

    /** Read list, one chunk of N segments, position P: 1 - PHLOO - 1 - PHLOO - 0. */
    @Test
    void readListOneChunkTwoSegments() throws Exception {
        byte[] golden = cat(words(XID, 1, CREDIT, RDMA_MSG),
                readEntry(16, 0x1111, 4096, 0x7f0000001000L),
                readEntry(16, 0x2222, 100, 0x7f0000009000L),
                words(0), words(0), words(0));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT);
        h.readList().add(16, 0x1111, 4096, 0x7f0000001000L).add(16, 0x2222, 100, 0x7f0000009000L);
        assertBothWays(h, golden, rpc(XID, RPC_CALL, 6));

        RpcRdmaHeader got = decode(cat(golden, rpc(XID, RPC_CALL, 6)));
        ReadList r = got.readList();
        assertEquals(2, r.segmentCount());
        assertEquals(1, r.chunkCount(), "same position = one chunk");
        assertEquals(16, r.chunkPosition(0));
        assertEquals(4196, r.chunkLength(0));
        assertEquals(0x7f0000009000L, r.segments().offset(1));
    }

    /** Read list with three chunks at rising positions. */
    @Test
    void readListThreeChunks() throws Exception {
        byte[] golden = cat(words(XID, 1, CREDIT, RDMA_MSG),
                readEntry(8, 1, 5, 0x100),
                readEntry(20, 2, 8, 0x200),
                readEntry(20, 3, 8, 0x300),
                readEntry(40, 4, 1, 0x400),
                words(0, 0, 0));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT);
        h.readList().add(8, 1, 5, 0x100).add(20, 2, 8, 0x200).add(20, 3, 8, 0x300).add(40, 4, 1, 0x400);
        // Full stream: [0,8) inline, chunk0 8..13 (+3 pad) to 16, [16,20) inline,
        // chunk1 20..36, [36,40) inline, chunk2 40..41 (+3) to 44. Inline = 8+4+4 = 16 bytes.
        assertBothWays(h, golden, rpc(XID, RPC_CALL, 2));
        ReadList r = decode(cat(golden, rpc(XID, RPC_CALL, 2))).readList();
        assertEquals(3, r.chunkCount());
        assertEquals(2, r.chunkSegmentCount(1));
        assertEquals(16, r.chunkLength(1));
        assertEquals(40, r.chunkPosition(2));
    }

    /** Write list, one chunk: 1 - N - HLOO - HLOO - 0. */
    @Test
    void writeListOneChunk() throws Exception {
        byte[] golden = cat(words(XID, 1, CREDIT, RDMA_MSG, 0),
                words(1, 2), hloo(0xaaaa, 65536, 0x10000L), hloo(0xbbbb, 4096, 0x20000L), words(0),
                words(0));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT);
        h.writeList().beginChunk();
        h.writeList().addSegment(0xaaaa, 65536, 0x10000L).addSegment(0xbbbb, 4096, 0x20000L);
        assertBothWays(h, golden, rpc(XID, RPC_CALL, 3));
        WriteList w = decode(cat(golden, rpc(XID, RPC_CALL, 3))).writeList();
        assertEquals(1, w.chunkCount());
        assertEquals(2, w.chunkSegmentCount(0));
        assertEquals(65536 + 4096, w.chunkLength(0));
        assertEquals(0xbbbb, w.handle(0, 1));
    }

    /** Write list, two chunks: 1 - N - HLOO ... - 1 - N - HLOO ... - 0. */
    @Test
    void writeListTwoChunks() throws Exception {
        byte[] golden = cat(words(XID, 1, CREDIT, RDMA_MSG, 0),
                words(1, 1), hloo(1, 512, 0x1000),
                words(1, 3), hloo(2, 1024, 0x2000), hloo(3, 1024, 0x3000), hloo(4, 1024, 0x4000),
                words(0), words(0));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT);
        WriteList w = h.writeList();
        w.beginChunk();
        w.addSegment(1, 512, 0x1000);
        w.beginChunk();
        w.addSegment(2, 1024, 0x2000).addSegment(3, 1024, 0x3000).addSegment(4, 1024, 0x4000);
        assertBothWays(h, golden, rpc(XID, RPC_CALL, 0));
        WriteList got = decode(cat(golden, rpc(XID, RPC_CALL, 0))).writeList();
        assertEquals(2, got.chunkCount());
        assertEquals(3, got.chunkSegmentCount(1));
        assertEquals(0x4000, got.offset(1, 2));
    }

    /** Reply chunk in a Call: 1 - N - HLOO - HLOO (no terminator: it is not a list). */
    @Test
    void replyChunkInCall() throws Exception {
        byte[] golden = cat(words(XID, 1, CREDIT, RDMA_MSG, 0, 0),
                words(1, 2), hloo(7, 4096, 0x9000), hloo(8, 4096, 0xa000));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT).hasReplyChunk(true);
        h.replyChunk().add(7, 4096, 0x9000).add(8, 4096, 0xa000);
        assertBothWays(h, golden, rpc(XID, RPC_CALL, 1));
        RpcRdmaHeader got = decode(cat(golden, rpc(XID, RPC_CALL, 1)));
        assertTrue(got.hasReplyChunk());
        assertEquals(8192, got.replyChunk().totalLength());
    }

    /** All three lists at once, as an NFS READ-with-large-reply Call might. */
    @Test
    void allThreeLists() throws Exception {
        byte[] golden = cat(words(XID, 1, CREDIT, RDMA_MSG),
                readEntry(12, 0x10, 8, 0x100), words(0),
                words(1, 1), hloo(0x20, 8192, 0x200), words(0),
                words(1, 1), hloo(0x30, 1024, 0x300));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT).hasReplyChunk(true);
        h.readList().add(12, 0x10, 8, 0x100);
        h.writeList().beginChunk();
        h.writeList().addSegment(0x20, 8192, 0x200);
        h.replyChunk().add(0x30, 1024, 0x300);
        assertBothWays(h, golden, rpc(XID, RPC_CALL, 2));
    }

    /** A Long Call: RDMA_NOMSG, the whole message in a Position-Zero Read chunk. */
    @Test
    void nomsgLongCall() throws Exception {
        byte[] golden = cat(words(XID, 1, CREDIT, RDMA_NOMSG),
                readEntry(0, 0x51, 4096, 0x1000), readEntry(0, 0x52, 904, 0x2000), words(0),
                words(0), words(0));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT).proc(RDMA_NOMSG);
        h.readList().add(0, 0x51, 4096, 0x1000).add(0, 0x52, 904, 0x2000);
        assertBothWays(h, golden, new byte[0]);
        RpcRdmaHeader got = decode(golden);
        assertTrue(got.readList().hasPositionZeroChunk());
        assertEquals(5000, got.readList().chunkLength(0));
        assertEquals(0, got.messageLength());
        assertEquals(RpcRdmaHeader.MSG_TYPE_UNKNOWN, got.rpcMsgType());
    }

    /** A Long Reply: RDMA_NOMSG with the used Reply chunk. */
    @Test
    void nomsgLongReply() throws Exception {
        byte[] golden = cat(words(XID, 1, CREDIT, RDMA_NOMSG, 0, 0),
                words(1, 2), hloo(0x61, 4096, 0x1000), hloo(0x62, 0, 0x2000));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT).proc(RDMA_NOMSG).hasReplyChunk(true);
        h.replyChunk().add(0x61, 4096, 0x1000).add(0x62, 0, 0x2000);
        assertBothWays(h, golden, new byte[0]);
    }

    /** RDMA_MSGP: align and thresh are decoded, then it is an RDMA_MSG. */
    @Test
    void msgpDecodedAsMsg() throws Exception {
        byte[] golden = words(XID, 1, CREDIT, RDMA_MSGP, 64, 1024, 0, 0, 0);
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT).msgp(64, 1024);
        assertBothWays(h, golden, rpc(XID, RPC_CALL, 1));
        RpcRdmaHeader got = decode(cat(golden, rpc(XID, RPC_CALL, 1)));
        assertEquals(64, got.align());
        assertEquals(1024, got.thresh());
        assertTrue(got.isInline());
        assertEquals(36, got.messageOffset());
        assertEquals(XID, got.rpcXid());
    }

    @Test
    void msgpAndDoneAreNeverSent() {
        RpcRdmaHeader h = bigHeader().clear().msgp(4, 4);
        byte[] buf = new byte[64];
        assertThrows(IllegalArgumentException.class,
                () -> RpcRdmaEncoder.encode(h, MemorySegment.ofArray(buf), 0, buf.length));
        h.clear().proc(RDMA_DONE);
        assertThrows(IllegalArgumentException.class,
                () -> RpcRdmaEncoder.encode(h, MemorySegment.ofArray(buf), 0, buf.length));
    }

    @Test
    void rdmaDoneRecognisedAndEmpty() throws Exception {
        byte[] golden = words(XID, 1, 0, RDMA_DONE);
        RpcRdmaHeader h = bigHeader().clear().xid(XID).proc(RDMA_DONE);
        assertBothWays(h, golden, new byte[0]);
        RpcRdmaHeader got = decode(cat(golden, words(0xdead, 0xbeef)));
        assertEquals(RDMA_DONE, got.proc());
        assertEquals(16, got.headerLength());
        assertEquals(0, got.messageLength());
    }

    @Test
    void errVers() throws Exception {
        byte[] golden = words(XID, 1, CREDIT, RDMA_ERROR, ERR_VERS, 1, 1);
        byte[] out = new byte[28];
        assertEquals(28, RpcRdmaEncoder.encodeErrVers(MemorySegment.ofArray(out), 0, XID, CREDIT));
        assertEquals(hex(golden), hex(out));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT).errVers(1, 1);
        assertBothWays(h, golden, new byte[0]);
        RpcRdmaHeader got = decode(words(XID, 1, CREDIT, RDMA_ERROR, ERR_VERS, 1, 3));
        assertEquals(ERR_VERS, got.errorCode());
        assertEquals(1, got.versLow());
        assertEquals(3, got.versHigh());
    }

    @Test
    void errChunk() throws Exception {
        byte[] golden = words(XID, 1, CREDIT, RDMA_ERROR, ERR_CHUNK);
        byte[] out = new byte[20];
        assertEquals(20, RpcRdmaEncoder.encodeErrChunk(MemorySegment.ofArray(out), 0, XID, CREDIT));
        assertEquals(hex(golden), hex(out));
        RpcRdmaHeader h = bigHeader().clear().xid(XID).credit(CREDIT).errChunk();
        assertBothWays(h, golden, new byte[0]);
    }

    @Test
    void encodeErrorFromException() throws Exception {
        RpcRdmaProtocolException vers = assertThrows(RpcRdmaProtocolException.class,
                () -> decode(words(XID, 2, CREDIT, RDMA_MSG, 0, 0, 0)));
        byte[] out = new byte[28];
        assertEquals(28, RpcRdmaEncoder.encodeError(MemorySegment.ofArray(out), 0, vers, 5));
        assertEquals(hex(words(XID, 1, 5, RDMA_ERROR, ERR_VERS, 1, 1)), hex(out));

        RpcRdmaProtocolException chunk = assertThrows(RpcRdmaProtocolException.class,
                () -> decode(words(XID, 1, CREDIT, 9)));
        assertEquals(20, RpcRdmaEncoder.encodeError(MemorySegment.ofArray(out), 0, chunk, 5));

        RpcRdmaProtocolException fatal = assertThrows(RpcRdmaProtocolException.class,
                () -> decode(words(XID))); // no rdma_vers: nothing to answer under
        assertThrows(IllegalArgumentException.class,
                () -> RpcRdmaEncoder.encodeError(MemorySegment.ofArray(out), 0, fatal, 5));
    }

    @Test
    void byteBufferEntryPointAndOffsets() throws Exception {
        byte[] msg = cat(words(XID, 1, CREDIT, RDMA_MSG, 0, 0, 0), rpc(XID, RPC_CALL, 1));
        ByteBuffer direct = ByteBuffer.allocateDirect(msg.length + 8);
        direct.position(8);
        direct.put(msg);
        direct.position(8);
        RpcRdmaHeader h = bigHeader();
        RpcRdmaDecoder.decode(direct.slice(), h);
        assertEquals(28, h.messageOffset());
        assertEquals(12, h.messageLength());

        // Decoding at an offset inside a larger native segment.
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(256);
            MemorySegment.copy(msg, 0, seg, java.lang.foreign.ValueLayout.JAVA_BYTE, 100, msg.length);
            RpcRdmaDecoder.decode(seg, 100, msg.length, h);
            assertEquals(128, h.messageOffset());
            assertEquals(XID, h.rpcXid());
        }
    }

    @Test
    void headerSizingForInlineThreshold() {
        RpcRdmaHeader h = RpcRdmaHeader.forInlineThreshold(1024);
        assertEquals(41, h.readList().capacity());
        // A header with 41 read segments plus the terminators fits in 1024 bytes; 42 don't.
        assertTrue((7 + 41 * 6) * 4 <= 1024);
        assertTrue((7 + 42 * 6) * 4 > 1024);
        assertThrows(IllegalArgumentException.class, () -> RpcRdmaHeader.forInlineThreshold(16));
    }

    @Test
    void encodeRefusesWhatDoesNotFit() {
        RpcRdmaHeader h = bigHeader().clear().xid(XID);
        h.readList().add(4, 1, 1, 1);
        byte[] buf = new byte[40];
        assertThrows(IllegalArgumentException.class,
                () -> RpcRdmaEncoder.encode(h, MemorySegment.ofArray(buf), 0, buf.length));
        h.clear().hasReplyChunk(true);
        assertThrows(IllegalArgumentException.class, () -> encode(h), "empty Reply chunk");
    }
}
