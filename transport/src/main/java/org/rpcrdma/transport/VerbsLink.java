package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.StampedLock;
import org.rpcrdma.transport.core.ChunkBuffer;
import org.rpcrdma.transport.core.Link;
import org.rpcrdma.transport.core.WrId;
import org.rpcrdma.transport.verbs.Access;
import org.rpcrdma.transport.verbs.CmId;
import org.rpcrdma.transport.verbs.CompletionChannel;
import org.rpcrdma.transport.verbs.CompletionQueue;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.MemoryRegion;
import org.rpcrdma.transport.verbs.ProtectionDomain;
import org.rpcrdma.transport.verbs.QueuePair;
import org.rpcrdma.transport.verbs.QueuePairCapabilities;
import org.rpcrdma.transport.verbs.RecvBatch;
import org.rpcrdma.transport.verbs.SendBatch;
import org.rpcrdma.transport.verbs.WorkCompletions;

/**
 * The hardware of one connection (≈ Linux {@code rpcrdma_ep}): PD, one CQ (with a
 * completion channel in event mode), the RC QP, registered send and receive memory, and
 * the poller thread that feeds completions to the {@link Connection}. Built after address
 * resolution (client) or on CONNECT_REQUEST (server); destroyed in the kernel's order:
 * disconnect, stop the poller, QP, CQ, channel, MRs, PD (the id is the endpoint's).
 *
 * <p>Threading: posts come from any thread (callers, handlers, the poller); completions are
 * polled by one thread at a time, as {@link CompletionDriver} decides: the poller thread, or
 * a caller waiting in callAndWait for its reply. Everything that touches native memory (posts, CQ polls,
 * the channel wait) holds the read side of {@code gate}; {@link #destroy} frees under its
 * write side, so nothing native is used after free however late a thread comes, and a post
 * after destroy gets {@link LinkClosedException}. Completions are copied out of the native
 * {@code ibv_wc} array under the gate and dispatched from Java arrays after releasing it:
 * dispatch runs user code, which may post (a read lock held there would block behind a
 * waiting destroy's write lock) or block for as long as it likes.
 *
 * <p>Over 400 lines because every use of native memory (Sends, receives, RDMA Reads and
 * Writes, exposing and withdrawing chunk memory, the polls) and destroy share that one
 * gate: kept in one class, the argument that nothing native is used after free can be
 * checked in one place. Who polls lives in {@link CompletionDriver}, chunk memory in
 * {@link ChunkMemory}.
 */
final class VerbsLink implements Link {
    private static final System.Logger LOG = System.getLogger(VerbsLink.class.getName());
    /** Completions taken per ibv_poll_cq. */
    private static final int POLL_BATCH = 32;
    /** How long destroy waits for the poller to stop before freeing past it (the gate keeps that safe). */
    private static final long POLLER_JOIN_MILLIS = 2000;
    /** IBV_WC_WITH_INV, or the bit Debian 6.1 rxe sets in its place (verbs.RemoteInvalidation). */
    private static final int INVALIDATED = WorkCompletions.WITH_INV | 0x4;

    private final CmId id;
    private final ProtectionDomain pd;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion sendMr;
    private final MemoryRegion recvMr;
    private final SendBatch send = new SendBatch(1, 1);
    /** RDMA Read/Write requests: posted under {@code rdmaLock}, apart from Sends (SendQueue's lock). */
    private final SendBatch rdma = new SendBatch(1, 1);
    private final Object rdmaLock = new Object();
    /** Chunk data and what is exposed to the peer; used under the gate like everything native. */
    private final ChunkMemory chunks;
    /** Set at construction (it sizes the queues), lowered once to what the peer granted ({@link #limitRdmaDepth}). */
    private volatile int rdmaDepth;
    private final RecvBatch recv;
    private final WorkCompletions wc = new WorkCompletions(POLL_BATCH);
    /** Copies of the last poll's wr_id, status and byte_len; owned by whoever holds the driver's poll role. */
    private final long[] wcWrId = new long[POLL_BATCH];
    private final int[] wcStatus = new int[POLL_BATCH];
    private final int[] wcByteLen = new int[POLL_BATCH];
    /** The rkey a received Send with Invalidate names, else 0 (RFC 8797 §7; see verbs.RemoteInvalidation). */
    private final int[] wcInvRkey = new int[POLL_BATCH];
    private final int generation;
    private final boolean busyPoll;
    private final int sendInline;
    private final int recvInline;
    private volatile Connection conn;
    /** Who polls the CQ and when: the poller thread or a blocking caller (busy, events, adaptive). */
    private final CompletionDriver driver;
    /**
     * Read side: any use of native memory (post, poll, arm, channel wait); never held while
     * calling out to the Connection. Write side: destroy, while it frees.
     */
    private final StampedLock gate = new StampedLock();
    /** Set under the write side of gate before anything is freed; read under the read side. */
    private boolean freed;
    /** Destroy has begun: the poller stops, posts are refused (checked before the gate too, so they stop early). */
    private volatile boolean stopping;
    private volatile boolean disconnected;
    /** Serializes destroy: a second caller returns only once the first has freed everything. */
    private final Object destroyLock = new Object();
    private boolean destroyed;
    private volatile Thread poller;

