package org.rpcrdma.xdr;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** XDR primitives (RFC 4506). */
class XdrTest {

    @Test
    void roundUpAndPad() {
        int[][] cases = {{0, 0, 0}, {1, 4, 3}, {2, 4, 2}, {3, 4, 1}, {4, 4, 0}, {5, 8, 3}, {1023, 1024, 1}};
        for (int[] c : cases) {
            assertEquals(c[1], Xdr.roundUp(c[0]));
            assertEquals(c[1], Xdr.roundUp((long) c[0]));
            assertEquals(c[2], Xdr.padLength(c[0]));
        }
        assertEquals(0x1_0000_0000L, Xdr.roundUp(0xFFFF_FFFDL), "no 32-bit wrap in the long form");
        assertTrue(Xdr.isAligned(8));
        assertFalse(Xdr.isAligned(6));
    }

    @Test
    void bigEndianAtAnyOffset() {
        byte[] b = new byte[13];
        MemorySegment s = MemorySegment.ofArray(b);
        Xdr.putInt(s, 1, 0x01020304);
        Xdr.putLong(s, 5, 0x1112131415161718L);
        assertEquals("00010203041112131415161718", XdrBytes.hex(b));
        assertEquals(0x01020304, Xdr.getInt(s, 1));
        assertEquals(0x1112131415161718L, Xdr.getLong(s, 5));
        Xdr.putInt(s, 0, -1);
        assertEquals(0xFFFF_FFFFL, Xdr.getUnsignedInt(s, 0));
    }

    @Test
    void readerIsBounded() throws Exception {
        byte[] b = XdrBytes.words(7, 0, 0, 0);
        // A reader over the first 6 bytes only.
        XdrReader r = new XdrReader(MemorySegment.ofArray(b), 0, 6);
        assertEquals(7, r.readInt());
        assertEquals(2, r.remaining());
        XdrException e = assertThrows(XdrException.class, r::readInt);
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        assertEquals(0, e.getStackTrace().length, "stack-trace-free");
        assertEquals(4, r.position(), "failed read does not move");
        assertThrows(XdrException.class, r::readLong);
        assertThrows(IndexOutOfBoundsException.class, () -> new XdrReader(MemorySegment.ofArray(b), 10, 8));
    }

    @Test
    void booleansAreStrict() throws Exception {
        XdrReader r = new XdrReader(MemorySegment.ofArray(XdrBytes.words(0, 1, 2)), 0, 12);
        assertFalse(r.readBoolean());
        assertTrue(r.readBoolean());
        assertThrows(XdrException.class, r::readBoolean);
    }

    @Test
    void opaquesRoundTripWithZeroPad() throws Exception {
        byte[] b = new byte[32];
        java.util.Arrays.fill(b, (byte) 0x77);
        XdrWriter w = new XdrWriter(MemorySegment.ofArray(b), 0, b.length);
        w.writeOpaque(new byte[] {1, 2, 3, 4, 5}).writeBoolean(true).writeLong(-2);
        assertEquals(24, w.written());
        assertEquals("00000005" + "0102030405000000" + "00000001" + "fffffffffffffffe", XdrBytes.hex(java.util.Arrays.copyOf(b, 24)));

        XdrReader r = new XdrReader(MemorySegment.ofArray(b), 0, 24);
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, r.readOpaque(5));
        assertTrue(r.readBoolean());
        assertEquals(-2, r.readLong());
        assertEquals(0, r.remaining());

