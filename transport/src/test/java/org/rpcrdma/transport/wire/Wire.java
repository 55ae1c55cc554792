package org.rpcrdma.transport.wire;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.xdr.XdrBytes;

/** Test helpers for the codec's headers and chunk lists, over {@link XdrBytes}. */
final class Wire {
    private Wire() {}

    /** Big-endian bytes of the given 32-bit words. */
    static byte[] words(int... words) {
        return XdrBytes.words(words);
    }

    /** Concatenation. */
    static byte[] cat(byte[]... parts) {
        return XdrBytes.cat(parts);
    }

    /** HLOO: handle, length, offset (hi, lo). */
    static byte[] hloo(int handle, int length, long offset) {
        return words(handle, length, (int) (offset >>> 32), (int) offset);
    }

    /** One Read list entry: 1 - PHLOO. */
    static byte[] readEntry(int position, int handle, int length, long offset) {
        return cat(words(1, position), hloo(handle, length, offset));
    }

    static String hex(byte[] b) {
        return XdrBytes.hex(b);
    }

    /** A heap header big enough for anything the tests build. */
    static RpcRdmaHeader bigHeader() {
        return new RpcRdmaHeader(256, 64, 256, 256);
    }

    /** Encodes (any proc) into a fresh array of exactly the encoded length. */
    static byte[] encode(RpcRdmaHeader h) {
        byte[] out = new byte[RpcRdmaEncoder.encodedLength(h)];
        int n = RpcRdmaEncoder.encodeAnyProc(h, MemorySegment.ofArray(out), 0, out.length);
        if (n != out.length) {
            throw new AssertionError("encodedLength " + out.length + " but wrote " + n);
        }
        return out;
    }

    /** Decodes {@code b}, exactly sized so any read outside it would throw. */
    static RpcRdmaHeader decode(byte[] b) throws RpcRdmaProtocolException {
        RpcRdmaHeader h = bigHeader();
        RpcRdmaDecoder.decode(MemorySegment.ofArray(b), 0, b.length, h);
        return h;
    }

    /** The 8-byte start of an RPC message: xid, msg_type. */
    static byte[] rpc(int xid, int msgType, int extraWords) {
        int[] w = new int[2 + extraWords];
        w[0] = xid;
        w[1] = msgType;
        for (int i = 0; i < extraWords; i++) {
            w[2 + i] = 0x0a0b0c00 + i;
        }
        return words(w);
    }
}
