package org.rpcrdma.nfs4.server;

import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.oncrpc.XdrCodec;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * COMPOUND's XDR on the server side (RFC 8881 §16.2, RFC 5662): {@code COMPOUND4args
 * {utf8str_cs tag; uint32_t minorversion; nfs_argop4 argarray<>}} decoded into
 * {@link OpArgs}, and {@code COMPOUND4res {nfsstat4 status; utf8str_cs tag; nfs_resop4
 * resarray<>}} encoded from {@link OpResult}s.
 */
final class CompoundCodec {
    /** Operations we accept in one COMPOUND (more is NFS4ERR_TOO_MANY_OPS at the session's limit). */
    static final int MAX_OPS = 128;

    record Args(byte[] tag, int minorVersion, List<OpArgs> ops) {}

    /** One nfs_resop4: the code, the status and, when there is one, the body that follows the status. */
    record OpResult(int op, int status, XdrCodec.Encoder<Void> body) {
        static OpResult ok(int op, XdrCodec.Encoder<Void> body) {
            return new OpResult(op, Nfs4.NFS4_OK, body);
        }

        static OpResult error(int op, int status) {
            return new OpResult(op, status, null);
        }
    }

    record Result(int status, byte[] tag, List<OpResult> results) {}

    static final XdrCodec<Args> ARGS = XdrCodec.of((w, a) -> {
        throw new UnsupportedOperationException("the server does not send COMPOUND");
    }, CompoundCodec::decode);

    static final XdrCodec<Result> RESULT = XdrCodec.of(CompoundCodec::encode, r -> {
        throw new XdrException("the server does not decode COMPOUND results");
    });

    static final RpcProcedure<Args, Result> COMPOUND = new RpcProcedure<>(Nfs4.PROC_COMPOUND, ARGS, RESULT);

    private CompoundCodec() {}

    static Args decode(XdrReader r) throws XdrException {
        byte[] tag = r.readOpaque(Nfs4.MAX_TAG);
        int minor = r.readInt();
        int n = r.readArrayLength(MAX_OPS, 4);
        List<OpArgs> ops = new ArrayList<>(n);
        if (minor != Nfs4.MINOR_VERSION) {
            return new Args(tag, minor, ops); // answered MINOR_VERS_MISMATCH before any op is looked at
        }
        for (int i = 0; i < n; i++) {
            OpArgs a = OpArgs.decode(r.readInt(), r);
            ops.add(a);
            if (a instanceof OpArgs.Unsupported) {
                break;
            }
        }
        return new Args(tag, minor, ops);
    }

    static void encode(XdrWriter w, Result res) {
        w.writeInt(res.status());
        w.writeOpaque(res.tag());
        w.writeInt(res.results().size());
        for (OpResult o : res.results()) {
            w.writeInt(o.op()).writeInt(o.status());
            if (o.body() != null) {
                o.body().encode(w, null);
            }
        }
    }
}
