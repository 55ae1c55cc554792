package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 */
final class VerbsLink implements Link {
    private static final System.Logger LOG = System.getLogger(VerbsLink.class.getName());

    private final CmId id;
    private final ProtectionDomain pd;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion sendMr;
    private final MemoryRegion recvMr;
    private final SendBatch send = new SendBatch(1, 1);
    private final RecvBatch recv;
    private final WorkCompletions wc = new WorkCompletions(32);
    private final int generation;
    private final boolean busyPoll;
    private final int sendInline;
    private final int recvInline;
    private volatile Connection conn;
    /**
     * Busy-poll mode: whoever holds this polls the CQ and dispatches, the poller thread or a
     * caller blocked in callAndWait (so Connection still sees one completion thread at a time).
     */
    private final java.util.concurrent.locks.ReentrantLock pollLock = new java.util.concurrent.locks.ReentrantLock();
    private final java.util.concurrent.atomic.AtomicInteger callersPolling = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean stopping;
    private volatile boolean disconnected;
    private boolean destroyed;
    private Thread poller;

    VerbsLink(CmId id, int sendContexts, int sendInline, int receiveBuffers, int recvInline, boolean busyPoll,
            int generation) {
        this.id = id;
        this.generation = generation;
        this.busyPoll = busyPoll;
        this.sendInline = sendInline;
        this.recvInline = recvInline;
        this.recv = new RecvBatch(receiveBuffers);
        Device dev = id.device();
        ProtectionDomain p = null;
        CompletionChannel ch = null;
        CompletionQueue q = null;
        QueuePair qp0 = null;
        MemoryRegion s = null;
        boolean ok = false;
        try {
            p = dev.allocateProtectionDomain();
            ch = busyPoll ? null : dev.createCompletionChannel();
            q = dev.createCompletionQueue(sendContexts + receiveBuffers + 8, ch);
            qp0 = id.createQueuePair(p, q, q, null,
                    new QueuePairCapabilities(sendContexts + 4, receiveBuffers + 4, 1, 1, 0));
            s = p.register(arena.allocate((long) sendContexts * sendInline, 4096), Access.LOCAL_WRITE);
            this.recvMr = p.register(arena.allocate((long) receiveBuffers * recvInline, 4096), Access.LOCAL_WRITE);
            ok = true;
        } finally {
            if (!ok) {
                closeQuietly(qp0, s, q, ch, p);
                arena.close();
                send.close();
                recv.close();
                wc.close();
            }
        }
        this.pd = p;
        this.channel = ch;
        this.cq = q;
        this.qp = qp0;
        this.sendMr = s;
    }

    MemorySegment sendMemory() {
        return sendMr.segment();
    }

    MemorySegment receiveMemory() {
        return recvMr.segment();
    }

    /**
     * Binds the connection and starts the poller. Receives may have been posted before
     * (their completions wait in the CQ until now).
     */
    void start(Connection c, String threadName) {
        this.conn = c;
        if (!busyPoll) {
            cq.requestNotify(false);
        }
        poller = Thread.ofPlatform().daemon().name(threadName).start(this::pollLoop);
    }

    // ---- Link: called under Connection's send lock / ReceivePool lock respectively ----

    @Override
    public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {
        send.clear();
        long addr = buffer.address(); // a slice of sendMr
        send.send(WrId.pack(WrId.OP_SEND, slot, generation), sendMr.lkey(), addr, length,
                signalled ? SendBatch.SIGNALED : 0);
        qp.postSend(send);
    }

    @Override
    public void postReceives(int[] slots, int count) {
        recv.clear();
        long base = recvMr.segment().address();
        for (int i = 0; i < count; i++) {
            recv.add(WrId.pack(WrId.OP_RECV, slots[i], generation), recvMr.lkey(), base + (long) slots[i] * recvInline,
                    recvInline);
        }
        qp.postRecv(recv);
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

    // ---- the poller (one thread per CQ) ----

    private void pollLoop() {
        try {
            while (!stopping) {
                if (busyPoll) {
                    // While a caller drives the CQ, stay out of its way (on few cores a
                    // second spinner steals the CPU the caller and the device need) but
                    // keep polling now and then: completions for others must not wait.
                    if (callersPolling.get() > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                    }
                    if (!tryPollOnce()) {
                        Thread.onSpinWait();
                    }
                    continue;
                }
                int n = cq.poll(wc);
                if (n > 0) {
                    dispatch(n);
                    continue;
                }
                // Re-arm, then poll again to close the race with a completion that arrived
                // between the empty poll and the arm.
                cq.requestNotify(false);
                n = cq.poll(wc);
                if (n > 0) {
                    dispatch(n);
                    continue;
                }
                channel.await(100);
            }
        } catch (RuntimeException e) {
            if (!stopping) {
                LOG.log(Level.WARNING, "completion poller failed", e);
                conn.onLinkLost(e);
            }
        }
    }

    @Override
    public boolean pollOnCaller(java.util.function.BooleanSupplier done, long deadlineNanos) {
        if (!busyPoll || pollLock.isHeldByCurrentThread()) {
            return false; // event mode, or called from a handler that is itself dispatching
        }
        callersPolling.incrementAndGet();
        try {
            while (!done.getAsBoolean() && !stopping && System.nanoTime() - deadlineNanos < 0) {
                if (!tryPollOnce()) {
                    Thread.onSpinWait();
                }
            }
        } finally {
            callersPolling.decrementAndGet();
        }
        return true;
    }

    /** Busy-poll mode: polls and dispatches once unless another thread is; true if it handled any. */
    private boolean tryPollOnce() {
        if (!pollLock.tryLock()) {
            return false;
        }
        try {
            int n = stopping ? 0 : cq.poll(wc);
            if (n > 0) {
                dispatch(n);
                return true;
            }
            return false;
        } finally {
            pollLock.unlock();
        }
    }

    private void dispatch(int n) {
        Connection c = conn;
        for (int i = 0; i < n; i++) {
            long w = wc.wrId(i);
            if (WrId.generation(w) != generation) {
                continue; // from an earlier incarnation
            }
            int status = wc.status(i);
            int slot = WrId.slot(w);
            int op = WrId.op(w);
            if (status != WorkCompletions.SUCCESS) {
                if (op == WrId.OP_RECV && status == WorkCompletions.FLUSHED) {
                    c.onReceiveFlushed(slot);
                } else if (status != WorkCompletions.FLUSHED) {
                    c.onLinkLost(new RpcRdmaException((op == WrId.OP_RECV ? "receive" : "send")
                            + " completed with " + WorkCompletions.statusString(status)));
                }
                continue;
            }
            if (op == WrId.OP_RECV) {
                c.onReceive(slot, wc.byteLen(i));
            } else if (op == WrId.OP_SEND) {
                c.onSendCompleted(slot);
            }
        }
    }

    /** Releases everything (after the connection is lost or closed). Idempotent. */
    void destroy() {
        synchronized (this) {
            if (destroyed) {
                return;
            }
            destroyed = true;
        }
        disconnect();
        stopping = true;
        Thread t = poller;
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        // a caller driving the CQ (pollOnCaller) sees stopping and lets go of the lock
        pollLock.lock();
        try {
            closeQuietly(qp, cq, channel, sendMr, recvMr, pd);
            arena.close();
            send.close();
            recv.close();
            wc.close();
        } finally {
            pollLock.unlock();
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