    /**
     * @param chunkMemory bytes of registered chunk memory (0: none, no chunks at all)
     * @param rdmaDepth   RDMA Reads/Writes outstanding at once (the negotiated initiator
     *                    depth; 0: this side does none)
     * @param memoryWindows expose chunk memory through memory windows if the device has them
     *                    (else, or false: a registration per RPC)
     * @param callerBuffers the endpoint's registered buffers, exposed in place (null: none)
     */
    VerbsLink(CmId id, int sendContexts, int sendInline, int receiveBuffers, int recvInline, boolean busyPoll,
            int generation, long chunkMemory, int rdmaDepth, boolean memoryWindows, RegisteredBuffers callerBuffers) {
        this.id = id;
        this.rdmaDepth = rdmaDepth;
        this.generation = generation;
        this.busyPoll = busyPoll;
        this.sendInline = sendInline;
        this.recvInline = recvInline;
        this.recv = new RecvBatch(receiveBuffers);
        this.driver = new CompletionDriver(new DriverAccess(), busyPoll);
        Device dev = id.device();
        // Every RPC exposes at most three chunks; most one or two: two windows per send context.
        int windowCount = memoryWindows && chunkMemory > 0 && dev.queryLimits().maxMw() > 0 ? 2 * sendContexts : 0;
        ProtectionDomain p = null;
        CompletionChannel ch = null;
        CompletionQueue q = null;
        QueuePair qp0 = null;
        MemoryRegion s = null;
        MemoryRegion r = null;
        MemoryRegion cm = null;
        boolean ok = false;
        try {
            p = dev.allocateProtectionDomain();
            ch = busyPoll ? null : dev.createCompletionChannel();
            // A window has at most one bind and one LOCAL_INV on the send queue; when the QP
            // fails, every one of them completes (flushed), signalled or not.
            q = dev.createCompletionQueue(sendContexts + receiveBuffers + rdmaDepth + 2 * windowCount + 8, ch);
            qp0 = id.createQueuePair(p, q, q, null, new QueuePairCapabilities(
                    sendContexts + rdmaDepth + 2 * windowCount + 4, receiveBuffers + 4, 1, 1, 0));
            s = p.register(arena.allocate((long) sendContexts * sendInline, 4096), Access.LOCAL_WRITE);
            r = p.register(arena.allocate((long) receiveBuffers * recvInline, 4096), Access.LOCAL_WRITE);
            if (chunkMemory > 0) {
                cm = p.register(arena.allocate(chunkMemory, 4096),
                        Access.LOCAL_WRITE | (windowCount > 0 ? Access.MW_BIND : 0));
            }
            ok = true;
        } finally {
            if (!ok) {
                closeQuietly(qp0, cm, r, s, q, ch, p);
                arena.close();
                send.close();
                rdma.close();
                recv.close();
                wc.close();
            }
        }
        this.pd = p;
        this.channel = ch;
        this.cq = q;
        this.qp = qp0;
        this.sendMr = s;
        this.recvMr = r;
        this.chunks = new ChunkMemory(p, cm, windowCount > 0 ? new WindowPool(p, qp0, generation, windowCount) : null,
                callerBuffers, this::underGateUnlessGoing);
    }

    MemorySegment sendMemory() {
        return sendMr.segment();
    }

    MemorySegment receiveMemory() {
        return recvMr.segment();
    }

    /** Event mode: the poller spins this long after each completion before it arms the channel and sleeps. */
    void adaptiveSpin(long nanos) {
        driver.adaptiveSpin(nanos);
    }

