package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.OpaqueAuth;
import org.rpcrdma.xdr.RpcReplyHeader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * The reply messages a server sends without results (RFC 5531 §9), each of its exact size.
 * Verifiers are AUTH_NONE: the flavors served (AUTH_NONE, AUTH_SYS) have no reply
 * verifier of their own (RFC 5531 §10.1, Appendix A).
 */
final class Replies {
    private Replies() {}

    /** MSG_ACCEPTED with a void-bodied accept_stat (PROG_UNAVAIL, PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR, or SUCCESS of a void procedure). */
    static MemorySegment accepted(int xid, int acceptStat) {
        MemorySegment m = MemorySegment.ofArray(new byte[24]);
        RpcReplyHeader.encodeAccepted(new XdrWriter(m, 0, 24), xid, OpaqueAuth.NONE, acceptStat);
        return m;
    }

    /** MSG_ACCEPTED / PROG_MISMATCH with the versions served. */
    static MemorySegment progMismatch(int xid, int low, int high) {
        MemorySegment m = MemorySegment.ofArray(new byte[32]);
        RpcReplyHeader.encodeProgMismatch(new XdrWriter(m, 0, 32), xid, OpaqueAuth.NONE, low, high);
        return m;
    }

    /** MSG_DENIED / RPC_MISMATCH: we speak RPC version 2 only. */
    static MemorySegment rpcMismatch(int xid) {
        MemorySegment m = MemorySegment.ofArray(new byte[24]);
        RpcReplyHeader.encodeRpcMismatch(new XdrWriter(m, 0, 24), xid, OncRpc.RPC_VERSION, OncRpc.RPC_VERSION);
        return m;
    }

    /** MSG_DENIED / AUTH_ERROR with {@code authStat}. */
    static MemorySegment authError(int xid, int authStat) {
        MemorySegment m = MemorySegment.ofArray(new byte[20]);
        RpcReplyHeader.encodeAuthError(new XdrWriter(m, 0, 20), xid, authStat);
        return m;
    }
}
