package org.rpcrdma.nfs4;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * Test bytes written word by word, as RFC 4506 lays XDR out (big-endian 4-byte units,
 * opaque data padded with zeros to a multiple of 4), independent of the codecs under test.
 */
final class XdrBytes {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    XdrBytes u32(long... vs) {
        for (long v : vs) {
            out.write((int) (v >>> 24));
            out.write((int) (v >>> 16));
            out.write((int) (v >>> 8));
            out.write((int) v);
        }
        return this;
    }

    XdrBytes u64(long v) {
        return u32(v >>> 32, v & 0xFFFF_FFFFL);
    }

    /** Fixed-length opaque: the bytes and zero pad. */
    XdrBytes fixed(byte[] b) {
        out.writeBytes(b);
        for (int i = b.length; i % 4 != 0; i++) {
            out.write(0);
        }
        return this;
    }

    /** Variable-length opaque: length word, bytes, pad. */
    XdrBytes opaque(byte[] b) {
        return u32(b.length).fixed(b);
    }

    XdrBytes str(String s) {
        return opaque(s.getBytes(StandardCharsets.UTF_8));
    }

    byte[] bytes() {
        return out.toByteArray();
    }

    XdrReader reader() {
        byte[] b = bytes();
        return new XdrReader(MemorySegment.ofArray(b), 0, b.length);
    }

    static byte[] seq(int n, int start) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (start + i);
        }
        return b;
    }

    /** What {@code body} writes, as bytes. */
    static byte[] written(java.util.function.Consumer<XdrWriter> body) {
        byte[] buf = new byte[1 << 21];
        XdrWriter w = new XdrWriter(MemorySegment.ofArray(buf), 0, buf.length);
        body.accept(w);
        return java.util.Arrays.copyOf(buf, (int) w.written());
    }
}
