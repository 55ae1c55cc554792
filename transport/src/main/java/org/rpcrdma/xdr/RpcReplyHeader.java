package org.rpcrdma.xdr;

/**
 * The header of an ONC RPC Reply (RFC 5531 §9):
 * <pre>
 * xid, msg_type = REPLY, reply_stat
 *   MSG_ACCEPTED: opaque_auth verf, accept_stat
 *                   SUCCESS: results follow
 *                   PROG_MISMATCH: low, high
 *                   PROG_UNAVAIL, PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR: void
 *   MSG_DENIED:   reject_stat
 *                   RPC_MISMATCH: low, high
 *                   AUTH_ERROR: auth_stat
 * </pre>
 * The static {@code encode*} methods write each shape; {@link #decode} fills this
 * mutable, reusable object without allocating. Caller-owned; not thread-safe.
 */
public final class RpcReplyHeader {
    private int xid;
    private int replyStat;
    private int verfFlavor;
    private long verfOffset;
    private int verfLength;
    private int acceptStat;
    private int rejectStat;
    private int mismatchLow;
    private int mismatchHigh;
    private int authStat;
    private long resultsOffset;

    /** Creates an empty header to decode into; reuse it for every message. */
    public RpcReplyHeader() {}

    /**
     * Whether the RPC reply in {@code m} may carry results: only MSG_ACCEPTED with SUCCESS
     * does (every other shape is void after its status). True when {@code m} is too short
     * to tell (its reader fails on it anyway). Reads nothing outside {@code m}, allocates
     * nothing.
     */
    public static boolean mayCarryResults(java.lang.foreign.MemorySegment m) {
        long n = m.byteSize();
        if (n < 12) {
            return true;
        }
        if (Xdr.getInt(m, 8) != OncRpc.MSG_ACCEPTED) {
            return false;
        }
        if (n < 20) {
            return true;
        }
        long at = 20 + Xdr.roundUp(Xdr.getUnsignedInt(m, 16)); // past the verifier's body
        return at + 4 > n || Xdr.getInt(m, at) == OncRpc.SUCCESS;
    }

    private static void acceptedPrefix(XdrWriter w, int xid, OpaqueAuth verf, int acceptStat) {
        w.writeInt(xid).writeInt(OncRpc.REPLY).writeInt(OncRpc.MSG_ACCEPTED);
        verf.encode(w);
        w.writeInt(acceptStat);
    }

    /**
     * Writes an accepted Reply with a void-bodied accept_stat (SUCCESS, PROG_UNAVAIL,
     * PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR). For SUCCESS the results go after it.
     *
     * @return bytes written
     */
    public static int encodeAccepted(XdrWriter w, int xid, OpaqueAuth verf, int acceptStat) {
        if (acceptStat == OncRpc.PROG_MISMATCH || acceptStat < 0 || acceptStat > OncRpc.SYSTEM_ERR) {
            throw new IllegalArgumentException("accept_stat " + acceptStat + " (use encodeProgMismatch)");
        }
        long start = w.position();
        acceptedPrefix(w, xid, verf, acceptStat);
        return (int) (w.position() - start);
    }

    /** Writes an accepted Reply with PROG_MISMATCH and the supported version range. */
    public static int encodeProgMismatch(XdrWriter w, int xid, OpaqueAuth verf, int low, int high) {
        long start = w.position();
        acceptedPrefix(w, xid, verf, OncRpc.PROG_MISMATCH);
        w.writeInt(low).writeInt(high);
        return (int) (w.position() - start);
    }

    /** Writes a denied Reply: RPC_MISMATCH with the supported RPC version range. */
    public static int encodeRpcMismatch(XdrWriter w, int xid, int low, int high) {
        long start = w.position();
        w.writeInt(xid).writeInt(OncRpc.REPLY).writeInt(OncRpc.MSG_DENIED)
                .writeInt(OncRpc.RPC_MISMATCH).writeInt(low).writeInt(high);
        return (int) (w.position() - start);
    }

    /** Writes a denied Reply: AUTH_ERROR with an auth_stat. */
    public static int encodeAuthError(XdrWriter w, int xid, int authStat) {
        long start = w.position();
        w.writeInt(xid).writeInt(OncRpc.REPLY).writeInt(OncRpc.MSG_DENIED)
                .writeInt(OncRpc.AUTH_ERROR).writeInt(authStat);
        return (int) (w.position() - start);
    }

