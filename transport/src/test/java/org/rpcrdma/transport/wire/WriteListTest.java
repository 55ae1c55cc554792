package org.rpcrdma.transport.wire;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** The responder's view of a returned Write chunk (RFC 8166 §4.3.2). */
class WriteListTest {

    private static WriteList offered() {
        WriteList w = new WriteList(2, 8);
        w.beginChunk();
        w.addSegment(1, 4096, 0x1000).addSegment(2, 4096, 0x2000).addSegment(3, 4096, 0x3000);
        w.beginChunk();
        w.addSegment(4, 512, 0x4000);
        return w;
    }

    @Test
    void fillKeepsSegmentCountAndZeroesUnusedSegments() {
        WriteList w = offered();
        w.fillChunk(0, 5000);
        assertEquals(3, w.chunkSegmentCount(0), "segment count unchanged");
        assertEquals(4096, w.length(0, 0));
        assertEquals(904, w.length(0, 1));
        assertEquals(0, w.length(0, 2), "unused segment has length 0");
        assertEquals(5000, w.chunkLength(0));
        assertEquals(3, w.handle(0, 2), "handles and offsets stay");
        assertEquals(0x3000, w.offset(0, 2));
    }

    @Test
    void unusedChunkReturnsAllZero() {
        WriteList w = offered();
        w.fillChunk(1, 0);
        assertEquals(1, w.chunkSegmentCount(1));
        assertEquals(0, w.chunkLength(1));
    }

    @Test
    void noPadIsWritten() {
        // A 5-byte item: the responder reports 5 bytes, not the XDR-rounded 8.
        WriteList w = offered();
        w.fillChunk(1, 5);
        assertEquals(5, w.length(1, 0));
    }

    @Test
    void overfillIsRefused() {
        WriteList w = offered();
        assertThrows(IllegalArgumentException.class, () -> w.fillChunk(1, 513));
        assertThrows(IllegalArgumentException.class, () -> w.fillChunk(0, -1));
    }

    @Test
    void returnedChunkEncodesWithSameShape() throws Exception {
        RpcRdmaHeader h = Wire.bigHeader().clear().xid(5).credit(3);
        h.writeList().copyFrom(offered());
        h.writeList().fillChunk(0, 100);
        byte[] hdr = Wire.encode(h);
        assertEquals(Wire.hex(Wire.cat(Wire.words(5, 1, 3, RpcRdma.RDMA_MSG, 0),
                Wire.words(1, 3), Wire.hloo(1, 100, 0x1000), Wire.hloo(2, 0, 0x2000), Wire.hloo(3, 0, 0x3000),
                Wire.words(1, 1), Wire.hloo(4, 512, 0x4000), Wire.words(0), Wire.words(0))), Wire.hex(hdr));
        RpcRdmaHeader back = Wire.decode(Wire.cat(hdr, Wire.rpc(5, RpcRdma.RPC_REPLY, 0)));
        assertTrue(back.sameWireContent(h));
    }

    @Test
    void builderMisuse() {
        WriteList w = new WriteList(1, 1);
        assertThrows(IllegalStateException.class, () -> w.addSegment(1, 1, 1), "no chunk begun");
        w.beginChunk();
        w.addSegment(1, 1, 1);
        assertThrows(IllegalStateException.class, () -> w.addSegment(1, 1, 1), "segments full");
        assertThrows(IllegalStateException.class, w::beginChunk, "chunks full");
        assertThrows(IllegalArgumentException.class, () -> new SegmentList(1).add(1, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> new SegmentList(1).add(1, 1L << 32, 0));
    }

    @Test
    void readListGroupsEqualPositionsAndRefusesBadOnes() {
        ReadList r = new ReadList(8);
        r.add(0, 1, 10, 0).add(0, 2, 10, 0).add(8, 3, 1, 0).add(16, 4, 1, 0).add(16, 5, 2, 0);
        assertEquals(3, r.chunkCount());
        assertTrue(r.hasPositionZeroChunk());
        assertEquals(20, r.chunkLength(0));
        assertEquals(2, r.chunkSegmentCount(2));
        assertEquals(3, r.chunkLength(2));
        assertThrows(IllegalArgumentException.class, () -> r.add(12, 6, 1, 0), "descending");
        assertThrows(IllegalArgumentException.class, () -> r.add(18, 6, 1, 0), "misaligned");
    }
}