    /**
     * Binds the connection and starts the poller. Receives may have been posted before
     * (their completions wait in the CQ until now).
     */
    void start(Connection c, String threadName) {
        this.conn = c;
        chunks.stats(c.stats());
        if (!busyPoll) {
            long stamp = gate.readLock();
            try {
                if (!freed) {
                    cq.requestNotify(false);
                }
            } finally {
                gate.unlockRead(stamp);
            }
        }
        poller = driver.start(threadName);
    }

    // ---- Link: called under Connection's send lock / ReceivePool lock respectively ----

    /**
     * Posts one Send of {@code buffer[0, length)} (a slice of {@link #sendMemory()}).
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    @Override
    public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {
        postSendWithInvalidate(slot, buffer, length, signalled, 0);
    }

    /** As {@link #postSend}, as IBV_WR_SEND_WITH_INV of the peer's {@code rkey} unless it is 0. */
    @Override
    public void postSendWithInvalidate(int slot, MemorySegment buffer, int length, boolean signalled, int rkey) {
        if (stopping) {
            throw refused("send"); // early, without the gate: don't keep a waiting destroy out
        }
        long stamp = gate.readLock();
        try {
            if (freed) {
                throw refused("send");
            }
            send.clear();
            long addr = buffer.address(); // a slice of sendMr
            long wrId = WrId.pack(WrId.OP_SEND, slot, generation);
            int flags = signalled ? SendBatch.SIGNALED : 0;
            if (rkey == 0) {
                send.send(wrId, sendMr.lkey(), addr, length, flags);
            } else {
                send.sendWithInvalidate(wrId, sendMr.lkey(), addr, length, rkey, flags);
            }
            qp.postSend(send);
        } finally {
            gate.unlockRead(stamp);
        }
    }

    /**
     * Posts receive buffers {@code slots[0, count)} of {@link #receiveMemory()}: buffer
     * {@code slot} is {@code [slot * recvInline, (slot + 1) * recvInline)}. Needs no
     * Connection, so receives can be posted before connect.
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    @Override
    public void postReceives(int[] slots, int count) {
        if (stopping) {
            throw refused("receive"); // early, without the gate: don't keep a waiting destroy out
        }
        long stamp = gate.readLock();
        try {
            if (freed) {
                throw refused("receive");
            }
            recv.clear();
            long base = recvMr.segment().address();
            int lkey = recvMr.lkey();
            for (int i = 0; i < count; i++) {
                recv.add(WrId.pack(WrId.OP_RECV, slots[i], generation), lkey, base + (long) slots[i] * recvInline,
                        recvInline);
            }
            qp.postRecv(recv);
        } finally {
            gate.unlockRead(stamp);
        }
    }

    @Override
    public boolean exposesMemory() {
        return true;
    }

    @Override
    public int rdmaDepth() {
        return rdmaDepth;
    }

    /**
     * The peer granted {@code granted} RDMA Reads of ours at once (its responder resources,
     * from the connection's establishment): the depth never exceeds it. Linux's nfsd grants 0.
     */
    void limitRdmaDepth(int granted) {
        rdmaDepth = Math.min(rdmaDepth, Math.max(0, granted));
    }

    /** Chunk memory: a slice of the registered pool, or memory registered for this buffer alone. */
    @Override
    public ChunkBuffer allocateChunk(long bytes) {
        if (stopping) {
            throw refused("chunk allocation");
        }
        long stamp = gate.readLock();
        try {
            if (freed) {
                throw refused("chunk allocation");
            }
            return chunks.allocate(bytes);
        } finally {
            gate.unlockRead(stamp);
        }
    }

    /**
     * The caller's registered memory (an allocator's buffer, or a registration cache entry
     * made or found now), exposed in place (registered in our PD on first use); else null.
     * The buffer's use is taken outside the gate and, on failure, given back outside it:
     * its release, or an eviction, may deregister through the gate.
     */
    @Override
    public ChunkBuffer callerChunk(MemorySegment memory) {
        RegisteredBuffer r = chunks.use(memory);
        if (r == null) {
            return null;
        }
        boolean ok = false;
        try {
            ChunkBuffer b = underGate("chunk allocation", () -> chunks.callerChunk(r, memory));
            ok = true;
            return b;
        } finally {
            if (!ok) {
                r.unuse();
            }
        }
    }

