package org.rpcrdma.xdr;

import java.lang.foreign.MemorySegment;

/**
 * The header of an ONC RPC Call (RFC 5531 §9):
 * <pre>
 * xid, msg_type = CALL, rpcvers = 2, prog, vers, proc, opaque_auth cred, opaque_auth verf
 * </pre>
 * followed by the procedure's arguments.
 *
 * <p>{@link #encode} writes one; {@link #decode} fills this mutable, reusable object
 * without allocating, recording where the credential and verifier bodies lie in the
 * buffer rather than copying them. Caller-owned; not thread-safe.
 */
public final class RpcCallHeader {
    private int xid;
    private int prog;
    private int vers;
    private int proc;
    private int credFlavor;
    private long credOffset;
    private int credLength;
    private int verfFlavor;
    private long verfOffset;
    private int verfLength;
    private long argsOffset;
    private MemorySegment source = MemorySegment.NULL;

    /** Creates an empty header to decode into; reuse it for every message. */
    public RpcCallHeader() {}

    /** Encoded size of a Call header with these credentials. */
    public static int encodedLength(OpaqueAuth cred, OpaqueAuth verf) {
        return 24 + cred.encodedLength() + verf.encodedLength();
    }

    /**
     * Writes a Call header; the arguments go after it.
     *
     * @return bytes written
     */
    public static int encode(XdrWriter w, int xid, int prog, int vers, int proc, OpaqueAuth cred,
                             OpaqueAuth verf) {
        long start = w.position();
        w.writeInt(xid).writeInt(OncRpc.CALL).writeInt(OncRpc.RPC_VERSION)
                .writeInt(prog).writeInt(vers).writeInt(proc);
        cred.encode(w);
        verf.encode(w);
        return (int) (w.position() - start);
    }

    /** Writes a Call header with AUTH_NONE credential and verifier. */
    public static int encodeAuthNone(XdrWriter w, int xid, int prog, int vers, int proc) {
        return encode(w, xid, prog, vers, proc, OpaqueAuth.NONE, OpaqueAuth.NONE);
    }

    /**
     * Decodes a Call header from {@code r}, leaving it at the first argument byte.
     *
     * @throws RpcMessageException if it is not a Call, is malformed, or has rpcvers != 2
     *         ({@link RpcMessageException.Reason#RPC_VERSION_MISMATCH}, with the XID, so a
     *         server can answer MSG_DENIED / RPC_MISMATCH); a credential or verifier that
     *         can't be decoded is {@link RpcMessageException.Reason#BAD_CREDENTIAL} /
     *         {@link RpcMessageException.Reason#BAD_VERIFIER}, also with the XID
     */
    public RpcCallHeader decode(XdrReader r) throws RpcMessageException {
        boolean haveXid = false;
        try {
            xid = r.readInt();
            haveXid = true;
            int type = r.readInt();
            if (type != OncRpc.CALL) {
                throw new RpcMessageException(RpcMessageException.Reason.BAD_MSG_TYPE, true, xid,
                        "msg_type " + type + ", expected CALL");
            }
            int rpcvers = r.readInt();
            if (rpcvers != OncRpc.RPC_VERSION) {
                throw new RpcMessageException(RpcMessageException.Reason.RPC_VERSION_MISMATCH, true, xid,
                        "rpcvers " + Integer.toUnsignedString(rpcvers));
            }
            prog = r.readInt();
            vers = r.readInt();
            proc = r.readInt();
        } catch (RpcMessageException e) {
            throw e;
        } catch (XdrException e) {
            throw new RpcMessageException(RpcMessageException.Reason.MALFORMED, haveXid, xid, e.getMessage());
        }
        // The credential and verifier get their own reasons: a server answers an
        // undecodable one with AUTH_ERROR (AUTH_BADCRED / AUTH_BADVERF), not silence.
        try {
            credFlavor = r.readInt();
            credLength = r.readOpaqueLength(OncRpc.MAX_AUTH_BYTES);
            credOffset = r.position();
            r.skip(Xdr.roundUp(credLength));
        } catch (XdrException e) {
            throw new RpcMessageException(RpcMessageException.Reason.BAD_CREDENTIAL, true, xid, e.getMessage());
        }
        try {
            verfFlavor = r.readInt();
            verfLength = r.readOpaqueLength(OncRpc.MAX_AUTH_BYTES);
            verfOffset = r.position();
            r.skip(Xdr.roundUp(verfLength));
        } catch (XdrException e) {
            throw new RpcMessageException(RpcMessageException.Reason.BAD_VERIFIER, true, xid, e.getMessage());
        }
        argsOffset = r.position();
        source = r.segment();
        return this;
    }

    /** The XID. */
    public int xid() {
        return xid;
    }

    /** Program number. */
    public int prog() {
        return prog;
    }

    /** Program version. */
    public int vers() {
        return vers;
    }

    /** Procedure number. */
    public int proc() {
        return proc;
    }

    /** Credential flavor. */
    public int credFlavor() {
        return credFlavor;
    }

    /** Absolute offset of the credential body in the decoded segment. */
    public long credOffset() {
        return credOffset;
    }

    /** Credential body length. */
    public int credLength() {
        return credLength;
    }

    /** Verifier flavor. */
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

    /** Absolute offset of the first argument byte. */
    public long argsOffset() {
        return argsOffset;
    }

    /**
     * Decodes the credential as AUTH_SYS (allocates; call it once per Call at most).
     *
     * @throws RpcMessageException if the flavor is not AUTH_SYS or the body is malformed
     */
    public AuthSys authSys() throws RpcMessageException {
        if (credFlavor != OncRpc.AUTH_SYS) {
            throw new RpcMessageException(RpcMessageException.Reason.BAD_AUTH_SYS, true, xid,
                    "credential flavor " + credFlavor + " is not AUTH_SYS");
        }
        return AuthSys.decode(source, credOffset, credLength);
    }
}
