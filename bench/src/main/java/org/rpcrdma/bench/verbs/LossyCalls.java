package org.rpcrdma.bench.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.xdr.Xdr;

/**
 * The calls of every kind the lossy soak sends, one kind after another by XID, and the
 * handler that answers them (both ends run it: forward and backward calls):
 * <ul>
 *   <li>{@link Kind#INLINE}: 64 B echoed ({@link ScaleCalls});</li>
 *   <li>{@link Kind#LONG_CALL}: 6 KiB of arguments, past the 4 KiB threshold, so the call
 *       goes in a Position-Zero Read chunk (RFC 8166 §3.5.3), answered with length and CRC-32;</li>
 *   <li>{@link Kind#REPLY_CHUNK}: a small call asking for 6 KiB of bytes derived from its
 *       XID, a reply too large to be inline, written into the call's Reply chunk (§3.5.4);</li>
 *   <li>{@link Kind#DDP}: 6 KiB of data as a DDP argument (a read chunk the responder pulls,
 *       §3.4.5) echoed as a DDP result into the caller's receptacle (a write chunk, §3.4.6).</li>
 * </ul>
 * Every call retries across a reconnect (same XID), so an outage delays calls, never fails them.
 */
final class LossyCalls {
    static final int PROG = 0x20000077;
    static final int SIZE = CallPump.LONG_ARGS;
    private static final int PROC_PATTERN = 2;
    private static final int PROC_DDP = 3;
    private static final int REPLY_HEADER = ScaleCalls.REPLY_HEADER;
    private static final int CALL_HEADER = ScaleCalls.CALL_HEADER;

    enum Kind { INLINE, LONG_CALL, REPLY_CHUNK, DDP }

    private LossyCalls() {}

    /** The options of every call: a timeout of {@code timeoutSeconds}, resent after a reconnect. */
    static CallOptions options(int timeoutSeconds) {
        return CallOptions.timeout(timeoutSeconds, TimeUnit.SECONDS).withRetry(true);
    }

    /** Calls of the kinds in turn by XID ({@code kinds[xid % kinds.length]}). */
    static CallPump.Calls of(CallOptions base, Kind... kinds) {
        return xid -> make(kinds[Integer.remainderUnsigned(xid, kinds.length)], xid, base);
    }

    static Kind kindOf(int xid, Kind... kinds) {
        return kinds[Integer.remainderUnsigned(xid, kinds.length)];
    }

    static CallPump.Call make(Kind k, int xid, CallOptions base) {
        return switch (k) {
            case INLINE -> new CallPump.Call(ScaleCalls.call(xid, PROG, CallPump.SMALL_ARGS), base,
                    r -> ScaleCalls.problem(xid, CallPump.SMALL_ARGS, r));
            case LONG_CALL -> new CallPump.Call(ScaleCalls.call(xid, PROG, SIZE), base,
                    r -> ScaleCalls.problem(xid, SIZE, r));
            case REPLY_CHUNK -> {
                MemorySegment m = header(xid, PROC_PATTERN, 4);
                Xdr.putInt(m, CALL_HEADER, SIZE);
                yield new CallPump.Call(m, base.withMaxReplyBytes(REPLY_HEADER + SIZE + 64),
                        r -> pattern(xid, r, REPLY_HEADER, "Reply chunk"));
            }
            case DDP -> {
                // the opaque's length word at 40, its data (the DDP argument) at XDR position 44
                MemorySegment m = header(xid, PROC_DDP, 4 + SIZE);
                Xdr.putInt(m, CALL_HEADER, SIZE);
                for (int i = 0; i < SIZE; i++) {
                    m.set(ValueLayout.JAVA_BYTE, CALL_HEADER + 4 + i, ScaleCalls.argByte(xid, i));
                }
                MemorySegment receptacle = MemorySegment.ofArray(new byte[SIZE]);
                yield new CallPump.Call(m, base.withDdpArgument(new DdpArgument(CALL_HEADER + 4, SIZE))
                        .withReceptacle(receptacle), r -> ddpProblem(xid, r, receptacle));
            }
        };
    }

    private static MemorySegment header(int xid, int proc, int args) {
        MemorySegment m = ScaleCalls.call(xid, PROG, args);
        Xdr.putInt(m, 20, proc);
        return m;
    }

    private static String pattern(int xid, MemorySegment r, int at, String what) {
        if (r.byteSize() < at || Xdr.getInt(r, 0) != xid) {
            return what + ": a reply of " + r.byteSize() + " bytes not for XID " + Integer.toHexString(xid);
        }
        if (r.byteSize() != at + SIZE) {
            return what + " XID " + Integer.toHexString(xid) + ": " + (r.byteSize() - at) + " bytes, not " + SIZE;
        }
        for (int i = 0; i < SIZE; i++) {
            if (r.get(ValueLayout.JAVA_BYTE, at + i) != ScaleCalls.argByte(xid, i)) {
                return what + " XID " + Integer.toHexString(xid) + ": byte " + i + " differs";
            }
        }
        return null;
    }

    private static String ddpProblem(int xid, MemorySegment r, MemorySegment receptacle) {
        if (r.byteSize() < REPLY_HEADER + 4 || Xdr.getInt(r, 0) != xid || Xdr.getInt(r, REPLY_HEADER) != SIZE) {
            return "DDP: a reply of " + r.byteSize() + " bytes not for XID " + Integer.toHexString(xid) + " of "
                    + SIZE + " bytes";
        }
        for (int i = 0; i < SIZE; i++) {
            if (receptacle.get(ValueLayout.JAVA_BYTE, i) != ScaleCalls.argByte(xid, i)) {
                return "DDP XID " + Integer.toHexString(xid) + ": placed byte " + i + " differs";
            }
        }
        return null;
    }

    /** Answers every kind, counting the executions of each XID and its connection in {@code ledger}. */
    static CallHandler handler(XidLedger ledger) {
        return c -> {
            ledger.executed(c.xid(), c.connection());
            MemorySegment m = c.message().bytes();
            switch (Xdr.getInt(m, 20)) {
                case PROC_PATTERN -> {
                    int n = Xdr.getInt(m, CALL_HEADER);
                    MemorySegment r = reply(c, n);
                    for (int i = 0; i < n; i++) {
                        r.set(ValueLayout.JAVA_BYTE, REPLY_HEADER + i, ScaleCalls.argByte(c.xid(), i));
                    }
                    c.reply(r);
                }
                case PROC_DDP -> ddpEcho(c, m);
                default -> c.reply(ScaleCalls.reply(m));
            }
        };
    }

    /** The DDP argument (pulled into the message at 44) echoed: into the write chunk when the caller offered one. */
    private static void ddpEcho(IncomingCall c, MemorySegment m) {
        int len = Xdr.getInt(m, CALL_HEADER);
        MemorySegment data = m.asSlice(CALL_HEADER + 4, len);
        boolean chunk = c.writeChunkCount() > 0;
        MemorySegment r = reply(c, 4 + (chunk ? 0 : Xdr.roundUp(len)));
        Xdr.putInt(r, REPLY_HEADER, len);
        if (chunk) {
            c.reply(r, data); // the opaque's data goes to the write chunk, its length word stays inline
        } else {
            MemorySegment.copy(data, 0, r, REPLY_HEADER + 4, len);
            c.reply(r);
        }
    }

    private static MemorySegment reply(IncomingCall c, int results) {
        MemorySegment r = MemorySegment.ofArray(new byte[REPLY_HEADER + results]);
        Xdr.putInt(r, 0, c.xid());
        Xdr.putInt(r, 4, 1); // REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS (zeros)
        return r;
    }
}
