package org.rpcrdma.xdr;

import java.lang.foreign.MemorySegment;

/**
 * Cheap, bounded looks at the first two words of an ONC RPC message (RFC 5531 §9):
 * {@code xid} at offset 0 and {@code msg_type} at offset 4. The transport uses them to
 * route a received message: a CALL means the peer is the requester (a backward call on
 * a client), a REPLY means we are (RFC 8167 §4).
 */
public final class RpcMessage {
    /** {@link #classify} result when the message is too short or msg_type is unknown. */
    public static final int UNKNOWN = -1;

    private RpcMessage() {}

    /**
     * Returns {@link OncRpc#CALL}, {@link OncRpc#REPLY}, or {@link #UNKNOWN} if fewer than
     * 8 bytes are available or msg_type is another value. Never reads outside
     * {@code [offset, offset + length)}.
     */
    public static int classify(MemorySegment seg, long offset, long length) {
        if (length < 8) {
            return UNKNOWN;
        }
        int t = Xdr.getInt(seg, offset + 4);
        return t == OncRpc.CALL || t == OncRpc.REPLY ? t : UNKNOWN;
    }

    /**
     * The RPC XID.
     *
     * @throws RpcMessageException if fewer than 4 bytes are available
     */
    public static int xid(MemorySegment seg, long offset, long length) throws RpcMessageException {
        if (length < 4) {
            throw new RpcMessageException(RpcMessageException.Reason.MALFORMED, false, 0,
                    "RPC message of " + length + " bytes has no xid");
        }
        return Xdr.getInt(seg, offset);
    }
}
