package org.rpcrdma.xdr;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A bounded XDR cursor (RFC 4506) over {@code [offset, offset + length)} of a
 * {@link MemorySegment}. Every read checks the bound first, so a reader can never read
 * past the received length: a short message yields an {@link XdrException}.
 *
 * <p>Reusable: {@link #reset} points it at the next buffer without allocating. Not
 * thread-safe; one reader per receiving thread.
 */
public final class XdrReader {
    private MemorySegment seg = MemorySegment.NULL;
    private long pos;
    private long limit;

    /** Creates a reader with nothing to read; call {@link #reset} before use. */
    public XdrReader() {}

    /** Creates a reader over {@code [offset, offset + length)} of {@code seg}. */
    public XdrReader(MemorySegment seg, long offset, long length) {
        reset(seg, offset, length);
    }

    /** Creates a reader over a buffer's remaining bytes (position to limit). */
    public static XdrReader of(ByteBuffer buf) {
        return new XdrReader(MemorySegment.ofBuffer(buf), 0, buf.remaining());
    }

    /**
     * Points this reader at {@code [offset, offset + length)} of {@code seg}.
     *
     * @throws IndexOutOfBoundsException if the range is not inside the segment
     *         (a caller bug, not bad input)
     */
    public XdrReader reset(MemorySegment seg, long offset, long length) {
        if (offset < 0 || length < 0 || offset > seg.byteSize() - length) {
            throw new IndexOutOfBoundsException(
                    "range [" + offset + ", +" + length + ") outside segment of " + seg.byteSize());
        }
        this.seg = seg;
        this.pos = offset;
        this.limit = offset + length;
        return this;
    }

    /** Absolute offset of the next byte to read. */
    public long position() {
        return pos;
    }

    /** Absolute offset one past the last readable byte. */
    public long limit() {
        return limit;
    }

    /** Bytes left before the bound. */
    public long remaining() {
        return limit - pos;
    }

    /** The segment being read. */
    public MemorySegment segment() {
        return seg;
    }

    /** Checks that {@code n} bytes remain; {@code what} must be a constant (no hot-path allocation). */
    private void need(long n, String what) throws XdrException {
        if (n > limit - pos) {
            throw new XdrException("truncated XDR: " + what + " needs " + n + " bytes at offset "
                    + pos + ", " + (limit - pos) + " left");
        }
    }

    /** Reads a 32-bit signed integer. */
    public int readInt() throws XdrException {
        need(4, "int");
        int v = Xdr.getInt(seg, pos);
        pos += 4;
        return v;
    }

    /** Reads a 32-bit unsigned integer into a long. */
    public long readUnsignedInt() throws XdrException {
        return Integer.toUnsignedLong(readInt());
    }

    /** Reads a 64-bit hyper. */
    public long readLong() throws XdrException {
        need(8, "hyper");
        long v = Xdr.getLong(seg, pos);
        pos += 8;
        return v;
    }

    /** Reads a 64-bit unsigned hyper (RFC 4506 §4.5); the bits as a Java long. */
    public long readUnsignedLong() throws XdrException {
        return readLong();
    }

    /**
     * Reads an IEEE single-precision float (RFC 4506 §4.6) bit for bit: a NaN keeps its
     * payload (no canonicalisation), -0.0 stays negative.
     */
    public float readFloat() throws XdrException {
        return Float.intBitsToFloat(readInt());
    }

    /** Reads an IEEE double-precision float (RFC 4506 §4.7) bit for bit. */
    public double readDouble() throws XdrException {
        return Double.longBitsToDouble(readLong());
    }

    /**
     * Reads the element count of a variable-length array (RFC 4506 §4.13) and checks it
     * before anything is allocated: against the array's declared maximum, and against the
     * bytes left, given that each element takes at least {@code minElementBytes} (4 for
     * any XDR type but void). The arithmetic is in {@code long}, so a count near 2^32
     * can't overflow past the check.
     *
     * @return the count, {@code <= maxCount}
     */
    public int readArrayLength(int maxCount, int minElementBytes) throws XdrException {
        long n = readUnsignedInt();
        if (n > maxCount) {
            throw new XdrException("array of " + n + " elements exceeds its maximum " + maxCount);
        }
        if (n * minElementBytes > limit - pos) {
            throw new XdrException("truncated XDR: array of " + n + " elements needs at least "
                    + n * minElementBytes + " bytes at offset " + pos + ", " + (limit - pos) + " left");
        }
        return (int) n;
    }

    /** Reads an XDR bool (RFC 4506 §4.4): 0 or 1, anything else is an error. */
    public boolean readBoolean() throws XdrException {
        int v = readInt();
        if (v == 0) {
            return false;
        }
        if (v == 1) {
            return true;
        }
        throw new XdrException("XDR bool is " + Integer.toUnsignedString(v) + ", not 0 or 1");
    }

    /**
     * Skips fixed-length opaque data of {@code n} bytes plus its roundup and returns the
     * absolute offset where the data begins (RFC 4506 §4.9).
     */
    public long skipFixedOpaque(long n) throws XdrException {
        if (n < 0) {
            throw new IllegalArgumentException("negative opaque length " + n);
        }
        long padded = Xdr.roundUp(n);
        need(padded, "fixed-length opaque");
        long at = pos;
        pos += padded;
        return at;
    }

    /**
     * Reads the length of variable-length opaque data (RFC 4506 §4.10), checks it against
     * {@code maxLength} and the bound, and leaves the reader positioned at the data.
     *
     * @return the data length in bytes; the data starts at {@link #position()}
     */
    public int readOpaqueLength(int maxLength) throws XdrException {
        long n = readUnsignedInt();
        if (n > maxLength) {
            throw new XdrException("opaque length " + n + " exceeds its maximum " + maxLength);
        }
        need(Xdr.roundUp(n), "opaque body");
        return (int) n;
    }

    /** Reads variable-length opaque data into a new array (for small items only). */
    public byte[] readOpaque(int maxLength) throws XdrException {
        int n = readOpaqueLength(maxLength);
        byte[] out = new byte[n];
        MemorySegment.copy(seg, java.lang.foreign.ValueLayout.JAVA_BYTE, pos, out, 0, n);
        pos += Xdr.roundUp((long) n); // long: the int roundUp wraps for n > 2^31 - 4
        return out;
    }

    /**
     * Reads fixed-length opaque data (RFC 4506 §4.9) of {@code n} bytes into a new array;
     * the bound is checked first.
     */
    public byte[] readFixedOpaque(int n) throws XdrException {
        long at = skipFixedOpaque(n);
        byte[] out = new byte[n];
        MemorySegment.copy(seg, java.lang.foreign.ValueLayout.JAVA_BYTE, at, out, 0, n);
        return out;
    }

    /** Reads an XDR string (RFC 4506 §4.11) as ASCII-compatible UTF-8. */
    public String readString(int maxLength) throws XdrException {
        return new String(readOpaque(maxLength), StandardCharsets.UTF_8);
    }

    /** Skips {@code n} bytes (which the caller has already rounded as needed). */
    public void skip(long n) throws XdrException {
        need(n, "skip");
        pos += n;
    }
}
