package org.rpcrdma.nfs4.server;

import java.lang.System.Logger.Level;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.oncrpc.OncRpcClient;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.oncrpc.XdrCodec;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.xdr.AuthSys;

/**
 * Sends CB_COMPOUND {CB_SEQUENCE, CB_RECALL} (RFC 8881 §20.2, §20.9) to a delegation's
 * holder over its session's back channel, the client's own RPC-over-RDMA connection
 * (RFC 8167). The back channel's slot 0 carries one callback at a time, its sequence ID
 * counted per session.
 */
final class CallbackSender {
    private static final System.Logger LOG = System.getLogger(CallbackSender.class.getName());

    record Recall(Session session, int sequenceId, Delegations.Delegation delegation) {}

    /** CB_COMPOUND4args for one recall; its result is CB_COMPOUND4res's status. */
    static final RpcProcedure<Recall, Integer> CB_COMPOUND = new RpcProcedure<>(Nfs4.CB_PROC_COMPOUND,
            XdrCodec.of((w, r) -> {
                w.writeInt(0).writeInt(Nfs4.MINOR_VERSION).writeInt(0).writeInt(2); // tag "", minor, ident, 2 ops
                w.writeInt(Nfs4.OP_CB_SEQUENCE).writeFixedOpaque(r.session().id).writeInt(r.sequenceId())
                        .writeInt(0).writeInt(0).writeBoolean(false).writeInt(0); // slot 0, highest 0, no referring calls
                w.writeInt(Nfs4.OP_CB_RECALL);
                OpenHandlers.writeStateid(w, r.delegation().stateid());
                w.writeBoolean(false).writeOpaque(r.delegation().fh);
            }, r -> {
                throw new org.rpcrdma.xdr.XdrException("the server does not decode CB_COMPOUND arguments");
            }),
            XdrCodec.of((w, s) -> {
                throw new UnsupportedOperationException("the server does not answer CB_COMPOUND");
            }, r -> r.readInt()));

    /**
     * The callbacks' credential: AUTH_SYS as root, as nfsd sends them. The Linux client's
     * callback service refuses AUTH_NONE for anything but CB_NULL (fs/nfs/callback.c).
     */
    static final AuthSys CREDENTIAL = new AuthSys(0, "panama-rpcrdma", 0, 0, new int[0]);

    private final long timeoutMillis;

    CallbackSender(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    /** Recalls {@code d}: the future completes with CB_COMPOUND's nfsstat4, or fails if the call did. */
    CompletableFuture<Integer> recall(Delegations.Delegation d) {
        Session s = d.session;
        Connection c = s.backChannel();
        if (c == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("no back channel"));
        }
        Recall r = new Recall(s, s.nextCallbackSequence(), d);
        long t0 = System.nanoTime();
        return new OncRpcClient(c, s.cbProgram, Nfs4.CB_VERSION).withAuthSys(CREDENTIAL)
                .callAsync(CB_COMPOUND, r, timeoutMillis, TimeUnit.MILLISECONDS)
                .whenComplete((st, e) -> LOG.log(e == null && st == Nfs4.NFS4_OK ? Level.INFO : Level.WARNING,
                        "CB_RECALL of a delegation of inode {0}: {1} in {2} us", d.ino,
                        e == null ? "nfsstat4 " + st : e.toString(), (System.nanoTime() - t0) / 1000));
    }
}
