package org.rpcrdma.transport.link;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import org.rpcrdma.transport.LinkClosedException;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.chunk.WindowPool;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.verbs.MemoryRegion;
import org.rpcrdma.transport.verbs.MemoryWindow;
import org.rpcrdma.transport.verbs.PreparedSends;
import org.rpcrdma.transport.verbs.QueuePair;
import org.rpcrdma.transport.verbs.RecvBatch;
import org.rpcrdma.transport.verbs.SendBatch;

/**
 * The posting of one {@link VerbsLink}'s work requests: Sends (with or without Invalidate),
 * receives, RDMA Reads and Writes, each built in a work-request array allocated once
 * (≈ Linux's {@code rpcrdma_post_sends} and {@code rpcrdma_post_recvs}) and posted under
 * the read side of the link's {@link LinkGate}. Each wr_id packs operation, slot and the
 * link's generation ({@link WrId}), which {@link LinkCompletions} takes apart again.
 *
 * <p>Threading: posts come from any thread (callers, handlers, the poller). Sends are
 * serialised by the caller (SendQueue's lock), receives by the ReceivePool's lock; RDMA
 * Reads and Writes, posted by the responder's chunk engine, under {@code rdmaLock}, apart
 * from Sends. Apart from {@link VerbsLink} because building and posting a request is its
 * own concern: the link only decides whether it may still post (the gate).
 */
public final class WorkRequests implements WindowPool.BindChain {
    private final LinkGate gate;
    private final QueuePair qp;
    private final LinkHardware hw;
    private final int generation;
    private final int recvInline;
    /**
     * The three batches' memory, closed once: closing a shared arena is a handshake with
     * every thread of the JVM, which a close of many connections at once pays per arena.
     */
    private final Arena arena = Arena.ofShared();
    private final SendBatch send = new SendBatch(1, 1, arena);
    /** A Send per send context, built once: an inline message from its context's buffer stores only what changed. */
    private final PreparedSends prepared;
    /** RDMA Read/Write requests: posted under {@code rdmaLock}, apart from Sends (SendQueue's lock). */
    private final SendBatch rdma = new SendBatch(1, 1, arena);
    private final Object rdmaLock = new Object();
    /**
     * RDMA Writes and window binds staged by the thread that opened the chain
     * ({@link #openChain}), posted in one ibv_post_send with the next Send (whichever thread
     * posts it) or when the chain closes: the Writes of a reply and its Send are one system
     * call, as Linux's svc_rdma_sendto chains them, and so are a call's binds and its Send.
     * Guarded by {@code chainLock}; room for the Writes that the RDMA depth lets be
     * outstanding, one call's binds, and the Send (a request that finds it full is posted on
     * its own).
     */
    private final SendBatch chain;
    private final int chainCapacity;
    private final Object chainLock = new Object();
    private volatile Thread chainOwner;
    /** Work requests waiting in {@code chain}: read without the lock by every Send (0: post it alone). */
    private volatile int staged;
    private final RecvBatch recv;
    /** The connection's counters, once it started (posts before that are not counted). */
    private volatile StatsCounters stats;

    WorkRequests(LinkGate gate, LinkHardware hw, int generation, int sendContexts, int receiveBuffers, int recvInline,
            int rdmaDepth) {
        this.gate = gate;
        this.hw = hw;
        this.qp = hw.qp;
        this.generation = generation;
        this.recvInline = recvInline;
        SendBatch c = null;
        boolean ok = false;
        try {
            this.prepared = new PreparedSends(sendContexts, hw.sendMr.lkey(),
                    slot -> WrId.pack(WrId.OP_SEND, slot, generation), arena);
            c = new SendBatch(chainCapacity(rdmaDepth), 1, arena);
            this.recv = new RecvBatch(receiveBuffers, arena);
            ok = true;
        } finally {
            if (!ok) {
                arena.close();
            }
        }
        this.chain = c;
        this.chainCapacity = chainCapacity(rdmaDepth);
    }

