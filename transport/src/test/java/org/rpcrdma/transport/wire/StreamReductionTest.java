package org.rpcrdma.transport.wire;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.wire.StreamReduction.Chunk;
import org.rpcrdma.transport.wire.StreamReduction.Inline;
import org.rpcrdma.transport.wire.StreamReduction.Pad;
import org.rpcrdma.transport.wire.StreamReduction.Piece;
import org.rpcrdma.transport.wire.StreamReduction.Range;
import org.rpcrdma.transport.wire.StreamReduction.Reduced;
import org.rpcrdma.xdr.Xdr;

class StreamReductionTest {

    /** The worked example in the class javadoc. */
    @Test
    void roundupIsNeitherMovedNorInlined() throws Exception {
        Reduced r = StreamReduction.reduce(40, new long[] {16}, new long[] {5});
        assertEquals(List.of(new Range(0, 16), new Range(24, 16)), r.inline());
        assertEquals(32, r.inlineLength());
        assertEquals(List.of(new Range(16, 5)), r.chunks(), "chunk carries 5 bytes, not 8");

        List<Piece> pieces = StreamReduction.reassemble(1, 32, new long[] {16}, new long[] {5});
        assertEquals(List.of(new Inline(0, 16), new Chunk(0, 16, 16, 5), new Pad(3), new Inline(16, 16)), pieces);
        assertEquals(40, StreamReduction.totalLength(pieces));
    }

    @Test
    void alignedChunkHasNoPadAndAdjacentChunksAreFine() throws Exception {
        List<Piece> pieces = StreamReduction.reassemble(1, 8, new long[] {4, 12}, new long[] {8, 4});
        assertEquals(List.of(new Inline(0, 4), new Chunk(0, 4, 4, 8), new Chunk(1, 12, 4, 4), new Inline(4, 4)),
                pieces);
    }

    @Test
    void chunkAtTheVeryEnd() throws Exception {
        // An item that ends the message: the inline part ends with it, pad restored.
        Reduced r = StreamReduction.reduce(24, new long[] {12}, new long[] {10});
        assertEquals(List.of(new Range(0, 12)), r.inline());
        List<Piece> pieces = StreamReduction.reassemble(1, 12, new long[] {12}, new long[] {10});
        assertEquals(List.of(new Inline(0, 12), new Chunk(0, 12, 12, 10), new Pad(2)), pieces);
    }

    @Test
    void reassemblyRejectsBadPositions() {
        assertViolation(ProtocolViolation.MISALIGNED_POSITION, new long[] {6}, new long[] {4}, 16);
        assertViolation(ProtocolViolation.DESCENDING_POSITION, new long[] {8, 4}, new long[] {4, 4}, 16);
        assertViolation(ProtocolViolation.OVERLAPPING_READ_CHUNKS, new long[] {4, 8}, new long[] {5, 4}, 16);
        assertViolation(ProtocolViolation.POSITION_BEYOND_MESSAGE, new long[] {20}, new long[] {4}, 16);
    }

    private static void assertViolation(ProtocolViolation v, long[] pos, long[] len, long reduced) {
        RpcRdmaProtocolException e = assertThrows(RpcRdmaProtocolException.class,
                () -> StreamReduction.reassemble(7, reduced, pos, len));
        assertEquals(v, e.violation());
        assertEquals(7, e.xid());
    }

    @Test
    void reduceRejectsCallerBugs() {
        assertThrows(IllegalArgumentException.class, () -> StreamReduction.reduce(40, new long[] {2}, new long[] {4}));
        assertThrows(IllegalArgumentException.class,
                () -> StreamReduction.reduce(40, new long[] {4, 8}, new long[] {8, 4}), "overlap");
        assertThrows(IllegalArgumentException.class,
                () -> StreamReduction.reduce(40, new long[] {36}, new long[] {5}), "pad past end");
    }

    /** reassemble(reduce(m)) == m over random messages and DDP-eligible item sets. */
    @Test
    void reassembleInvertsReduce() throws Exception {
        SplittableRandom rnd = new SplittableRandom(0xC4C4L);
        for (int iter = 0; iter < 5000; iter++) {
            int words = 2 + rnd.nextInt(64);
            byte[] msg = new byte[words * 4];
            rnd.nextBytes(msg);
            // Choose items on word boundaries; zero their pad bytes, as XDR requires.
            int n = rnd.nextInt(4);
            long[] offs = new long[n];
            long[] lens = new long[n];
            int cursor = 0;
            int k = 0;
            for (int i = 0; i < n; i++) {
                int start = cursor + 4 * rnd.nextInt(4);
                int maxLen = msg.length - start;
                if (maxLen <= 0) {
                    break;
                }
                int len = rnd.nextInt(Math.min(maxLen, 40) + 1);
                offs[k] = start;
                lens[k] = len;
                for (int p = start + len; p < start + Xdr.roundUp(len); p++) {
                    msg[p] = 0;
                }
                cursor = start + Xdr.roundUp(len);
                k++;
            }
            offs = java.util.Arrays.copyOf(offs, k);
            lens = java.util.Arrays.copyOf(lens, k);

            Reduced red = StreamReduction.reduce(msg.length, offs, lens);
            // Build the inline bytes and chunk payloads the way a sender would.
            MemorySegment src = MemorySegment.ofArray(msg);
            MemorySegment inline = MemorySegment.ofArray(new byte[(int) red.inlineLength()]);
            long at = 0;
            for (Range r : red.inline()) {
                MemorySegment.copy(src, r.offset(), inline, at, r.length());
                at += r.length();
            }
            MemorySegment[] chunks = new MemorySegment[k];
            long[] positions = new long[k];
            long[] lengths = new long[k];
            for (int i = 0; i < k; i++) {
                Range c = red.chunks().get(i);
                chunks[i] = src.asSlice(c.offset(), c.length());
                positions[i] = c.offset();
                lengths[i] = c.length();
            }
            List<Piece> pieces = StreamReduction.reassemble(1, red.inlineLength(), positions, lengths);
            assertEquals(msg.length, StreamReduction.totalLength(pieces));
            MemorySegment out = MemorySegment.ofArray(new byte[msg.length]);
            assertEquals(msg.length, StreamReduction.assemble(pieces, inline, chunks, out));
            assertArrayEquals(msg, out.toArray(ValueLayout.JAVA_BYTE), "iteration " + iter);
        }
    }

    /** The decoder's Read list check and reassembly agree on a decoded header. */
    @Test
    void reassembleFromDecodedReadList() throws Exception {
        RpcRdmaHeader h = Wire.decode(Wire.cat(Wire.words(9, 1, 1, RpcRdma.RDMA_MSG),
                Wire.readEntry(8, 1, 3, 0), Wire.readEntry(8, 2, 2, 0), Wire.words(0, 0, 0),
                Wire.rpc(9, RpcRdma.RPC_CALL, 2)));
        List<Piece> pieces = StreamReduction.reassemble(h.xid(), h.messageLength(), h.readList(), 0);
        assertEquals(List.of(new Inline(0, 8), new Chunk(0, 8, 8, 5), new Pad(3), new Inline(8, 8)), pieces);
    }

    @Test
    void fitsInline() {
        assertTrue(StreamReduction.fitsInline(28, 996, 1024));
        assertFalse(StreamReduction.fitsInline(28, 997, 1024));
    }
}
