package org.rpcrdma.transport.link;

import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.chunk.ChunkMemory;
import org.rpcrdma.transport.verbs.CompletionChannel;
import org.rpcrdma.transport.verbs.CompletionQueue;
import org.rpcrdma.transport.verbs.WorkCompletions;

/**
 * The completion side of one {@link VerbsLink}, as its {@link CompletionDriver} sees the CQ:
 * polls (and, in event mode, arms and waits) under the read side of the link's
 * {@link LinkGate}, copies each completion out of the native {@code ibv_wc} array into Java
 * arrays, and after releasing the gate classifies and dispatches them to the
 * connection's {@link CompletionSink} (≈ Linux's {@code rpcrdma_wc_send}, {@code rpcrdma_wc_receive} and
 * {@code frwr_wc_localinv}): by the operation and slot packed in wr_id ({@link WrId}), by
 * status (a flushed receive gives its buffer back, any other failure loses the link), and
 * for a received Send with Invalidate by the rkey it withdrew.
 *
 * <p>Threading: one thread at a time polls and dispatches, as {@link CompletionDriver}
 * decides (the poller thread, or a caller waiting in callAndWait for its reply); it owns
 * the copy arrays while it holds the driver's poll role. Dispatch runs user code, so never
 * under the gate. Apart from {@link VerbsLink} because classifying a completion is its own
 * concern, and the one piece of the link that runs on every completion.
 */
public final class LinkCompletions implements CompletionDriver.Cq {
    /** Completions taken per ibv_poll_cq. */
    private static final int POLL_BATCH = 32;
    /** IBV_WC_WITH_INV, or the bit Debian 6.1 rxe sets in its place (verbs.RemoteInvalidation). */
    private static final int INVALIDATED = WorkCompletions.WITH_INV | 0x4;

    private final LinkGate gate;
    private final CompletionQueue cq;
    /** Null in busy-poll mode. */
    private final CompletionChannel channel;
    private final ChunkMemory chunks;
    private final int generation;
    /** The generation of receive wr_ids: the link's, or its shared receive queue's. */
    private final int recvGeneration;
    /** Null unless receives come from a shared receive queue. */
    private final SharedReceiveHardware shared;
    private final WorkCompletions wc = new WorkCompletions(POLL_BATCH);
    /** Copies of the last poll's wr_id, status and byte_len; owned by whoever holds the driver's poll role. */
    private final long[] wcWrId = new long[POLL_BATCH];
    private final int[] wcStatus = new int[POLL_BATCH];
    private final int[] wcByteLen = new int[POLL_BATCH];
    /** The rkey a received Send with Invalidate names, else 0 (RFC 8797 §7; see verbs.RemoteInvalidation). */
    private final int[] wcInvRkey = new int[POLL_BATCH];
    private volatile CompletionSink conn;

    LinkCompletions(LinkGate gate, LinkHardware hw, int generation) {
        this.gate = gate;
        this.cq = hw.cq;
        this.channel = hw.channel;
        this.chunks = hw.chunks;
        this.generation = generation;
        this.shared = hw.shared;
        this.recvGeneration = shared == null ? generation : shared.generation();
    }

    /** Where completions go, set before the poller starts. */
    void bind(CompletionSink c) {
        this.conn = c;
    }

    /** One poll under the gate, no arming. */
    @Override
    public int pollOnly() {
        long stamp = gate.enterUnlessStopping();
        if (stamp == 0) {
            return 0;
        }
        try {
            return pollAndCopy();
        } finally {
            gate.exit(stamp);
        }
    }

    /**
     * Event mode, whoever holds the poll role: polls; if the CQ is empty, arms it, polls
     * again (closing the race with a completion that arrived between the empty poll and the
     * arm) and waits on the channel up to {@code awaitMillis}. All under the gate's read
     * side, so destroy frees the CQ and channel only after this returns.
     *
     * @return completions copied out (0: none, or destroy has begun)
     */
    @Override
    public int pollOrWait(long awaitMillis) {
        long stamp = gate.enterUnlessStopping();
        if (stamp == 0) {
            return 0;
        }
        try {
            int n = pollAndCopy();
            if (n == 0) {
                cq.requestNotify(false);
                n = pollAndCopy();
                if (n == 0 && channel.await(awaitMillis) != null) {
                    conn.counters().channelWakeups.increment();
                }
            }
            return n;
        } finally {
            gate.exit(stamp);
        }
    }