    /**
     * A reply's Writes (up to the RDMA depth), or a call's window binds (as many as it has
     * rkeys), and the Send behind them: a client with no RDMA depth still chains every bind
     * of an echo (call and Reply chunk) with its Send.
     */
    private static int chainCapacity(int rdmaDepth) {
        return Math.max(Math.max(1, rdmaDepth), WindowPool.MAX_PER_WITHDRAWAL) + 1;
    }

    void stats(StatsCounters s) {
        this.stats = s;
    }

    /** Counted before the post: the peer may act on it before this thread returns. */
    private void countPost() {
        StatsCounters s = stats;
        if (s != null) {
            s.sendQueuePosts.increment();
        }
    }

    /**
     * One Send of {@code buffer[0, length)} (a slice of the send memory), as
     * IBV_WR_SEND_WITH_INV of the peer's {@code rkey} unless it is 0 (RFC 8797 §7).
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    void send(int slot, MemorySegment buffer, int length, boolean signalled, int rkey) {
        long stamp = gate.enter("send");
        try {
            if (staged != 0 && sendAfterStaged(slot, buffer, length, signalled, rkey)) {
                return;
            }
            if (rkey == 0 && prepared.covers(slot, length)) {
                countPost();
                qp.postSend(prepared, slot, buffer.address(), length, signalled ? SendBatch.SIGNALED : 0);
                return;
            }
            send.clear();
            addSend(send, slot, buffer, length, signalled, rkey);
            countPost();
            qp.postSend(send);
        } finally {
            gate.exit(stamp);
        }
    }

    private void addSend(SendBatch b, int slot, MemorySegment buffer, int length, boolean signalled, int rkey) {
        long addr = buffer.address(); // a slice of sendMr
        long wrId = WrId.pack(WrId.OP_SEND, slot, generation);
        int flags = signalled ? SendBatch.SIGNALED : 0;
        if (rkey == 0) {
            b.send(wrId, hw.sendMr.lkey(), addr, length, flags);
        } else {
            b.sendWithInvalidate(wrId, hw.sendMr.lkey(), addr, length, rkey, flags);
        }
    }

    /**
     * The Send goes out behind the staged Writes, in one post (false: nothing was staged
     * after all). Any Send may carry them: a reply's Send is queued only after its Writes
     * were staged, so one that sees none staged follows Writes already posted.
     */
    private boolean sendAfterStaged(int slot, MemorySegment buffer, int length, boolean signalled, int rkey) {
        synchronized (chainLock) {
            if (chain.size() == 0) {
                return false;
            }
            addSend(chain, slot, buffer, length, signalled, rkey);
            postChainLocked();
            return true;
        }
    }

    /** Caller holds {@code chainLock} and the gate: posts the chain and empties it, whatever the post did. */
    private void postChainLocked() {
        try {
            countPost();
            qp.postSend(chain);
        } finally {
            chain.clear();
            staged = 0;
        }
    }

    /**
     * Until {@link #closeChain} on this thread, its RDMA Writes wait to go out with the next
     * Send in one post. False (and nothing changes) if another thread has the chain open:
     * this one then posts each request on its own, as before.
     */
    boolean openChain() {
        synchronized (chainLock) {
            if (chainOwner != null) {
                return false;
            }
            chainOwner = Thread.currentThread();
            return true;
        }
    }

    /**
     * Ends this thread's chain: Writes still staged (their Send is not posted yet, e.g. it
     * waits for a send context) go out now, on their own.
     *
     * @throws LinkClosedException if destroy has begun; the staged Writes are dropped (the
     *         connection's loss abandons their jobs)
     */
    void closeChain() {
        synchronized (chainLock) {
            if (chainOwner != Thread.currentThread()) {
                return;
            }
            chainOwner = null;
            if (chain.size() == 0) {
                return;
            }
            long stamp;
            try {
                stamp = gate.enter("RDMA Write");
            } catch (RuntimeException e) {
                chain.clear();
                staged = 0;
                throw e;
            }
            try {
                postChainLocked();
            } finally {
                gate.exit(stamp);
            }
        }
    }