    /**
     * Registers {@code b} in this link's PD now (a client's allocation, so that its first
     * call does not pay for it).
     */
    void register(RegisteredBuffer b) {
        b.use();
        try {
            underGate("registration", () -> chunks.register(b));
        } finally {
            b.unuse(); // ORDER: outside the gate (a closed buffer's release deregisters through it)
        }
    }

    private <T> T underGate(String what, java.util.function.Supplier<T> action) {
        if (stopping) {
            throw refused(what);
        }
        long stamp = gate.readLock();
        try {
            if (freed) {
                throw refused(what);
            }
            return action.get();
        } finally {
            gate.unlockRead(stamp);
        }
    }

    /** A release of chunk memory: under the gate, or left to destroy once the link is going (after the QP). */
    private void underGateUnlessGoing(Runnable r) {
        if (disconnected) {
            return;
        }
        long stamp = gate.readLock();
        try {
            if (!freed) {
                r.run();
            }
        } finally {
            gate.unlockRead(stamp);
        }
    }

    @Override
    public void postRead(int token, ChunkBuffer local, long localOffset, int length, int rkey, long remoteOffset) {
        postRdma(false, token, local, localOffset, length, rkey, remoteOffset);
    }

    @Override
    public void postWrite(int token, ChunkBuffer local, long localOffset, int length, int rkey, long remoteOffset) {
        postRdma(true, token, local, localOffset, length, rkey, remoteOffset);
    }

    private void postRdma(boolean write, int token, ChunkBuffer local, long localOffset, int length, int rkey,
            long remoteOffset) {
        if (stopping) {
            throw refused(write ? "RDMA Write" : "RDMA Read");
        }
        MemorySegment mem = local.segment();
        java.util.Objects.checkFromIndexSize(localOffset, length, mem.byteSize()); // as asSlice would, without one
        long addr = mem.address() + localOffset;
        long stamp = gate.readLock();
        try {
            if (freed) {
                throw refused(write ? "RDMA Write" : "RDMA Read");
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
                qp.postSend(rdma);
            }
        } finally {
            gate.unlockRead(stamp);
        }
    }

    /**
     * Exposure of {@code local[offset, +length)} to the peer: a window bound for this RPC, or a registration; a fresh
     * rkey that no other RPC ever had, withdrawn by {@link #withdraw} (see {@link ChunkMemory}).
     */
    @Override
    public int expose(ChunkBuffer local, long offset, long length, boolean writable) {
        if (stopping) {
            throw refused("memory exposure");
        }
        long stamp = gate.readLock();
        try {
            if (freed) {
                throw refused("memory exposure");
            }
            return chunks.expose(local, offset, length, writable);
        } finally {
            gate.unlockRead(stamp);
        }
    }

    /** LOCAL_INV for windows (then runs on its completion), dereg for registrations (then runs now). */
    @Override
    public void withdraw(int[] rkeys, int count, Runnable then) {
        boolean now = true;
        long stamp = gate.readLock();
        try {
            if (!freed) {
                now = chunks.withdraw(rkeys, count, then);
            }
        } finally {
            gate.unlockRead(stamp);
        }
        if (now) {
            then.run(); // freed: the QP and every window went with it
        }
    }

    private LinkClosedException refused(String what) {
        Connection c = conn;
        return new LinkClosedException("link " + (c == null ? "(no connection yet)" : c.toString())
                + " destroyed; " + what + " post refused");
    }