    /**
     * Decodes a Reply header from {@code r}, leaving it at the first result byte.
     *
     * @throws RpcMessageException if it is not a Reply or is malformed
     */
    public RpcReplyHeader decode(XdrReader r) throws RpcMessageException {
        boolean haveXid = false;
        verfFlavor = 0;
        verfOffset = 0;
        verfLength = 0;
        acceptStat = -1;
        rejectStat = -1;
        mismatchLow = 0;
        mismatchHigh = 0;
        authStat = -1;
        try {
            xid = r.readInt();
            haveXid = true;
            int type = r.readInt();
            if (type != OncRpc.REPLY) {
                throw new RpcMessageException(RpcMessageException.Reason.BAD_MSG_TYPE, true, xid,
                        "msg_type " + type + ", expected REPLY");
            }
            replyStat = r.readInt();
            switch (replyStat) {
                case OncRpc.MSG_ACCEPTED -> {
                    verfFlavor = r.readInt();
                    verfLength = r.readOpaqueLength(OncRpc.MAX_AUTH_BYTES);
                    verfOffset = r.position();
                    r.skip(Xdr.roundUp(verfLength));
                    acceptStat = r.readInt();
                    switch (acceptStat) {
                        case OncRpc.PROG_MISMATCH -> {
                            mismatchLow = r.readInt();
                            mismatchHigh = r.readInt();
                        }
                        case OncRpc.SUCCESS, OncRpc.PROG_UNAVAIL, OncRpc.PROC_UNAVAIL, OncRpc.GARBAGE_ARGS,
                             OncRpc.SYSTEM_ERR -> { }
                        default -> throw new RpcMessageException(RpcMessageException.Reason.BAD_ACCEPT_STAT,
                                true, xid, "accept_stat " + Integer.toUnsignedString(acceptStat));
                    }
                }
                case OncRpc.MSG_DENIED -> {
                    rejectStat = r.readInt();
                    switch (rejectStat) {
                        case OncRpc.RPC_MISMATCH -> {
                            mismatchLow = r.readInt();
                            mismatchHigh = r.readInt();
                        }
                        case OncRpc.AUTH_ERROR -> authStat = r.readInt();
                        default -> throw new RpcMessageException(RpcMessageException.Reason.BAD_REJECT_STAT,
                                true, xid, "reject_stat " + Integer.toUnsignedString(rejectStat));
                    }
                }
                default -> throw new RpcMessageException(RpcMessageException.Reason.BAD_REPLY_STAT, true, xid,
                        "reply_stat " + Integer.toUnsignedString(replyStat));
            }
            resultsOffset = r.position();
            return this;
        } catch (RpcMessageException e) {
            throw e;
        } catch (XdrException e) {
            throw new RpcMessageException(RpcMessageException.Reason.MALFORMED, haveXid, xid, e.getMessage());
        }
    }

    /** The XID. */
    public int xid() {
        return xid;
    }

    /** {@link OncRpc#MSG_ACCEPTED} or {@link OncRpc#MSG_DENIED}. */
    public int replyStat() {
        return replyStat;
    }

    /** Whether the call was accepted and executed successfully. */
    public boolean isSuccess() {
        return replyStat == OncRpc.MSG_ACCEPTED && acceptStat == OncRpc.SUCCESS;
    }

    /** accept_stat, or -1 if denied. */
    public int acceptStat() {
        return acceptStat;
    }

    /** reject_stat, or -1 if accepted. */
    public int rejectStat() {
        return rejectStat;
    }

    /** Lowest supported version for PROG_MISMATCH / RPC_MISMATCH. */
    public int mismatchLow() {
        return mismatchLow;
    }

    /** Highest supported version for PROG_MISMATCH / RPC_MISMATCH. */
    public int mismatchHigh() {
        return mismatchHigh;
    }

    /** auth_stat for AUTH_ERROR, or -1. */
    public int authStat() {
        return authStat;
    }

    /** Verifier flavor of an accepted Reply. */
    public int verfFlavor() {
        return verfFlavor;
    }

    /** Absolute offset of the verifier body. */
    public long verfOffset() {
        return verfOffset;
    }

    /** Verifier body length. */
    public int verfLength() {
        return verfLength;
    }

    /** Absolute offset just past the header (results of a successful call start here). */
    public long resultsOffset() {
        return resultsOffset;
    }
}
