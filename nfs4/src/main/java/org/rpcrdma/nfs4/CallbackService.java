package org.rpcrdma.nfs4;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.rpcrdma.oncrpc.RpcDispatcher;

/**
 * The client's callback service (RFC 8881 §20): the back channel's program
 * ({@link Nfs4#CB_PROGRAM} version 1) on an {@link RpcDispatcher}, which answers CB_NULL
 * itself (procedure 0, RFC 5531 §12.1) and hands CB_COMPOUND here. The back channel's slot
 * table (§2.10.6.1, server to client) lives here too: one sequence ID per slot, starting
 * at 1, the last reply cached for a retry.
 *
 * <p>Rules applied, in order (RFC 8881 §20.2.3, §20.9.3): minorversion other than 1:
 * NFS4ERR_MINOR_VERS_MISMATCH with no results; a first operation other than CB_SEQUENCE:
 * NFS4ERR_OP_NOT_IN_SESSION; CB_SEQUENCE later: NFS4ERR_SEQUENCE_POS; another session:
 * NFS4ERR_BADSESSION; a slot beyond our table: NFS4ERR_BADSLOT; a retry of the slot's last
 * request: the cached reply (NFS4ERR_RETRY_UNCACHED_REP if there is none); any other
 * sequence ID but the next: NFS4ERR_SEQ_MISORDERED. CB_RECALL goes to the
 * {@link RecallHandler}; any other NFSv4.1 callback operation is answered NFS4ERR_NOTSUPP,
 * a code outside the protocol CB_ILLEGAL / NFS4ERR_OP_ILLEGAL; processing stops at the first
 * failure. The handler runs on the transport's thread: it must not block (a recall
 * schedules its DELEGRETURN on another thread and answers at once).
 */
public final class CallbackService {
    private static final System.Logger LOG = System.getLogger(CallbackService.class.getName());

    /** What the client does with a CB_RECALL: start returning the delegation and say how it went (an nfsstat4). */
    @FunctionalInterface
    public interface RecallHandler {
        int recall(CbCompound.RecallArgs recall, int xid);
    }

    private final RecallHandler recalls;
    private byte[] sessionId;
    private int[] lastSequenceId;
    private CbCompound.Result[] cached;
    /** The XIDs of the last {@link #XIDS_KEPT} CB_COMPOUNDs, oldest first (for tests and tracing). */
    private final java.util.ArrayDeque<Integer> compoundXids = new java.util.ArrayDeque<>();
    static final int XIDS_KEPT = 64;
    /** CB_COMPOUNDs answered, and CB_RECALLs among their operations. */
    public final LongAdder compounds = new LongAdder();
    public final LongAdder recallsReceived = new LongAdder();

    public CallbackService(RecallHandler recalls) {
        this.recalls = java.util.Objects.requireNonNull(recalls, "recalls");
    }

    /** Serves the callback program on {@code d} (CB_NULL there, CB_COMPOUND here). */
    public void register(RpcDispatcher d) {
        d.program(Nfs4.CB_PROGRAM, Nfs4.CB_VERSION).procedure(CbCompound.PROCEDURE,
                (args, call) -> call.reply(process(args, call.xid())));
    }

    /** The session whose back channel this is, with its negotiated ca_maxrequests; callbacks before this get BADSESSION. */
    public synchronized void session(byte[] id, int slots) {
        if (id.length != Nfs4.NFS4_SESSIONID_SIZE || slots < 1) {
            throw new IllegalArgumentException("a 16-byte session id and at least one slot");
        }
        sessionId = id.clone();
        lastSequenceId = new int[slots]; // the first request on a slot carries 1
        cached = new CbCompound.Result[slots];
    }

    /** The XIDs of the last 64 CB_COMPOUNDs answered, in order. */
    public synchronized List<Integer> compoundXids() {
        return List.copyOf(compoundXids);
    }

