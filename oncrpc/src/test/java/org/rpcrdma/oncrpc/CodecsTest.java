package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/** The codecs against RFC 4506's encodings, written out in hex, both ways. */
class CodecsTest {
    private static <T> String encode(XdrCodec<T> c, T v) {
        MemorySegment m = MessageEncoder.encode(w -> c.encode(w, v));
        return HexFormat.of().formatHex(m.toArray(ValueLayout.JAVA_BYTE));
    }

    private static <T> T decode(XdrCodec<T> c, String hex) throws XdrException {
        byte[] b = HexFormat.of().parseHex(hex);
        XdrReader r = new XdrReader(MemorySegment.ofArray(b), 0, b.length);
        T v = c.decode(r);
        assertEquals(0, r.remaining(), "whole encoding consumed");
        return v;
    }

    /** Encodes {@code v} to exactly {@code hex} and decodes {@code hex} back to what {@code same} accepts. */
    private static <T> void both(XdrCodec<T> c, T v, String hex) throws XdrException {
        assertEquals(hex, encode(c, v));
        T back = decode(c, hex);
        assertEquals(hex, encode(c, back), "decoded value encodes to the same bits");
    }

    @Test
    void integersAtTheirEdges() throws Exception {
        both(Codecs.INT, Integer.MIN_VALUE, "80000000");
        both(Codecs.INT, -1, "ffffffff");
        both(Codecs.UNSIGNED_INT, 0xFFFF_FFFFL, "ffffffff");
        assertEquals(0xFFFF_FFFFL, decode(Codecs.UNSIGNED_INT, "ffffffff"));
        assertThrows(IllegalArgumentException.class, () -> encode(Codecs.UNSIGNED_INT, 0x1_0000_0000L));
        assertThrows(IllegalArgumentException.class, () -> encode(Codecs.UNSIGNED_INT, -1L));
        both(Codecs.HYPER, Long.MIN_VALUE, "8000000000000000");
        both(Codecs.UNSIGNED_HYPER, -1L, "ffffffffffffffff");
        both(Codecs.BOOL, true, "00000001");
        assertThrows(XdrException.class, () -> decode(Codecs.BOOL, "00000002"));
    }

    @Test
    void floatsKeepTheirBits() throws Exception {
        for (int bits : new int[] {0x7fc12345, 0x7f800001, 0x80000000, 0xff800000}) {
            String hex = HexFormat.of().toHexDigits(bits);
            assertEquals(hex, encode(Codecs.FLOAT, Float.intBitsToFloat(bits)));
            assertEquals(bits, Float.floatToRawIntBits(decode(Codecs.FLOAT, hex)));
        }
        for (long bits : new long[] {0x7ff8_0000_dead_beefL, 0x8000_0000_0000_0000L, 0xfff0_0000_0000_0001L}) {
            String hex = HexFormat.of().toHexDigits(bits);
            assertEquals(hex, encode(Codecs.DOUBLE, Double.longBitsToDouble(bits)));
            assertEquals(bits, Double.doubleToRawLongBits(decode(Codecs.DOUBLE, hex)));
        }
    }

    @Test
    void opaquesAndStringsAtEveryPadding() throws Exception {
        XdrCodec<byte[]> o5 = Codecs.opaque(5);
        both(o5, new byte[0], "00000000");
        both(o5, new byte[] {1}, "0000000101000000");
        both(o5, new byte[] {1, 2, 3, 4}, "0000000401020304");
        both(o5, new byte[] {1, 2, 3, 4, 5}, "000000050102030405000000");
        assertThrows(IllegalArgumentException.class, () -> encode(o5, new byte[6]));
        assertThrows(XdrException.class, () -> decode(o5, "00000006010203040506" + "0000"));
        both(Codecs.string(3), "abc", "0000000361626300");
        assertThrows(IllegalArgumentException.class, () -> encode(Codecs.string(3), "abcd"));
        both(Codecs.fixedOpaque(3), new byte[] {7, 8, 9}, "07080900");
        assertThrows(IllegalArgumentException.class, () -> encode(Codecs.fixedOpaque(3), new byte[2]));
        assertArrayEquals(new byte[] {7, 8, 9}, decode(Codecs.fixedOpaque(3), "07080900"));
    }

    @Test
    void arraysAndOptionals() throws Exception {
        XdrCodec<List<Integer>> a2 = Codecs.array(Codecs.INT, 2);
        both(a2, List.of(), "00000000");
        both(a2, List.of(Integer.MIN_VALUE, 7), "000000028000000000000007");
        assertThrows(IllegalArgumentException.class, () -> encode(a2, List.of(1, 2, 3)));
        assertThrows(XdrException.class, () -> decode(a2, "00000003000000010000000200000003"));
        both(Codecs.intArray(2), new int[] {-1}, "00000001ffffffff");
        XdrCodec<Optional<String>> os = Codecs.optional(Codecs.string(8));
        both(os, Optional.empty(), "00000000");
        both(os, Optional.of(""), "0000000100000000");
        assertEquals(Optional.of("hi"), decode(os, "000000010000000268690000"));
        assertThrows(XdrException.class, () -> decode(os, "00000002"));
    }

    @Test
    void enumsOnlyTheirValues() throws Exception {
        XdrCodec<TestProgram.Color> c = Codecs.enumeration(TestProgram.Color.class);
        both(c, TestProgram.Color.BLUE, "00000007");
        assertThrows(XdrException.class, () -> decode(c, "00000002"));
    }

    @Test
    void payloadsAreDdpEligibleAndFillAReceptacle() throws Exception {
        XdrCodec<MemorySegment> p = Codecs.payload(8);
        assertTrue(p.ddpEligible());
        assertFalse(Codecs.OPAQUE.ddpEligible());
        MemorySegment data = MemorySegment.ofArray(new byte[] {1, 2, 3});
        assertEquals("0000000301020300", encode(p, data));
        assertArrayEquals(new byte[] {1, 2, 3}, decode(p, "0000000301020300").toArray(ValueLayout.JAVA_BYTE));
        MemorySegment receptacle = MemorySegment.ofArray(new byte[4]);
        MemorySegment got = decode(Codecs.payloadInto(receptacle), "0000000301020300");
        assertEquals(3, got.byteSize());
        assertEquals(2, receptacle.get(ValueLayout.JAVA_BYTE, 1), "the data landed in the receptacle");
        assertThrows(XdrException.class, () -> decode(Codecs.payloadInto(receptacle), "000000050102030405000000"));
    }

    @Test
    void encodingGrowsPastTheFirstBuffer() {
        byte[] big = new byte[5000];
        big[4999] = 9;
        MemorySegment m = MessageEncoder.encode(w -> w.writeOpaque(big));
        assertEquals(5004, m.byteSize());
        assertEquals(9, m.get(ValueLayout.JAVA_BYTE, 5003));
        // a codec's own IllegalStateException is not mistaken for running out of room
        assertThrows(IllegalStateException.class, () -> MessageEncoder.encode(w -> {
            throw new IllegalStateException("codec bug");
        }));
    }

    @Test
    void writerStaysBoundedForCodecs() {
        XdrWriter w = new XdrWriter(MemorySegment.ofArray(new byte[4]), 0, 4);
        assertThrows(IllegalStateException.class, () -> Codecs.HYPER.encode(w, 1L));
    }
}