    /**
     * Polls the CQ and copies each completion's wr_id, status and byte_len into the Java
     * arrays. Caller holds the gate's read side (and is the one polling thread).
     */
    private int pollAndCopy() {
        int n = cq.poll(wc);
        for (int i = 0; i < n; i++) {
            wcWrId[i] = wc.wrId(i);
            wcStatus[i] = wc.status(i);
            wcByteLen[i] = wc.byteLen(i);
            int flags = wc.wcFlags(i);
            wcInvRkey[i] = (flags & INVALIDATED) != 0 && (flags & WorkCompletions.WITH_IMM) == 0
                    && wc.status(i) == WorkCompletions.SUCCESS && wc.opcode(i) == WorkCompletions.OPCODE_RECV
                    ? wc.invalidatedRkey(i) : 0;
        }
        return n;
    }

    /** Feeds the {@code n} copied completions to the connection. Runs user code: never under the gate. */
    @Override
    public void dispatch(int n) {
        CompletionSink c = conn;
        for (int i = 0; i < n; i++) {
            long w = wcWrId[i];
            int op = WrId.op(w);
            if (WrId.generation(w) != (op == WrId.OP_RECV ? recvGeneration : generation)) {
                continue; // from an earlier incarnation
            }
            int status = wcStatus[i];
            int slot = WrId.slot(w);
            if (op == WrId.OP_LOCAL_INV) {
                Runnable then = chunks.invalidated(slot, status == WorkCompletions.SUCCESS);
                if (status != WorkCompletions.SUCCESS && status != WorkCompletions.FLUSHED) {
                    c.onLinkLost(new RpcRdmaException("LOCAL_INV completed with " + WorkCompletions.statusString(status)));
                }
                if (then != null) {
                    then.run();
                }
                continue;
            }
            if (status != WorkCompletions.SUCCESS) {
                if (op == WrId.OP_RECV && status == WorkCompletions.FLUSHED) {
                    c.flushed(slot);
                } else if (status != WorkCompletions.FLUSHED) {
                    c.onLinkLost(new RpcRdmaException(opName(op) + " completed with "
                            + WorkCompletions.statusString(status)));
                }
                continue;
            }
            if (op == WrId.OP_RECV) {
                if (wcInvRkey[i] != 0) {
                    remotelyInvalidated(c, wcInvRkey[i]);
                }
                c.received(slot, wcByteLen[i]);
            } else if (op == WrId.OP_SEND) {
                c.sendCompleted(slot);
            } else if (op == WrId.OP_READ || op == WrId.OP_WRITE) {
                c.rdmaCompleted(slot);
            }
        }
    }

    /**
     * The peer's Send with Invalidate withdrew {@code rkey}: before the reply it carries is
     * dispatched, the window is marked so that no LOCAL_INV follows (RFC 8797 §7). Taken
     * whatever was negotiated (Linux's nfsd clears R in its private data yet does it), and
     * counted as such when R was not.
     */
    private void remotelyInvalidated(CompletionSink c, int rkey) {
        if (chunks.remotelyInvalidated(rkey) && !c.remoteInvalidation()) {
            c.counters().remoteInvalidationsUnnegotiated.increment();
        }
    }

    private static String opName(int op) {
        return switch (op) {
            case WrId.OP_RECV -> "receive";
            case WrId.OP_READ -> "RDMA Read";
            case WrId.OP_WRITE -> "RDMA Write";
            case WrId.OP_BIND_MW -> "memory window bind";
            default -> "send";
        };
    }

    @Override
    public boolean stopping() {
        return gate.stopping();
    }

    @Override
    public int outstandingCalls() {
        return conn.outstandingCalls();
    }

    @Override
    public void failed(RuntimeException e) {
        conn.onLinkLost(e);
    }

    /**
     * After the QP was destroyed, before the CQ is (caller holds the gate's write side):
     * the shared receives still in the CQ, consumed by this QP and never dispatched, go
     * back to the pool; a link with receives of its own has nothing to do.
     */
    void reclaimSharedReceives() {
        if (shared == null) {
            return;
        }
        for (int n = cq.poll(wc); n > 0; n = cq.poll(wc)) {
            for (int i = 0; i < n; i++) {
                long w = wc.wrId(i);
                if (WrId.op(w) == WrId.OP_RECV && WrId.generation(w) == recvGeneration) {
                    shared.pool().reclaim(WrId.slot(w));
                }
            }
        }
    }

    /** Frees the native completion array (caller holds the gate's write side). */
    void close() {
        wc.close();
    }
}
