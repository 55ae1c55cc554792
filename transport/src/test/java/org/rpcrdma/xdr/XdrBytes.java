package org.rpcrdma.xdr;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/** Test helpers: build byte images word by word, as the XDR is written. */
public final class XdrBytes {
    private XdrBytes() {}

    /** Big-endian bytes of the given 32-bit words. */
    public static byte[] words(int... words) {
        ByteBuffer b = ByteBuffer.allocate(words.length * 4);
        for (int w : words) {
            b.putInt(w);
        }
        return b.array();
    }

    /** Concatenation. */
    public static byte[] cat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    public static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
