package org.rpcrdma.nfs4.server;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.server.CompoundCodec.OpResult;
import org.rpcrdma.transport.Connection;

/**
 * Runs a COMPOUND (RFC 8881 §16.2.3): its operations in order until one fails, with the
 * session rules of §2.10.6: SEQUENCE first (a replay is answered from the slot's reply
 * cache), the operations that make or end a session or client ID alone, NFS4ERR_NOTSUPP
 * for an NFSv4.1 operation not implemented and NFS4ERR_OP_ILLEGAL for a code outside it.
 */
final class CompoundExecutor {
    private static final System.Logger LOG = System.getLogger(CompoundExecutor.class.getName());

    private final SessionHandlers sessions;
    private final NamespaceHandlers names;
    private final OpenHandlers opens;
    private final DataHandlers data;

    CompoundExecutor(SessionHandlers sessions, NamespaceHandlers names, OpenHandlers opens, DataHandlers data) {
        this.sessions = sessions;
        this.names = names;
        this.opens = opens;
        this.data = data;
    }

    CompoundCodec.Result run(CompoundCodec.Args args, Connection connection) {
        List<OpResult> results = new ArrayList<>(args.ops().size());
        if (args.minorVersion() != Nfs4.MINOR_VERSION) {
            return new CompoundCodec.Result(Nfs4.NFS4ERR_MINOR_VERS_MISMATCH, args.tag(), results);
        }
        CompoundState st = new CompoundState(connection);
        int status = Nfs4.NFS4_OK;
        try {
            for (int i = 0; i < args.ops().size(); i++) {
                OpArgs op = args.ops().get(i);
                OpResult r;
                if (i == 0 && op instanceof OpArgs.Sequence s) {
                    ReplyCache.Admission a = sessions.sequence(s, st);
                    if (a.reply() != null) {
                        return a.reply(); // a replay: the reply the slot kept (§2.10.6.1.3)
                    }
                    r = a.status() == Nfs4.NFS4_OK ? sessions.sequenceResult(s, st)
                            : OpResult.error(Nfs4.OP_SEQUENCE, a.status());
                } else {
                    r = first(i, op, args.ops().size(), st);
                    if (r == null) {
                        r = one(op, st);
                    }
                }
                results.add(r);
                status = r.status();
                if (status != Nfs4.NFS4_OK) {
                    break;
                }
            }
        } finally {
            if (st.slot >= 0) {
                st.session.client.renewedNanos = System.nanoTime();
            }
        }
        CompoundCodec.Result res = new CompoundCodec.Result(status, args.tag(), results);
        if (LOG.isLoggable(Level.DEBUG)) {
            StringBuilder b = new StringBuilder("COMPOUND");
            for (OpResult r : results) {
                b.append(' ').append(r.op()).append(r.status() == Nfs4.NFS4_OK ? "" : "=" + r.status());
            }
            LOG.log(Level.DEBUG, b.toString());
        }
        if (st.slot >= 0) {
            st.session.slots.done(st.slot, res, st.cacheThis && st.cacheable);
        }
        return res;
    }

    /** The placement rules of §2.10.6 for operation {@code i}: a result if they refuse it, else null. */
    private static OpResult first(int i, OpArgs op, int count, CompoundState st) {
        int code = code(op);
        if (op instanceof OpArgs.Sequence) {
            return OpResult.error(Nfs4.OP_SEQUENCE, Nfs4.NFS4ERR_SEQUENCE_POS);
        }
        boolean sessionless = op instanceof OpArgs.ExchangeId || op instanceof OpArgs.CreateSession
                || op instanceof OpArgs.DestroySession || op instanceof OpArgs.BindConn
                || op instanceof OpArgs.DestroyClientId;
        if (i == 0 && !sessionless && !(op instanceof OpArgs.Unsupported)) {
            return OpResult.error(code, Nfs4.NFS4ERR_OP_NOT_IN_SESSION);
        }
        if (i == 0 && sessionless && count > 1 && !(op instanceof OpArgs.ExchangeId)
                && !(op instanceof OpArgs.DestroySession)) {
            return OpResult.error(code, Nfs4.NFS4ERR_NOT_ONLY_OP);
        }
        return null;
    }

