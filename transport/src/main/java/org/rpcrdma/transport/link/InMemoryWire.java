package org.rpcrdma.transport.link;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.rpc.ConnectionEngine;

/**
 * The wire of an {@link InMemoryPair}: each side's posted receives, and the deliveries
 * (a Send landing in a receive, a signalled Send's completion, an RDMA completion, the
 * link's loss) run in order on the thread that sends, one at a time: a trampoline, so a
 * handler that replies at once does not recurse. A Send is copied into the next receive
 * the peer posted, or finds none (as with rnr_retry_count 0, the sender then ends the
 * connection).
 *
 * <p>Kept in primitive arrays so a call and its reply allocate nothing here, and with two
 * lock acquisitions per round trip (what a benchmark of the pair shows should be the
 * transport's cost, not this emulation's): each side's posted receives are a single-producer single-consumer
 * ring (its receive pool posts under the pool's lock, the peer's Sends take them under the
 * peer's send lock); and a delivery the draining thread queues itself while nothing else
 * is queued goes to that thread's own lane, with no lock.
 */
public final class InMemoryWire {
    private static final System.Logger LOG = System.getLogger(InMemoryWire.class.getName());
    static final int RECEIVE = 0;
    static final int SEND_DONE = 1;
    public static final int LOST = 2;
    public static final int RDMA_DONE = 3;
    private static final VarHandle COUNT;