    /**
     * Receive buffers {@code slots[0, count)} of the receive memory: buffer {@code slot} is
     * {@code [slot * recvInline, (slot + 1) * recvInline)}.
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    void receives(int[] slots, int count) {
        long stamp = gate.enter("receive");
        try {
            recv.clear();
            long base = hw.recvMr.segment().address();
            int lkey = hw.recvMr.lkey();
            for (int i = 0; i < count; i++) {
                recv.add(WrId.pack(WrId.OP_RECV, slots[i], generation), lkey, base + (long) slots[i] * recvInline,
                        recvInline);
            }
            qp.postRecv(recv);
        } finally {
            gate.exit(stamp);
        }
    }

    /**
     * One signalled RDMA Write ({@code write}) or Read between {@code local[localOffset, +length)}
     * and the peer's {@code rkey} at {@code remoteOffset}; {@code token} comes back in its completion.
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    void rdma(boolean write, int token, ChunkBuffer local, long localOffset, int length, int rkey,
            long remoteOffset) {
        long stamp = gate.enter(write ? "RDMA Write" : "RDMA Read");
        try {
            MemorySegment mem = local.segment();
            Objects.checkFromIndexSize(localOffset, length, mem.byteSize()); // as asSlice would, without one
            long addr = mem.address() + localOffset;
            if (write && chainOwner == Thread.currentThread() && stage(token, local, addr, length, rkey, remoteOffset)) {
                return;
            }
            synchronized (rdmaLock) {
                rdma.clear();
                if (write) {
                    rdma.rdmaWrite(WrId.pack(WrId.OP_WRITE, token, generation), local.lkey(), addr, length,
                            remoteOffset, rkey, SendBatch.SIGNALED);
                } else {
                    rdma.rdmaRead(WrId.pack(WrId.OP_READ, token, generation), local.lkey(), addr, length,
                            remoteOffset, rkey, SendBatch.SIGNALED);
                }
                countPost();
                qp.postSend(rdma);
            }
        } finally {
            gate.exit(stamp);
        }
    }

    /**
     * Adds one signalled RDMA Write to this thread's chain; false when it is full (the
     * depth was raised after the chain was made), and the Write is posted on its own.
     */
    private boolean stage(int token, ChunkBuffer local, long addr, int length, int rkey, long remoteOffset) {
        synchronized (chainLock) {
            if (full()) {
                return false;
            }
            // signalled: each Write's completion frees its room in RdmaQueue and, the last, its buffer
            chain.rdmaWrite(WrId.pack(WrId.OP_WRITE, token, generation), local.lkey(), addr, length, remoteOffset,
                    rkey, SendBatch.SIGNALED);
            staged = chain.size();
            return true;
        }
    }

    /**
     * Adds one window bind (unsignalled) to this thread's chain; false when this thread has
     * no chain open or it is full: the window pool posts the bind on its own.
     */
    @Override
    public boolean stageBind(long wrId, MemoryWindow mw, MemoryRegion mr, long address, long length, int access,
            int rkey) {
        if (chainOwner != Thread.currentThread()) {
            return false;
        }
        synchronized (chainLock) {
            if (full()) {
                return false;
            }
            chain.bindWindow(wrId, mw, mr, address, length, access, 0, rkey);
            staged = chain.size();
            return true;
        }
    }

    /** Caller holds {@code chainLock}: one more request would leave no room for the Send. */
    private boolean full() {
        return chain.size() + 1 >= chainCapacity;
    }

    /** Posts what the chain holds now (the caller is inside the gate), whoever staged it. */
    @Override
    public void postStaged() {
        if (staged == 0) {
            return;
        }
        synchronized (chainLock) {
            if (chain.size() != 0) {
                postChainLocked();
            }
        }
    }

    /** Frees the work-request arrays (caller holds the gate's write side). */
    void close() {
        arena.close();
    }
}
