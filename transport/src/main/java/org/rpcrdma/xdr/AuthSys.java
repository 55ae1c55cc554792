package org.rpcrdma.xdr;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * An AUTH_SYS credential body (RFC 5531 Appendix A):
 * <pre>
 * struct authsys_parms {
 *     unsigned int stamp;
 *     string machinename&lt;255&gt;;
 *     unsigned int uid;
 *     unsigned int gid;
 *     unsigned int gids&lt;16&gt;;
 * };
 * </pre>
 *
 * @param stamp       arbitrary id chosen by the caller
 * @param machineName caller's host name, at most 255 bytes of UTF-8
 * @param uid         effective user id
 * @param gid         effective group id
 * @param gids        supplementary groups, at most 16 (copied)
 */
public record AuthSys(int stamp, String machineName, int uid, int gid, int[] gids) {
    /** Longest machinename (RFC 5531 Appendix A). */
    public static final int MAX_MACHINE_NAME = 255;
    /** Most supplementary groups (RFC 5531 Appendix A). */
    public static final int MAX_GIDS = 16;

    /** Validates the limits and copies {@code gids}. */
    public AuthSys {
        if (machineName.getBytes(StandardCharsets.UTF_8).length > MAX_MACHINE_NAME) {
            throw new IllegalArgumentException("machinename longer than " + MAX_MACHINE_NAME + " bytes");
        }
        if (gids.length > MAX_GIDS) {
            throw new IllegalArgumentException(gids.length + " gids, at most " + MAX_GIDS);
        }
        gids = gids.clone();
    }

    /** Supplementary groups (a copy). */
    @Override
    public int[] gids() {
        return gids.clone();
    }

    /** This credential as an AUTH_SYS {@link OpaqueAuth}. */
    public OpaqueAuth toOpaqueAuth() {
        byte[] name = machineName.getBytes(StandardCharsets.UTF_8);
        int len = 4 + 4 + Xdr.roundUp(name.length) + 4 + 4 + 4 + 4 * gids.length;
        byte[] body = new byte[len];
        XdrWriter w = new XdrWriter(MemorySegment.ofArray(body), 0, len);
        w.writeInt(stamp).writeOpaque(name).writeInt(uid).writeInt(gid).writeInt(gids.length);
        for (int g : gids) {
            w.writeInt(g);
        }
        return new OpaqueAuth(OncRpc.AUTH_SYS, body);
    }

    /**
     * Decodes an AUTH_SYS body located at {@code [offset, offset + length)}.
     *
     * @throws RpcMessageException if it is malformed or exceeds a limit
     */
    public static AuthSys decode(MemorySegment seg, long offset, long length) throws RpcMessageException {
        XdrReader r = new XdrReader(seg, offset, length);
        try {
            int stamp = r.readInt();
            String name = machineName(r.readOpaque(MAX_MACHINE_NAME));
            int uid = r.readInt();
            int gid = r.readInt();
            long n = r.readUnsignedInt();
            if (n > MAX_GIDS) {
                throw new RpcMessageException(RpcMessageException.Reason.BAD_AUTH_SYS, false, 0,
                        n + " gids, at most " + MAX_GIDS);
            }
            int[] gids = new int[(int) n];
            for (int i = 0; i < n; i++) {
                gids[i] = r.readInt();
            }
            return new AuthSys(stamp, name, uid, gid, gids);
        } catch (RpcMessageException e) {
            throw e;
        } catch (XdrException e) {
            throw new RpcMessageException(RpcMessageException.Reason.BAD_AUTH_SYS, false, 0, e.getMessage());
        }
    }

    /**
     * The machinename's bytes as UTF-8, strictly: a lenient decode would turn each bad byte
     * into U+FFFD (three bytes), and 255 such bytes into a name the constructor refuses.
     * Bytes that are not UTF-8 are a credential that does not decode (RFC 5531 §9
     * AUTH_BADCRED), never an exception a peer can provoke.
     */
    private static String machineName(byte[] b) throws RpcMessageException {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            throw new RpcMessageException(RpcMessageException.Reason.BAD_AUTH_SYS, false, 0,
                    "machinename is not UTF-8");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AuthSys a && a.stamp == stamp && a.machineName.equals(machineName)
                && a.uid == uid && a.gid == gid && Arrays.equals(a.gids, gids);
    }

    @Override
    public int hashCode() {
        return ((stamp * 31 + machineName.hashCode()) * 31 + uid) * 31 + gid;
    }

    @Override
    public String toString() {
        return "AuthSys[stamp=" + stamp + ", machineName=" + machineName + ", uid=" + uid + ", gid=" + gid
                + ", gids=" + Arrays.toString(gids) + "]";
    }
}