    /** Answers one CB_COMPOUND (the RPC call's {@code xid} is for the record). */
    public synchronized CbCompound.Result process(CbCompound.Args a, int xid) {
        compounds.increment();
        if (compoundXids.size() == XIDS_KEPT) {
            compoundXids.removeFirst();
        }
        compoundXids.addLast(xid);
        if (a.minorVersion() != Nfs4.MINOR_VERSION) {
            return new CbCompound.Result(Nfs4.NFS4ERR_MINOR_VERS_MISMATCH, a.tag(), List.of());
        }
        List<CbCompound.OpResult> out = new ArrayList<>();
        int slot = -1;
        int seq = 0;
        for (int i = 0; i < a.ops().size(); i++) {
            Object op = a.ops().get(i);
            CbCompound.OpResult r;
            if (op instanceof CbCompound.SequenceArgs s) {
                if (i > 0) {
                    r = CbCompound.OpResult.of(Nfs4.OP_CB_SEQUENCE, Nfs4.NFS4ERR_SEQUENCE_POS);
                } else {
                    CbCompound.Result replay = replayOrNull(s);
                    if (replay != null) {
                        return replay;
                    }
                    r = sequence(s);
                    if (r.status() == Nfs4.NFS4_OK) {
                        slot = s.slotId();
                        seq = s.sequenceId();
                    }
                }
            } else if (i == 0) {
                r = CbCompound.OpResult.of(code(op), Nfs4.NFS4ERR_OP_NOT_IN_SESSION);
            } else {
                CbCompound.RecallArgs rc = (CbCompound.RecallArgs) op;
                recallsReceived.increment();
                r = CbCompound.OpResult.of(Nfs4.OP_CB_RECALL, recall(rc, xid));
            }
            out.add(r);
            if (r.status() != Nfs4.NFS4_OK) {
                return finish(a, out, slot, seq);
            }
        }
        if (a.stoppedAt() >= 0) {
            int code = a.stoppedAt();
            boolean known = code >= Nfs4.OP_CB_GETATTR && code <= Nfs4.OP_CB_NOTIFY_DEVICEID;
            out.add(a.ops().isEmpty() && known ? CbCompound.OpResult.of(code, Nfs4.NFS4ERR_OP_NOT_IN_SESSION)
                    : known ? CbCompound.OpResult.of(code, Nfs4.NFS4ERR_NOTSUPP)
                    : CbCompound.OpResult.of(Nfs4.OP_CB_ILLEGAL, Nfs4.NFS4ERR_OP_ILLEGAL));
        }
        return finish(a, out, slot, seq);
    }

    private int recall(CbCompound.RecallArgs rc, int xid) {
        try {
            return recalls.recall(rc, xid);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "CB_RECALL handler threw; answering NFS4ERR_SERVERFAULT", e);
            return Nfs4.NFS4ERR_SERVERFAULT;
        }
    }

    private CbCompound.Result finish(CbCompound.Args a, List<CbCompound.OpResult> out, int slot, int seq) {
        int status = out.isEmpty() ? Nfs4.NFS4_OK : out.get(out.size() - 1).status();
        CbCompound.Result res = new CbCompound.Result(status, a.tag(), List.copyOf(out));
        if (slot >= 0) { // SEQUENCE succeeded: the slot moved on, and this is its reply for a retry
            lastSequenceId[slot] = seq;
            cached[slot] = res;
        }
        return res;
    }

    /** A retry of the slot's last request gets its reply again (§2.10.6.1.3); null when this is not one. */
    private CbCompound.Result replayOrNull(CbCompound.SequenceArgs s) {
        if (sessionId == null || !Arrays.equals(sessionId, s.sessionId()) || s.slotId() < 0
                || s.slotId() >= lastSequenceId.length || s.sequenceId() != lastSequenceId[s.slotId()]
                || lastSequenceId[s.slotId()] == 0) {
            return null;
        }
        CbCompound.Result c = cached[s.slotId()];
        return c != null ? c : new CbCompound.Result(Nfs4.NFS4ERR_RETRY_UNCACHED_REP, "",
                List.of(CbCompound.OpResult.of(Nfs4.OP_CB_SEQUENCE, Nfs4.NFS4ERR_RETRY_UNCACHED_REP)));
    }

    private CbCompound.OpResult sequence(CbCompound.SequenceArgs s) {
        if (sessionId == null || !Arrays.equals(sessionId, s.sessionId())) {
            return CbCompound.OpResult.of(Nfs4.OP_CB_SEQUENCE, Nfs4.NFS4ERR_BADSESSION);
        }
        if (s.slotId() < 0 || s.slotId() >= lastSequenceId.length) {
            return CbCompound.OpResult.of(Nfs4.OP_CB_SEQUENCE, Nfs4.NFS4ERR_BADSLOT);
        }
        if (s.sequenceId() != lastSequenceId[s.slotId()] + 1) {
            return CbCompound.OpResult.of(Nfs4.OP_CB_SEQUENCE, Nfs4.NFS4ERR_SEQ_MISORDERED);
        }
        int top = lastSequenceId.length - 1;
        return new CbCompound.OpResult(Nfs4.OP_CB_SEQUENCE, Nfs4.NFS4_OK,
                new CbCompound.SequenceResult(sessionId.clone(), s.sequenceId(), s.slotId(), top, top));
    }

    private static int code(Object op) {
        return op instanceof CbCompound.SequenceArgs ? Nfs4.OP_CB_SEQUENCE : Nfs4.OP_CB_RECALL;
    }
}
