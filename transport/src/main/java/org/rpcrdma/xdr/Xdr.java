package org.rpcrdma.xdr;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * XDR primitives (RFC 4506): big-endian 32- and 64-bit integers at arbitrary byte
 * offsets of a {@link MemorySegment}, and the 4-byte roundup of opaque data.
 *
 * <p>These accessors do no bounds checking beyond the segment's own: callers that read
 * untrusted input check the received length first (see {@link XdrReader}, and the
 * transport's header decoder), so a short message is a typed error rather than an
 * {@link IndexOutOfBoundsException}.
 */
public final class Xdr {

    /** Size of one XDR unit (RFC 4506 §3: "basic block size"). */
    public static final int UNIT = 4;

    /** Big-endian, unaligned: receive buffers carry XDR at any offset. */
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private Xdr() {}

    /** Reads a big-endian 32-bit word. */
    public static int getInt(MemorySegment seg, long offset) {
        return seg.get(INT, offset);
    }

    /** Reads a big-endian 32-bit word as an unsigned value. */
    public static long getUnsignedInt(MemorySegment seg, long offset) {
        return Integer.toUnsignedLong(seg.get(INT, offset));
    }

    /** Reads a big-endian 64-bit hyper. */
    public static long getLong(MemorySegment seg, long offset) {
        return seg.get(LONG, offset);
    }

    /** Writes a big-endian 32-bit word. */
    public static void putInt(MemorySegment seg, long offset, int value) {
        seg.set(INT, offset, value);
    }

    /** Writes a big-endian 64-bit hyper. */
    public static void putLong(MemorySegment seg, long offset, long value) {
        seg.set(LONG, offset, value);
    }

    /** {@code n} rounded up to a multiple of 4 (RFC 4506 §4.10 opaque roundup). */
    public static long roundUp(long n) {
        return (n + 3) & ~3L;
    }

    /** {@code n} rounded up to a multiple of 4. */
    public static int roundUp(int n) {
        return (n + 3) & ~3;
    }

    /** Number of zero pad bytes that follow {@code n} bytes of opaque data (0..3). */
    public static int padLength(long n) {
        return (int) (-n & 3);
    }

    /** Whether {@code n} is a multiple of the XDR unit. */
    public static boolean isAligned(long n) {
        return (n & 3) == 0;
    }

    /** Bytes taken by {@code words} XDR units. */
    public static int words(int words) {
        return words * UNIT;
    }
}
