package org.rpcrdma.nfs4;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.oncrpc.XdrCodec;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;

/**
 * COMPOUND4args (RFC 5662): {@code utf8str_cs tag; uint32_t minorversion;
 * nfs_argop4 argarray<>;} with minorversion 1, and the codec of its COMPOUND4res
 * ({@code nfsstat4 status; utf8str_cs tag; nfs_resop4 resarray<>;}) for these very
 * operations: each result must carry the code of the operation at its place (or
 * OP_ILLEGAL), no more results than operations, nothing after the first failure
 * (RFC 8881 §16.2.3). Anything else is a decode error, which fails the call as a
 * malformed reply.
 */
public final class Compound {
    private final String tag;
    private final List<Op<?>> ops;

    private Compound(String tag, List<Op<?>> ops) {
        if (ops.isEmpty()) {
            throw new IllegalArgumentException("a COMPOUND with no operations");
        }
        this.tag = tag;
        this.ops = List.copyOf(ops);
    }

    /** A COMPOUND of {@code ops} in order, with an empty tag. */
    public static Compound of(Op<?>... ops) {
        return new Compound("", List.of(ops));
    }

    /** The same operations under {@code tag} (echoed by the server, RFC 8881 §16.2.3). */
    public Compound tagged(String tag) {
        return new Compound(tag, ops);
    }

    /** {@code first} then these operations (SEQUENCE goes first in a session, RFC 8881 §2.10.6). */
    public Compound prepend(Op<?> first) {
        List<Op<?>> l = new ArrayList<>(ops.size() + 1);
        l.add(first);
        l.addAll(ops);
        return new Compound(tag, l);
    }

    public List<Op<?>> ops() {
        return ops;
    }

    public String tag() {
        return tag;
    }

    /** The COMPOUND procedure (NFSv4 procedure 1) for this compound's results. */
    RpcProcedure<Compound, CompoundResult> procedure() {
        return new RpcProcedure<>(Nfs4.PROC_COMPOUND, ARGS, XdrCodec.of((w, v) -> {
            throw new UnsupportedOperationException("a client does not encode results");
        }, this::decodeResult));
    }

    static final XdrCodec<Compound> ARGS = XdrCodec.of((w, c) -> {
        w.writeOpaque(c.tag.getBytes(StandardCharsets.UTF_8));
        w.writeInt(Nfs4.MINOR_VERSION);
        w.writeInt(c.ops.size());
        for (Op<?> op : c.ops) {
            op.encode(w);
        }
    }, r -> {
        throw new XdrException("a client does not decode COMPOUND arguments");
    });

    /** Reads COMPOUND4res for these operations. */
    CompoundResult decodeResult(XdrReader r) throws XdrException {
        int status = r.readInt();
        String tag = r.readString(Nfs4.MAX_TAG);
        int n = r.readArrayLength(ops.size(), 8); // each nfs_resop4 is at least its code and status
        List<Object> results = new ArrayList<>(n);
        int[] statuses = new int[n];
        for (int i = 0; i < n; i++) {
            Op<?> op = ops.get(i);
            int code = r.readInt();
            if (code != op.code() && code != Nfs4.OP_ILLEGAL) {
                throw new XdrException("result " + i + " is for operation " + code + ", not " + op);
            }
            statuses[i] = r.readInt();
            if (code == Nfs4.OP_ILLEGAL || statuses[i] != Nfs4.NFS4_OK) {
                if (i != n - 1) {
                    throw new XdrException("results go on after " + op + " failed with " + statuses[i]);
                }
                results.add(null);
                break;
            }
            results.add(op.result().decode(r));
        }
        if (status == Nfs4.NFS4_OK && (n != ops.size())) {
            throw new XdrException("status NFS4_OK with " + n + " results for " + ops.size() + " operations");
        }
        if (status != Nfs4.NFS4_OK && n > 0 && statuses[n - 1] != status) {
            throw new XdrException("status " + status + " but the last result's is " + statuses[n - 1]);
        }
        return new CompoundResult(this, status, tag, results, statuses);
    }
}