    static {
        try {
            COUNT = MethodHandles.lookup().findVarHandle(InMemoryWire.class, "count", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** One side of the wire: its connection and the receives it has posted, in order. */
    public static final class Port {
        private static final VarHandle HEAD;
        private static final VarHandle TAIL;

        static {
            try {
                var l = MethodHandles.lookup();
                HEAD = l.findVarHandle(Port.class, "head", long.class);
                TAIL = l.findVarHandle(Port.class, "tail", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        public ConnectionEngine conn;
        public Port peer;
        /**
         * Posted receive slots: written at {@code tail} by the poster, taken at {@code head}
         * by the peer's Sends; a power of two long (indexed with a mask: a division per
         * Send showed in the profile).
         */
        private final int[] posted;
        private final int mask;
        private final int receives;
        /** Taken so far: the peer's sending thread (one at a time, under its send lock) only. */
        private long head;
        /** Posted so far: this side's poster (one at a time, under its receive pool's lock) only. */
        private long tail;

        /** @param receives this side's receive buffers: the most it can have posted at once */
        public Port(int receives) {
            this.receives = receives;
            posted = new int[Integer.highestOneBit(Math.max(1, receives - 1)) << 1];
            mask = posted.length - 1;
        }

        /** Posts receives (the poster's thread, under its pool's lock). */
        public void post(int[] slots, int n) {
            long t = tail;
            if (t + n - (long) HEAD.getAcquire(this) > receives) {
                throw new IllegalStateException("more receives posted than buffers");
            }
            for (int i = 0; i < n; i++) {
                posted[(int) (t + i) & mask] = slots[i];
            }
            TAIL.setRelease(this, t + n); // ORDER: after the slots, which the peer reads once it sees the tail
        }

        /** The next posted receive, taken by a Send of the peer (its send lock held), or -1 if none. */
        int take() {
            long h = head;
            if (h == (long) TAIL.getAcquire(this)) {
                return -1;
            }
            int slot = posted[(int) h & mask];
            HEAD.setRelease(this, h + 1);
            return slot;
        }
    }

    // Deliveries queued behind the one running now, guarded by this wire's lock; the
    // arrays are a power of two long (indexed with a mask).
    private int[] kinds = new int[64];
    private int[] slots = new int[64];
    private int[] lengths = new int[64];
    private Port[] targets = new Port[64];
    private int head;
    /** Written under the lock; read without it by the draining thread (see {@link #send}). */
    private int count;
    private boolean draining;
    /**
     * The thread running deliveries now, or null; written under the lock, read without it:
     * a thread checking whether it is the one never sees itself unless it is (its own last
     * store here was its null when it stopped draining).
     */
    private Thread drainer;
    // The drainer's own lane: deliveries it queued while the locked queue was empty. Only
    // the drainer touches it, and it is empty whenever draining passes to another thread.
    private final int[] laneKinds = new int[8];
    private final int[] laneSlots = new int[8];
    private final int[] laneLengths = new int[8];
    private final Port[] laneTargets = new Port[8];
    private int laneHead;
    private int laneCount;

    /**
     * A Send of {@code buffer[0, length)} from {@code from} (its send lock held): copied into
     * the peer's next posted receive and delivered in order. False if the peer had no
     * receive posted (the caller ends the connection, like RNR with rnr_retry_count 0).
     */
    public boolean send(Port from, int slot, MemorySegment buffer, int length, boolean signalled) {
        Port to = from.peer;
        int recv = to.take();
        if (recv < 0) {
            return false;
        }
        // ORDER: copied before its delivery is queued (another thread may run the queue)
        MemorySegment.copy(buffer, 0, to.conn.receiveBuffer(recv), 0, length);
        Thread me = Thread.currentThread();
        // Queued by the draining thread itself with nothing queued under the lock: its own
        // lane. An earlier Send of this side queued by another thread is visible here (the
        // send lock orders the two), so none is passed; another side's has no order to keep.
        if (drainer == me && (int) COUNT.getOpaque(this) == 0 && laneCount + 2 <= laneKinds.length) {
            lane(RECEIVE, to, recv, length);
            if (signalled) {
                lane(SEND_DONE, from, slot, 0);
            }
            return true;
        }
        synchronized (this) {
            if (draining || count > 0) {
                enqueue(RECEIVE, to, recv, length);
                if (signalled) {
                    enqueue(SEND_DONE, from, slot, 0);
                }
                if (draining) {
                    return true;
                }
                recv = -1; // queued behind RDMA completions: drain them all in order
            } else if (signalled) {
                enqueue(SEND_DONE, from, slot, 0); // after the receive, delivered first below
            }
            draining = true;
            drainer = me;
        }
        if (recv >= 0) {
            deliver(RECEIVE, to, recv, length); // first in line: no trip through the queue
        }
        drain();
        return true;
    }

    /**
     * Queues a delivery to {@code target}; with {@code drain}, runs the queue on this thread
     * unless another thread (or an outer frame of this one) already does. An RDMA completion
     * is queued without draining: it is posted under the connection's RDMA lock, and the
     * Send that follows every RDMA job (or the delivery running now) drains it.
     */
    public void transmit(int kind, Port target, int slot, int length, boolean drain) {
        synchronized (this) {
            enqueue(kind, target, slot, length);
            if (draining || !drain) {
                return;
            }
            draining = true;
            drainer = Thread.currentThread();
        }
        drain();
    }

    /** Caller holds the lock. */
    private void enqueue(int kind, Port target, int slot, int length) {
        if (count == kinds.length) {
            grow();
        }
        int i = (head + count) & (kinds.length - 1);
        kinds[i] = kind;
        targets[i] = target;
        slots[i] = slot;
        lengths[i] = length;
        count++;
    }

    /** The drainer only. */
    private void lane(int kind, Port target, int slot, int length) {
        int i = (laneHead + laneCount) & (laneKinds.length - 1);
        laneKinds[i] = kind;
        laneTargets[i] = target;
        laneSlots[i] = slot;
        laneLengths[i] = length;
        laneCount++;
    }

    /**
     * Runs deliveries on this thread until none is left, its own lane first (what it holds
     * was queued while the locked queue was empty: older than anything there); the caller
     * set {@code draining}.
     */
    private void drain() {
        while (true) {
            int k;
            Port t;
            int sl;
            int len;
            if (laneCount > 0) {
                int i = laneHead;
                k = laneKinds[i];
                t = laneTargets[i];
                sl = laneSlots[i];
                len = laneLengths[i];
                laneTargets[i] = null;
                laneHead = (i + 1) & (laneKinds.length - 1);
                laneCount--;
            } else {
                synchronized (this) {
                    if (count == 0) {
                        draining = false;
                        drainer = null;
                        return;
                    }
                    k = kinds[head];
                    t = targets[head];
                    sl = slots[head];
                    len = lengths[head];
                    targets[head] = null;
                    head = (head + 1) & (kinds.length - 1);
                    count--;
                }
            }
            deliver(k, t, sl, len);
        }
    }

    /**
     * Runs one delivery. Whatever it throws ends that side's connection, as a verbs poller
     * that fails does, and the wire drains on: a throw out of here would leave {@code draining}
     * set (every later Send queued behind a drain that never runs) and reach the thread that
     * happened to send, which may be the peer's.
     */
    private static void deliver(int kind, Port target, int slot, int length) {
        try {
            switch (kind) {
                case RECEIVE -> target.conn.arrivals().received(slot, length);
                case SEND_DONE -> target.conn.arrivals().sendCompleted(slot);
                case RDMA_DONE -> target.conn.arrivals().rdmaCompleted(slot);
                default -> target.conn.onLinkLost(new RpcRdmaException("in-memory link disconnected"));
            }
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.WARNING, target.conn + ": completion dispatch failed; connection lost", e);
            target.conn.onLinkLost(new RpcRdmaException("completion dispatch failed: " + e, e));
        }
    }

    private void grow() {
        int n = kinds.length * 2;
        int[] k = new int[n];
        int[] sl = new int[n];
        int[] len = new int[n];
        Port[] t = new Port[n];
        for (int j = 0; j < count; j++) {
            int i = (head + j) & (kinds.length - 1);
            k[j] = kinds[i];
            sl[j] = slots[i];
            len[j] = lengths[i];
            t[j] = targets[i];
        }
        kinds = k;
        slots = sl;
        lengths = len;
        targets = t;
        head = 0;
    }
}
