package org.rpcrdma.transport.link;

import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.rpcrdma.transport.verbs.CompletionChannel;
import org.rpcrdma.transport.verbs.CompletionQueue;
import org.rpcrdma.transport.verbs.WorkCompletions;

/**
 * One completion queue as its {@link CompletionDriver} sees it, whether one link owns it (a
 * client's, or a server's without a completion group) or a {@link CompletionGroup}'s
 * connections share it: polls (and, in event mode, arms and waits: {@link GatedCq}) under the
 * read side of the queue's {@link LinkGate}, copies each completion out of the native {@code ibv_wc}
 * array into Java arrays, and after releasing the gate hands each to the
 * {@link LinkCompletions} of its QP, found by the completion's {@code qp_num}
 * ({@link CompletionTargets}). A completion for a QP no longer registered is dropped and
 * counted; a shared receive it consumed goes back to the shared receive queue's pool.
 *
 * <p>Threading: one thread at a time polls and dispatches, as the driver decides; it owns
 * the copy arrays while it holds the driver's poll role. Dispatch runs user code, so never
 * under the gate.
 */
final class CompletionPoller extends GatedCq {
    private static final System.Logger LOG = System.getLogger(CompletionPoller.class.getName());
    /** Completions taken per ibv_poll_cq. */
    private static final int POLL_BATCH = 32;
    /** IBV_WC_WITH_INV, or the bit Debian 6.1 rxe sets in its place (verbs.RemoteInvalidation). */
    private static final int INVALIDATED = WorkCompletions.WITH_INV | 0x4;

    private final CompletionQueue cq;
    /** Null unless the QPs on this CQ take receives from a shared receive queue. */
    private final SharedReceiveHardware shared;
    private final CompletionTargets<LinkCompletions> targets = new CompletionTargets<>();
    /** A link's own CQ: its one target (its outstanding calls let the poller linger); null when shared. */
    private volatile LinkCompletions own;
    private final WorkCompletions wc = new WorkCompletions(POLL_BATCH);
    /** Copies of the last poll's completions; owned by whoever holds the driver's poll role. */
    private final long[] wcWrId = new long[POLL_BATCH];
    private final int[] wcStatus = new int[POLL_BATCH];
    private final int[] wcByteLen = new int[POLL_BATCH];
    private final int[] wcQp = new int[POLL_BATCH];
    /** The rkey a received Send with Invalidate names, else 0 (RFC 8797 §7; see verbs.RemoteInvalidation). */
    private final int[] wcInvRkey = new int[POLL_BATCH];
    /** Polls begun (written by the polling thread only): a retired qp_num is freed by an empty poll begun after. */
    private volatile long polls;
    /** Odd while a batch is being dispatched (written by the dispatching thread only). */
    private volatile int dispatching;
    private volatile Thread dispatcher;
    private final LongAdder dropped = new LongAdder();

    CompletionPoller(LinkGate gate, CompletionQueue cq, CompletionChannel channel, SharedReceiveHardware shared) {
        super(gate, channel, Long.MAX_VALUE);
        this.cq = cq;
        this.shared = shared;
    }

    /**
     * Completions with {@code qpNum} go to {@code target} from now on; {@code own}: the link
     * owns this CQ (its outstanding calls keep the poller from lingering).
     *
     * @return false if the number is retired and its last completions may still be in the CQ
     */
    boolean register(int qpNum, LinkCompletions target, boolean own) {
        if (!targets.register(qpNum, target)) {
            return false;
        }
        if (own) {
            this.own = target;
        }
        return true;
    }

    /** Completions with {@code qpNum} are dropped from now on (its link is going). */
    void unregister(int qpNum, LinkCompletions target) {
        targets.unregister(qpNum, target);
    }

    /** The QP with {@code qpNum} is destroyed: its number is free once the CQ was seen empty after this. */
    void destroyed(int qpNum) {
        targets.destroyed(qpNum, polls);
    }

    /** Links registered now. */
    int links() {
        return targets.live();
    }

    /** Destroyed links whose last completions may still be in the CQ. */
    int retiredLinks() {
        return targets.retired();
    }

