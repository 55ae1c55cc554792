package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.OpaqueAuth;
import org.rpcrdma.xdr.RpcMessageException;
import org.rpcrdma.xdr.RpcReplyHeader;
import org.rpcrdma.xdr.Xdr;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * Our private ONC RPC program by which a client of ours tells a server of ours that its
 * backchannel is ready (RFC 8167 §6 leaves that signal to the upper layer; NFSv4.1 uses
 * CREATE_SESSION). Program {@value #PROGRAM} ("@RDB", user-defined range), version 1,
 * procedure 1: arguments are the client's 64-bit instance id, so a server recognises the
 * same client on a new connection (RFC 8167 §5.4), then a flags word: {@link #FLAG_CHUNKS}
 * says the client takes backward calls with chunks (RFC 8167 §5.3 allows them; Linux
 * drops them, so a server sends them only to a client that said so; a call without the
 * word, from an older client, says no). The reply is an empty SUCCESS.
 * A server that is not ours answers PROG_UNAVAIL, which fails the enabling call.
 */
public final class BackchannelControl {
    public static final int PROGRAM = 0x40524442;
    static final int VERSION = 1;
    static final int PROC_ENABLE = 1;
    /** The client takes backward calls with chunks. */
    static final int FLAG_CHUNKS = 1;
    private static final int INSTANCE_BYTES = 48;
    private static final int CALL_BYTES = 52;

    private BackchannelControl() {}

    /** The enable call: RPC call header with AUTH_NONE, then the instance id (hyper) and the flags. */
    static MemorySegment enableCall(int xid, long clientInstance, boolean takesChunks) {
        MemorySegment m = MemorySegment.ofArray(new byte[CALL_BYTES]);
        int[] words = {xid, OncRpc.CALL, OncRpc.RPC_VERSION, PROGRAM, VERSION, PROC_ENABLE, 0, 0, 0, 0};
        for (int i = 0; i < words.length; i++) {
            Xdr.putInt(m, i * 4L, words[i]);
        }
        Xdr.putInt(m, 40, (int) (clientInstance >>> 32));
        Xdr.putInt(m, 44, (int) clientInstance);
        Xdr.putInt(m, 48, takesChunks ? FLAG_CHUNKS : 0);
        return m;
    }

    /** Whether the call at {@code buf[off, off+len)} is for our program (RPC header word 3). */
    static boolean isControlCall(MemorySegment buf, long off, int len) {
        return len >= 16 && Xdr.getInt(buf, off + 12) == PROGRAM;
    }

    /** The instance id the client sent, or 0 when it sent none. */
    static long clientInstance(MemorySegment buf, long off, int len) {
        if (len < INSTANCE_BYTES) {
            return 0;
        }
        return (long) Xdr.getInt(buf, off + 40) << 32 | (Xdr.getInt(buf, off + 44) & 0xffffffffL);
    }

    /** Whether the client said it takes backward calls with chunks (no flags word: no). */
    static boolean takesChunks(MemorySegment buf, long off, int len) {
        return len >= CALL_BYTES && (Xdr.getInt(buf, off + 48) & FLAG_CHUNKS) != 0;
    }

    /** The accepted, empty SUCCESS reply. */
    static MemorySegment acceptedReply(int xid) {
        MemorySegment r = MemorySegment.ofArray(new byte[24]);
        RpcReplyHeader.encodeAccepted(new XdrWriter(r, 0, 24), xid, OpaqueAuth.NONE, OncRpc.SUCCESS);
        return r;
    }

    /** Checks the server's answer; throws naming what it said unless it is an accepted SUCCESS. */
    public static Void checkAnswer(String connection, ReceivedMessage reply) {
        try (reply) {
            MemorySegment b = reply.bytes();
            RpcReplyHeader h = new RpcReplyHeader().decode(new XdrReader(b, 0, b.byteSize()));
            if (h.isSuccess()) {
                return null;
            }
            String said = h.replyStat() == OncRpc.MSG_ACCEPTED ? acceptName(h.acceptStat())
                    : "MSG_DENIED (reject_stat " + h.rejectStat() + ")";
            throw new RpcRdmaException(connection + ": the server refused the backchannel-enable call (program 0x"
                    + Integer.toHexString(PROGRAM) + "): " + said + ". It is not a panama-rpcrdma server: serve"
                    + " backward calls with Connection.serveBackwardCalls and announce the backchannel through the"
                    + " upper layer (NFSv4.1 CREATE_SESSION)");
        } catch (RpcMessageException e) {
            throw new RpcRdmaException(connection + ": malformed answer to the backchannel-enable call: "
                    + e.getMessage(), e);
        }
    }

    private static String acceptName(int stat) {
        return switch (stat) {
            case OncRpc.PROG_UNAVAIL -> "PROG_UNAVAIL";
            case OncRpc.PROG_MISMATCH -> "PROG_MISMATCH";
            case OncRpc.PROC_UNAVAIL -> "PROC_UNAVAIL";
            case OncRpc.GARBAGE_ARGS -> "GARBAGE_ARGS";
            case OncRpc.SYSTEM_ERR -> "SYSTEM_ERR";
            default -> "accept_stat " + stat;
        };
    }
}