        // Length over the maximum, and a body that overruns the bound.
        XdrReader over = new XdrReader(MemorySegment.ofArray(b), 0, 24);
        assertThrows(XdrException.class, () -> over.readOpaque(4));
        XdrReader cut = new XdrReader(MemorySegment.ofArray(b), 0, 10);
        assertThrows(XdrException.class, () -> cut.readOpaque(100));
        XdrReader huge = new XdrReader(MemorySegment.ofArray(XdrBytes.words(-1, 0)), 0, 8);
        assertThrows(XdrException.class, () -> huge.readOpaqueLength(Integer.MAX_VALUE));
    }

    @Test
    void writerIsBounded() {
        XdrWriter w = new XdrWriter(MemorySegment.ofArray(new byte[6]), 0, 6);
        w.writeInt(1);
        assertThrows(IllegalStateException.class, () -> w.writeInt(2));
        assertThrows(IllegalStateException.class, () -> w.writeOpaque(new byte[1]));
    }

    @Test
    void writerOverflowIsItsOwnType() {
        XdrWriter w = new XdrWriter(MemorySegment.ofArray(new byte[4]), 0, 4);
        assertThrows(XdrOverflowException.class, () -> w.writeLong(1));
        assertThrows(XdrOverflowException.class, () -> w.writeString("four+"));
    }

    @Test
    void floatsAndDoublesRoundTripBitForBit() throws Exception {
        int[] floats = {0x7fc12345, 0xffc00001, 0x80000000, 0x7f800000, 0xff800000, 0x00000001, 0x3f800000};
        long[] doubles = {0x7ff8_0000_dead_beefL, 0xfff0_0000_0000_0001L, 0x8000_0000_0000_0000L,
            0x7ff0_0000_0000_0000L, 0x0000_0000_0000_0001L};
        byte[] b = new byte[floats.length * 4 + doubles.length * 8];
        XdrWriter w = new XdrWriter(MemorySegment.ofArray(b), 0, b.length);
        for (int f : floats) {
            w.writeFloat(Float.intBitsToFloat(f));
        }
        for (long d : doubles) {
            w.writeDouble(Double.longBitsToDouble(d));
        }
        // RFC 4506 §4.6/4.7: the IEEE bits, big-endian, as written (NaN payloads kept)
        assertEquals("7fc12345", XdrBytes.hex(java.util.Arrays.copyOf(b, 4)));
        XdrReader r = new XdrReader(MemorySegment.ofArray(b), 0, b.length);
        for (int f : floats) {
            assertEquals(f, Float.floatToRawIntBits(r.readFloat()));
        }
        for (long d : doubles) {
            assertEquals(d, Double.doubleToRawLongBits(r.readDouble()));
        }
    }

    @Test
    void arrayLengthIsCheckedAgainstItsBoundAndTheBytesLeft() throws Exception {
        // count 3 with 12 bytes of elements: fine
        assertEquals(3, new XdrReader(MemorySegment.ofArray(XdrBytes.words(3, 1, 2, 3)), 0, 16).readArrayLength(3, 4));
        // over the declared maximum
        assertThrows(XdrException.class,
                () -> new XdrReader(MemorySegment.ofArray(XdrBytes.words(4, 1, 2, 3, 4)), 0, 20).readArrayLength(3, 4));
        // fewer bytes than count * 4: refused before any allocation
        assertThrows(XdrException.class,
                () -> new XdrReader(MemorySegment.ofArray(XdrBytes.words(3, 1, 2)), 0, 12).readArrayLength(10, 4));
        // counts near 2^32: count * 4 is computed in long and can't wrap to a small number
        for (int n : new int[] {-1, 0x4000_0001, 0x8000_0000, 0x4000_0000}) {
            assertThrows(XdrException.class, () -> new XdrReader(MemorySegment.ofArray(XdrBytes.words(n, 1)), 0, 8)
                    .readArrayLength(Integer.MAX_VALUE, 4));
        }
    }

    @Test
    void fixedOpaqueAndSegmentOpaque() throws Exception {
        byte[] b = new byte[16];
        XdrWriter w = new XdrWriter(MemorySegment.ofArray(b), 0, 16);
        MemorySegment src = MemorySegment.ofArray(new byte[] {9, 1, 2, 3, 9});
        w.writeOpaque(src, 1, 3).writeFixedOpaque(new byte[] {5, 6, 7, 8, 9});
        assertEquals("00000003010203000506070809000000", XdrBytes.hex(b));
        XdrReader r = new XdrReader(MemorySegment.ofArray(b), 0, 16);
        assertArrayEquals(new byte[] {1, 2, 3}, r.readOpaque(3));
        assertThrows(XdrException.class, () -> r.readFixedOpaque(9));
        assertArrayEquals(new byte[] {5, 6, 7, 8, 9}, r.readFixedOpaque(5));
        assertEquals(0, r.remaining());
    }

    @Test
    void byteBufferReader() throws Exception {
        ByteBuffer bb = ByteBuffer.wrap(XdrBytes.words(9, 8, 7));
        bb.position(4);
        XdrReader r = XdrReader.of(bb);
        assertEquals(8, r.readInt());
        assertEquals(7, r.readInt());
        assertThrows(XdrException.class, r::readInt);
    }
}