    /** Completions dropped because their QP was no longer registered. */
    long dropped() {
        return dropped.sum();
    }

    /**
     * Waits (up to {@code millis}) until no batch that may hold a completion for a link just
     * unregistered is being dispatched, unless the caller is the dispatching thread itself.
     * After it, that link gets nothing more from this CQ.
     */
    void awaitQuiescent(long millis) {
        int d = dispatching;
        if ((d & 1) == 0 || dispatcher == Thread.currentThread()) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (dispatching == d && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(100_000);
        }
    }

    /** Arms the CQ for its next completion (caller holds the gate's read side). */
    @Override
    void arm() {
        cq.requestNotify(false);
    }

    /** Polls the CQ and copies each completion out. Caller holds the gate's read side (and the poll role). */
    @Override
    int pollAndCopy() {
        long poll = polls + 1;
        polls = poll;
        int n = cq.poll(wc);
        if (n == 0) {
            targets.drained(poll);
        }
        for (int i = 0; i < n; i++) {
            wcWrId[i] = wc.wrId(i);
            wcStatus[i] = wc.status(i);
            wcByteLen[i] = wc.byteLen(i);
            wcQp[i] = wc.qpNum(i);
            int flags = wc.wcFlags(i);
            wcInvRkey[i] = (flags & INVALIDATED) != 0 && (flags & WorkCompletions.WITH_IMM) == 0
                    && wc.status(i) == WorkCompletions.SUCCESS && wc.opcode(i) == WorkCompletions.OPCODE_RECV
                    ? wc.invalidatedRkey(i) : 0;
        }
        return n;
    }

    /** Feeds the {@code n} copied completions to their links. Runs user code: never under the gate. */
    @Override
    public void dispatch(int n) {
        dispatcher = Thread.currentThread();
        dispatching++; // odd: a batch is out (single writer: the poll role's holder)
        try {
            for (int i = 0; i < n; i++) {
                LinkCompletions t = targets.get(wcQp[i]);
                if (t == null) {
                    drop(wcWrId[i]);
                } else {
                    try {
                        t.dispatch(wcWrId[i], wcStatus[i], wcByteLen[i], wcInvRkey[i]);
                    } catch (RuntimeException e) {
                        // that connection is lost, not the others on this CQ (nor its thread)
                        LOG.log(Level.WARNING, "completion dispatch failed; connection lost: {0}", e.toString());
                        LOG.log(Level.DEBUG, "completion dispatch failed", e);
                        t.failed(e);
                    }
                }
            }
        } finally {
            dispatching++;
        }
    }

    /** A completion of a QP that is gone: counted; a shared receive it consumed goes back to the pool. */
    private void drop(long w) {
        dropped.increment();
        if (shared != null && WrId.op(w) == WrId.OP_RECV && WrId.generation(w) == shared.generation()) {
            shared.pool().reclaim(WrId.slot(w));
        }
    }

    @Override
    public int outstandingCalls() {
        LinkCompletions o = own;
        return o == null ? 0 : o.outstandingCalls();
    }

    @Override
    public void failed(RuntimeException e) {
        targets.forEach(t -> t.failed(e));
    }

    /**
     * A link's own CQ with shared receives, after its QP was destroyed and before the CQ is
     * (caller holds the gate's write side): the shared receives still in the CQ, consumed by
     * the QP and never dispatched, go back to the pool.
     */
    void reclaimSharedReceives() {
        if (shared == null) {
            return;
        }
        for (int n = cq.poll(wc); n > 0; n = cq.poll(wc)) {
            for (int i = 0; i < n; i++) {
                long w = wc.wrId(i);
                if (WrId.op(w) == WrId.OP_RECV && WrId.generation(w) == shared.generation()) {
                    shared.pool().reclaim(WrId.slot(w));
                }
            }
        }
    }

    /** Frees the native completion array (caller holds the gate's write side). */
    void close() {
        wc.close();
    }

    /** A completion group's CQ: frees it, then the completion array (caller holds the gate's write side). */
    void closeQueue() {
        LinkHardware.closeQuietly(cq);
        wc.close();
    }
}