    @Override
    public void disconnect() {
        synchronized (this) {
            if (disconnected) {
                return;
            }
            disconnected = true;
        }
        try {
            id.disconnect();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "rdma_disconnect: {0}", e.getMessage());
        }
    }

    @Override
    public boolean pollOnCaller(java.util.function.BooleanSupplier done, long deadlineNanos) {
        return driver.pollOnCaller(done, deadlineNanos);
    }

    @Override
    public void blockingCallStarts() {
        driver.blockingCallStarts();
    }

    @Override
    public void blockingCallEnds() {
        driver.blockingCallEnds();
    }

    /** The CQ as the {@link CompletionDriver} sees it. */
    private final class DriverAccess implements CompletionDriver.Cq {
        @Override
        public int pollOnly() {
            return VerbsLink.this.pollOnly();
        }

        @Override
        public int pollOrWait(long awaitMillis) {
            return VerbsLink.this.pollOrWait(awaitMillis);
        }

        @Override
        public void dispatch(int n) {
            VerbsLink.this.dispatch(n);
        }

        @Override
        public boolean stopping() {
            return stopping;
        }

        @Override
        public int outstandingCalls() {
            return conn.outstandingCalls();
        }

        @Override
        public void failed(RuntimeException e) {
            conn.onLinkLost(e);
        }
    }

    /** One poll under the gate, no arming. */
    private int pollOnly() {
        long stamp = gate.readLock();
        try {
            return freed || stopping ? 0 : pollAndCopy();
        } finally {
            gate.unlockRead(stamp);
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
    private int pollOrWait(long awaitMillis) {
        long stamp = gate.readLock();
        try {
            if (freed || stopping) {
                return 0;
            }
            int n = pollAndCopy();
            if (n == 0) {
                cq.requestNotify(false);
                n = pollAndCopy();
                if (n == 0 && channel.await(awaitMillis) != null) {
                    conn.stats().channelWakeups.increment();
                }
            }
            return n;
        } finally {
            gate.unlockRead(stamp);
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

    /** Feeds the {@code n} copied completions to the Connection. Runs user code: never under the gate. */
    private void dispatch(int n) {
        Connection c = conn;
        for (int i = 0; i < n; i++) {
            long w = wcWrId[i];
            if (WrId.generation(w) != generation) {
                continue; // from an earlier incarnation
            }
            int status = wcStatus[i];
            int slot = WrId.slot(w);
            int op = WrId.op(w);
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
                    c.onReceiveFlushed(slot);
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
                c.onReceive(slot, wcByteLen[i]);
            } else if (op == WrId.OP_SEND) {
                c.onSendCompleted(slot);
            } else if (op == WrId.OP_READ || op == WrId.OP_WRITE) {
                c.onRdmaCompleted(slot);
            }
        }
    }

    /**
     * The peer's Send with Invalidate withdrew {@code rkey}: before the reply it carries is
     * dispatched, the window is marked so that no LOCAL_INV follows (RFC 8797 §7). Taken
     * whatever was negotiated (Linux's nfsd clears R in its private data yet does it), and
     * counted as such when R was not.
     */
    private void remotelyInvalidated(Connection c, int rkey) {
        if (chunks.remotelyInvalidated(rkey) && !c.remoteInvalidation()) {
            c.stats().remoteInvalidationsUnnegotiated.increment();
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

    /**
     * Releases everything (after the connection is lost or closed). Idempotent; a concurrent
     * second call returns once the first has freed everything (the endpoint then closes the id).
     *
     * <p>ORDER: disconnect; set {@code stopping} (the poller and callers stop polling, new
     * posts are refused); wait up to {@link #POLLER_JOIN_MILLIS} for the poller; take the
     * gate's write side, which waits out every post, poll and channel wait in progress (at
     * most {@link #CompletionDriver.AWAIT_MILLIS} for a wait); then free QP, CQ, channel, MRs, PD and the
     * native arrays. A poller stuck in a handler past the join is warned about and freed
     * past: it holds no gate there, and finds {@code stopping} when it comes back.
     */
    void destroy() {
        Runnable[] withdrawn = {};
        synchronized (destroyLock) {
            if (destroyed) {
                return;
            }
            destroyed = true;
            disconnect();
            stopping = true;
            Thread t = poller;
            if (t != null && t != Thread.currentThread()) {
                try {
                    t.join(POLLER_JOIN_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (t.isAlive()) {
                    LOG.log(Level.WARNING, "completion poller {0} did not stop within " + POLLER_JOIN_MILLIS
                            + " ms (in a call handler?); freeing the link without it", t.getName());
                }
            }
            long stamp = gate.writeLock();
            try {
                freed = true;
                closeQuietly(qp, cq, channel, sendMr, recvMr);
                withdrawn = chunks.closeAll();
                closeQuietly(pd);
                arena.close();
                send.close();
                rdma.close();
                recv.close();
                wc.close();
            } finally {
                gate.unlockWrite(stamp);
            }
        }
        // withdrawals that waited for a LOCAL_INV: the QP is gone, so the rkeys are dead; go on
        for (Runnable r : withdrawn) {
            r.run();
        }
    }

    private static void closeQuietly(AutoCloseable... all) {
        for (AutoCloseable a : all) {
            if (a != null) {
                try {
                    a.close();
                } catch (Exception e) {
                    LOG.log(Level.DEBUG, "close: {0}", e.toString());
                }
            }
        }
    }
}
