package org.rpcrdma.nfs4;

import org.rpcrdma.oncrpc.XdrCodec;
import org.rpcrdma.xdr.XdrWriter;

/**
 * One operation of a COMPOUND (RFC 8881 §16.2): its code ({@code nfs_opnum4}), how its
 * arguments are written ({@code nfs_argop4}'s arm) and how its result is read when its
 * status is NFS4_OK ({@code nfs_resop4}'s arm after the status). An operation that fails
 * has no result body for any operation this client sends (each one's error arm is void
 * in RFC 5662). Build them with {@link FileOps} and {@link SessionOps}; the same instance
 * fetches its result from {@link CompoundResult#get(Op)}.
 *
 * @param <R> the result of a successful operation
 */
public final class Op<R> {
    private final int code;
    private final String name;
    private final XdrCodec.Encoder<Void> args;
    private final XdrCodec.Decoder<R> result;

    Op(int code, String name, XdrCodec.Encoder<Void> args, XdrCodec.Decoder<R> result) {
        this.code = code;
        this.name = name;
        this.args = args;
        this.result = result;
    }

    /** The nfs_opnum4. */
    public int code() {
        return code;
    }

    public String name() {
        return name;
    }

    void encode(XdrWriter w) {
        w.writeInt(code);
        args.encode(w, null);
    }

    XdrCodec.Decoder<R> result() {
        return result;
    }

    @Override
    public String toString() {
        return name;
    }
}
