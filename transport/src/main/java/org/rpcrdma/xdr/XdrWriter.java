package org.rpcrdma.xdr;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A bounded XDR encoder (RFC 4506) over {@code [offset, offset + length)} of a
 * {@link MemorySegment}. Writing past the bound throws {@link XdrOverflowException} (an
 * {@link IllegalStateException}): the caller sized the buffer, so running out is a bug,
 * not bad input, unless the caller catches it to encode again into a larger buffer. Opaque data is
 * followed by zero pad to a 4-byte boundary.
 *
 * <p>Reusable through {@link #reset}; not thread-safe.
 */
public final class XdrWriter {
    private MemorySegment seg = MemorySegment.NULL;
    private long start;
    private long pos;
    private long limit;

    /** Creates a writer with no room; call {@link #reset} before use. */
    public XdrWriter() {}

    /** Creates a writer over {@code [offset, offset + length)} of {@code seg}. */
    public XdrWriter(MemorySegment seg, long offset, long length) {
        reset(seg, offset, length);
    }

    /** Points this writer at {@code [offset, offset + length)} of {@code seg}. */
    public XdrWriter reset(MemorySegment seg, long offset, long length) {
        if (offset < 0 || length < 0 || offset > seg.byteSize() - length) {
            throw new IndexOutOfBoundsException(
                    "range [" + offset + ", +" + length + ") outside segment of " + seg.byteSize());
        }
        this.seg = seg;
        this.start = offset;
        this.pos = offset;
        this.limit = offset + length;
        return this;
    }

    /** Absolute offset of the next byte to write. */
    public long position() {
        return pos;
    }

    /** Bytes written since the last {@link #reset}. */
    public long written() {
        return pos - start;
    }

    /** Bytes left before the bound. */
    public long remaining() {
        return limit - pos;
    }

    private void need(long n) {
        if (n > limit - pos) {
            throw new XdrOverflowException("XDR encode overflow: need " + n + " bytes, "
                    + (limit - pos) + " left");
        }
    }

    /** Writes a 32-bit integer. */
    public XdrWriter writeInt(int v) {
        need(4);
        Xdr.putInt(seg, pos, v);
        pos += 4;
        return this;
    }

    /** Writes a 64-bit hyper. */
    public XdrWriter writeLong(long v) {
        need(8);
        Xdr.putLong(seg, pos, v);
        pos += 8;
        return this;
    }

    /** Writes a float's raw IEEE bits (RFC 4506 §4.6): NaN payloads and -0.0 survive. */
    public XdrWriter writeFloat(float v) {
        return writeInt(Float.floatToRawIntBits(v));
    }

    /** Writes a double's raw IEEE bits (RFC 4506 §4.7). */
    public XdrWriter writeDouble(double v) {
        return writeLong(Double.doubleToRawLongBits(v));
    }

    /** Writes an XDR string (RFC 4506 §4.11) as UTF-8. */
    public XdrWriter writeString(String s) {
        return writeOpaque(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /**
     * Writes {@code length} bytes of {@code data} from {@code offset} as variable-length
     * opaque data (RFC 4506 §4.10): length, bytes, zero pad. For payloads already in a
     * segment (no copy to the heap first).
     */
    public XdrWriter writeOpaque(MemorySegment data, long offset, int length) {
        need(4 + Xdr.roundUp((long) length));
        writeInt(length);
        MemorySegment.copy(data, offset, seg, pos, length);
        long padded = Xdr.roundUp((long) length);
        for (long i = pos + length; i < pos + padded; i++) {
            seg.set(ValueLayout.JAVA_BYTE, i, (byte) 0);
        }
        pos += padded;
        return this;
    }

    /** Writes an XDR bool as 0 or 1. */
    public XdrWriter writeBoolean(boolean v) {
        return writeInt(v ? 1 : 0);
    }

    /** Writes variable-length opaque data: length, bytes, zero pad (RFC 4506 §4.10). */
    public XdrWriter writeOpaque(byte[] data) {
        need(4 + Xdr.roundUp((long) data.length));
        writeInt(data.length);
        return writeFixedOpaque(data);
    }

    /** Writes fixed-length opaque data and zero pad (RFC 4506 §4.9). */
    public XdrWriter writeFixedOpaque(byte[] data) {
        long padded = Xdr.roundUp((long) data.length);
        need(padded);
        MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_BYTE, pos, data.length);
        for (long i = pos + data.length; i < pos + padded; i++) {
            seg.set(ValueLayout.JAVA_BYTE, i, (byte) 0);
        }
        pos += padded;
        return this;
    }
}
