package org.rpcrdma.bench.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32;
import org.rpcrdma.xdr.Xdr;

/**
 * The calls of the scale bench and how their replies prove they were answered with their
 * own bytes: the arguments are a function of the XID; a small call is echoed, a long one
 * (past the inline threshold: a Position-Zero Read chunk, RFC 8166 §3.5.3) is answered with
 * its length and CRC-32, so its reply stays inline.
 */
final class ScaleCalls {
    static final int CALL_HEADER = 40; // xid, CALL, rpcvers, prog, vers, proc, AUTH_NONE cred and verifier
    static final int REPLY_HEADER = 24; // xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS
    /** Arguments up to this size are echoed; larger ones answered with length and CRC-32. */
    static final int ECHOED = 256;
    static final int PROC = 1;

    private ScaleCalls() {}

    static byte argByte(int xid, int i) {
        return (byte) (xid * 31 + i);
    }

    /** A call of {@code args} argument bytes derived from {@code xid}. */
    static MemorySegment call(int xid, int prog, int args) {
        byte[] b = new byte[CALL_HEADER + args];
        MemorySegment m = MemorySegment.ofArray(b);
        Xdr.putInt(m, 0, xid);
        Xdr.putInt(m, 4, 0); // CALL
        Xdr.putInt(m, 8, 2); // RPC version 2
        Xdr.putInt(m, 12, prog);
        Xdr.putInt(m, 16, 1);
        Xdr.putInt(m, 20, PROC);
        for (int i = 0; i < args; i++) {
            b[CALL_HEADER + i] = argByte(xid, i);
        }
        return m;
    }

    /** The server's reply to {@code call} (bytes from the XID). */
    static MemorySegment reply(MemorySegment call) {
        long args = call.byteSize() - CALL_HEADER;
        MemorySegment r;
        if (args <= ECHOED) {
            r = MemorySegment.ofArray(new byte[REPLY_HEADER + (int) args]);
            MemorySegment.copy(call, CALL_HEADER, r, REPLY_HEADER, args);
        } else {
            r = MemorySegment.ofArray(new byte[REPLY_HEADER + 8]);
            Xdr.putInt(r, REPLY_HEADER, (int) args);
            Xdr.putInt(r, REPLY_HEADER + 4, crc(call.asSlice(CALL_HEADER)));
        }
        Xdr.putInt(r, 0, Xdr.getInt(call, 0));
        Xdr.putInt(r, 4, 1); // REPLY; the rest zeros
        return r;
    }

    /** Null when {@code reply} is the right answer to the call {@code xid} with {@code args} bytes; else what is wrong. */
    static String problem(int xid, int args, MemorySegment reply) {
        if (reply.byteSize() < REPLY_HEADER || Xdr.getInt(reply, 0) != xid) {
            return "reply of " + reply.byteSize() + " bytes is not for XID " + Integer.toHexString(xid);
        }
        if (args <= ECHOED) {
            if (reply.byteSize() != REPLY_HEADER + args) {
                return "XID " + Integer.toHexString(xid) + ": " + (reply.byteSize() - REPLY_HEADER) + " bytes echoed of " + args;
            }
            for (int i = 0; i < args; i++) {
                if (reply.get(ValueLayout.JAVA_BYTE, REPLY_HEADER + i) != argByte(xid, i)) {
                    return "XID " + Integer.toHexString(xid) + ": byte " + i + " differs";
                }
            }
            return null;
        }
        MemorySegment expected = call(xid, 0, args).asSlice(CALL_HEADER);
        if (reply.byteSize() != REPLY_HEADER + 8 || Xdr.getInt(reply, REPLY_HEADER) != args
                || Xdr.getInt(reply, REPLY_HEADER + 4) != crc(expected)) {
            return "XID " + Integer.toHexString(xid) + ": the long call's length or CRC-32 differs";
        }
        return null;
    }

    static int crc(MemorySegment m) {
        CRC32 c = new CRC32();
        c.update(m.asByteBuffer());
        return (int) c.getValue();
    }
}