    private OpResult one(OpArgs op, CompoundState st) {
        int code = code(op);
        try {
            return switch (op) {
                case OpArgs.Unsupported u -> u.code() < Nfs4.OP_FIRST || u.code() > Nfs4.OP_LAST_V41
                        ? OpResult.error(Nfs4.OP_ILLEGAL, Nfs4.NFS4ERR_OP_ILLEGAL)
                        : OpResult.error(u.code(), Nfs4.NFS4ERR_NOTSUPP);
                case OpArgs.ExchangeId a -> sessions.exchangeId(a);
                case OpArgs.CreateSession a -> sessions.createSession(a, st);
                case OpArgs.DestroySession a -> sessions.destroySession(a);
                case OpArgs.DestroyClientId a -> sessions.destroyClientId(a);
                case OpArgs.BindConn a -> sessions.bindConn(a, st);
                case OpArgs.ReclaimComplete a -> OpResult.ok(Nfs4.OP_RECLAIM_COMPLETE, null);
                case OpArgs.Secinfo a -> names.secinfo(a, st);
                case OpArgs.PutFh a -> names.putFh(a, st);
                case OpArgs.Plain a -> names.plain(a.code(), st);
                case OpArgs.Lookup a -> names.lookup(a, st);
                case OpArgs.Access a -> names.access(a, st);
                case OpArgs.Getattr a -> names.getattr(a, st);
                case OpArgs.Setattr a -> names.setattr(a, st);
                case OpArgs.Readdir a -> names.readdir(a, st);
                case OpArgs.Create a -> names.create(a, st);
                case OpArgs.Remove a -> names.remove(a, st);
                case OpArgs.Rename a -> names.rename(a, st);
                case OpArgs.Link a -> names.link(a, st);
                case OpArgs.Open a -> opens.open(a, st);
                case OpArgs.Close a -> opens.close(a, st);
                case OpArgs.OpenDowngrade a -> opens.downgrade(a, st);
                case OpArgs.TestStateid a -> opens.testStateid(a);
                case OpArgs.FreeStateid a -> opens.freeStateid(a);
                case OpArgs.Delegreturn a -> opens.delegreturn(a);
                case OpArgs.Read a -> data.read(a, st);
                case OpArgs.Write a -> data.write(a, st);
                case OpArgs.Commit a -> data.commit(a, st);
                case OpArgs.Sequence a -> OpResult.error(Nfs4.OP_SEQUENCE, Nfs4.NFS4ERR_SEQUENCE_POS);
            };
        } catch (NfsError e) {
            return e.status == Nfs4.NFS4ERR_SERVERFAULT ? fault(code, e) : OpResult.error(code, e.status);
        } catch (RuntimeException e) {
            return fault(code, e);
        }
    }

    private static OpResult fault(int code, RuntimeException e) {
        LOG.log(Level.WARNING, "operation " + code + " failed", e);
        return OpResult.error(code, Nfs4.NFS4ERR_SERVERFAULT);
    }

    static int code(OpArgs op) {
        return switch (op) {
            case OpArgs.Unsupported u -> u.code();
            case OpArgs.Plain p -> p.code();
            case OpArgs.Sequence a -> Nfs4.OP_SEQUENCE;
            case OpArgs.ExchangeId a -> Nfs4.OP_EXCHANGE_ID;
            case OpArgs.CreateSession a -> Nfs4.OP_CREATE_SESSION;
            case OpArgs.DestroySession a -> Nfs4.OP_DESTROY_SESSION;
            case OpArgs.DestroyClientId a -> Nfs4.OP_DESTROY_CLIENTID;
            case OpArgs.BindConn a -> Nfs4.OP_BIND_CONN_TO_SESSION;
            case OpArgs.ReclaimComplete a -> Nfs4.OP_RECLAIM_COMPLETE;
            case OpArgs.Secinfo a -> a.name() == null ? Nfs4.OP_SECINFO_NO_NAME : Nfs4.OP_SECINFO;
            case OpArgs.PutFh a -> Nfs4.OP_PUTFH;
            case OpArgs.Lookup a -> Nfs4.OP_LOOKUP;
            case OpArgs.Access a -> Nfs4.OP_ACCESS;
            case OpArgs.Getattr a -> Nfs4.OP_GETATTR;
            case OpArgs.Setattr a -> Nfs4.OP_SETATTR;
            case OpArgs.Readdir a -> Nfs4.OP_READDIR;
            case OpArgs.Create a -> Nfs4.OP_CREATE;
            case OpArgs.Remove a -> Nfs4.OP_REMOVE;
            case OpArgs.Rename a -> Nfs4.OP_RENAME;
            case OpArgs.Link a -> Nfs4.OP_LINK;
            case OpArgs.Open a -> Nfs4.OP_OPEN;
            case OpArgs.Close a -> Nfs4.OP_CLOSE;
            case OpArgs.OpenDowngrade a -> Nfs4.OP_OPEN_DOWNGRADE;
            case OpArgs.Read a -> Nfs4.OP_READ;
            case OpArgs.Write a -> Nfs4.OP_WRITE;
            case OpArgs.Commit a -> Nfs4.OP_COMMIT;
            case OpArgs.TestStateid a -> Nfs4.OP_TEST_STATEID;
            case OpArgs.FreeStateid a -> Nfs4.OP_FREE_STATEID;
            case OpArgs.Delegreturn a -> Nfs4.OP_DELEGRETURN;
        };
    }
}
