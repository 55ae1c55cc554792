package org.rpcrdma.transport.link;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.rpcrdma.transport.RpcRdmaException;

/**
 * The wire of an in-memory pair, behaving as a NIC does: a Send is copied into the next
 * receive the peer posted (or finds none: as with rnr_retry_count 0, the sender then ends
 * the connection) and completes locally at once; the peer takes it later, on its own
 * completion context ({@link Port}), never on the sender's stack or under the sender's
 * locks, so two threads sending at once cannot take the two sides' locks in opposite
 * orders. Each side's completions (a receive, a signalled Send's completion, an RDMA
 * completion, the link's loss) are delivered one at a time and in the order they were
 * queued, as a CQ polled under one lock.
 *
 * <p>Who runs a side's completions: a thread of that side, woken when something is queued
 * (the asynchronous shapes, handlers that answer later), or a caller blocked on a reply
 * that polls the wire itself while it waits ({@link #pollOnCaller}, as a busy-poll caller
 * polls its CQ), taking either side's completion context when it is free: a blocking call
 * answered at once then costs no thread hand-off, and while such a caller is about no
 * thread is woken. Kept in primitive arrays: a call and its reply allocate nothing here.
 */
public final class InMemoryWire implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(InMemoryWire.class.getName());
    public static final int RECEIVE = 0;
    public static final int SEND_DONE = 1;
    public static final int LOST = 2;
    public static final int RDMA_DONE = 3;
    /** Idle polls a waiting caller spins before it naps (then it is woken by what is queued). */
    private static final int SPINS = 2_000;
    /**
     * A side's thread rechecks its queue this often even unwoken: a caller that polls the
     * wire may block in a handler it runs (a nested blocking call), and what was queued for
     * the other side meanwhile woke no one.
     */
    private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private final Port first;
    private final Port second;
    /** Blocking callers about (between blockingCallStarts and blockingCallEnds) outside any delivery. */
    private final AtomicInteger pollers = new AtomicInteger();
    /** A polling caller that napped: what is queued while callers are about wakes it. */
    private volatile Thread napping;
    private volatile boolean closed;

    /** @param receivesFirst, receivesSecond each side's receive buffers: the most it can have posted at once */
    public InMemoryWire(int receivesFirst, int receivesSecond) {
        first = new Port(this, receivesFirst);
        second = new Port(this, receivesSecond);
        first.peer = second;
        second.peer = first;
    }

    public Port first() {
        return first;
    }

    public Port second() {
        return second;
    }

    /** Starts each side's completion thread; {@code name} names them. Both sides are bound to their connections. */
    public void start(String name) {
        first.start(name + " completions 1");
        second.start(name + " completions 2");
    }

    /**
     * A Send of {@code buffer[0, length)} from {@code from} (its send lock held): copied into
     * the peer's next posted receive and queued for the peer, its completion (if signalled)
     * queued for {@code from}. False if the peer had no receive posted.
     */
    public boolean send(Port from, int slot, MemorySegment buffer, int length, boolean signalled) {
        Port to = from.peer;
        int recv = to.take();
        if (recv < 0) {
            return false;
        }
        MemorySegment.copy(buffer, 0, to.conn.receiveBuffer(recv), 0, length);
        to.enqueue(RECEIVE, recv, length);
        if (signalled) {
            from.enqueue(SEND_DONE, slot, 0);
        }
        return true;
    }

    /** Queues a completion of {@code kind} for {@code target}. */
    public void transmit(int kind, Port target, int slot, int length) {
        target.enqueue(kind, slot, length);
    }

    /** A blocking call starts on this thread: it will poll, so no side's thread needs waking meanwhile. */
    public void blockingCallStarts() {
        if (!insideDelivery()) {
            pollers.incrementAndGet();
        }
    }

    /** The blocking call ended: what is still queued goes to the sides' threads. */
    public void blockingCallEnds() {
        if (!insideDelivery()) {
            pollers.decrementAndGet();
            first.kick();
            second.kick();
        }
    }

    /**
     * Runs either side's completions on the calling thread until {@code done} or the
     * deadline; false at once if this thread is running a delivery now (a handler's
     * blocking call: the side's thread or another caller delivers its reply).
     */
    public boolean pollOnCaller(BooleanSupplier done, long deadlineNanos) {
        if (insideDelivery()) {
            return false;
        }
        long nap = 1_000;
        for (int idle = 0; !done.getAsBoolean() && !closed; ) {
            if (first.drain() | second.drain()) {
                idle = 0;
                nap = 1_000;
                continue;
            }
            if (++idle < SPINS) {
                Thread.onSpinWait();
                continue;
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                break;
            }
            // nothing came for a while (a handler answering later): nap until something is queued
            Thread me = Thread.currentThread();
            napping = me;
            if (!first.pending() && !second.pending() && !done.getAsBoolean()) {
                LockSupport.parkNanos(this, Math.min(left, nap));
                nap = Math.min(nap * 2, TimeUnit.MILLISECONDS.toNanos(1));
            }
            if (napping == me) {
                napping = null;
            }
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt(); // the caller's wait sees it
                break;
            }
        }
        return true;
    }

    /**
     * Runs queued completions on the calling thread until neither side has any queued or
     * running (what a Send already posted sets off has all happened), or {@code timeoutNanos}
     * passed; false then, or at once if this thread is running a delivery.
     */
    public boolean settle(long timeoutNanos) {
        if (insideDelivery()) {
            return false;
        }
        long end = System.nanoTime() + timeoutNanos;
        while (first.pending() || second.pending() || first.role.isLocked() || second.role.isLocked()) {
            if (!(first.drain() | second.drain())) {
                if (System.nanoTime() - end > 0) {
                    return false;
                }
                Thread.yield();
            }
        }
        return true;
    }

    private boolean insideDelivery() {
        return first.role.isHeldByCurrentThread() || second.role.isHeldByCurrentThread();
    }

    /** Delivers what is queued, stops both sides' threads and waits for them (not for one closing from inside). */
    @Override
    public void close() {
        closed = true;
        first.stop();
        second.stop();
    }

    /**
     * One side of the wire: its connection, the receives it has posted (in order), and its
     * completion queue with the context that runs it.
     */
    public static final class Port {
        private final InMemoryWire wire;
        public Port peer;
        /** Where this side's completions go: its connection's engine. */
        public volatile CompletionSink conn;
        private final PostedReceives posted;
        /** This side's completion context: held by whoever runs its completions, one at a time. */
        final java.util.concurrent.locks.ReentrantLock role = new java.util.concurrent.locks.ReentrantLock();
        // Queued completions, guarded by this port's monitor; a power of two long.
        private int[] kinds = new int[64];
        private int[] slots = new int[64];
        private int[] lengths = new int[64];
        private int head;
        /** Written under the monitor; read without it to see whether polling is worth a lock. */
        private volatile int count;
        private Thread thread;
        /** The side's thread is parked or about to be (it rechecks the queue after setting this). */
        private volatile boolean parked;

        Port(InMemoryWire wire, int receives) {
            this.wire = wire;
            this.posted = new PostedReceives(receives);
        }

        /** Posts receives (the poster's thread, under its pool's lock). */
        public void post(int[] s, int n) {
            posted.post(s, n);
        }

        int take() {
            return posted.take();
        }

        void start(String name) {
            thread = new Thread(this::run, name);
            thread.setDaemon(true);
            thread.start();
        }

        void enqueue(int kind, int slot, int length) {
            boolean wake;
            synchronized (this) {
                if (count == kinds.length) {
                    grow();
                }
                int i = (head + count) & (kinds.length - 1);
                kinds[i] = kind;
                slots[i] = slot;
                lengths[i] = length;
                count = count + 1;
                // read under the lock, so a caller leaving (it counts down, then looks at
                // this queue under the lock) and this Send cannot both miss each other
                wake = wire.pollers.get() == 0;
            }
            if (wake) {
                if (parked) {
                    LockSupport.unpark(thread);
                }
            } else {
                Thread n = wire.napping;
                if (n != null) {
                    LockSupport.unpark(n);
                }
            }
        }

        boolean pending() {
            return count > 0;
        }

        /** Wakes this side's thread if something waits for it. */
        void kick() {
            boolean any;
            synchronized (this) {
                any = count > 0;
            }
            if (any && parked) {
                LockSupport.unpark(thread);
            }
        }

        /**
         * Runs this side's queued completions if its context is free; true if it ran any.
         * Whoever ran them rechecks after letting the context go, so nothing queued
         * meanwhile waits for a wake-up that went elsewhere.
         */
        boolean drain() {
            boolean ran = false;
            while (count > 0 && role.tryLock()) {
                try {
                    while (true) {
                        int k;
                        int sl;
                        int len;
                        synchronized (this) {
                            if (count == 0) {
                                break;
                            }
                            k = kinds[head];
                            sl = slots[head];
                            len = lengths[head];
                            head = (head + 1) & (kinds.length - 1);
                            count = count - 1;
                        }
                        deliver(k, sl, len);
                        ran = true;
                    }
                } finally {
                    role.unlock();
                }
            }
            return ran;
        }

        private void run() {
            while (true) {
                drain();
                parked = true;
                boolean idle;
                synchronized (this) {
                    idle = count == 0;
                }
                if (idle && wire.closed) {
                    parked = false;
                    return;
                }
                // queued but the context is held: its holder drains what was queued meanwhile
                if (idle || role.isLocked()) {
                    LockSupport.parkNanos(this, RECHECK_NANOS);
                }
                parked = false;
            }
        }

        void stop() {
            if (thread == null) {
                return;
            }
            LockSupport.unpark(thread);
            if (thread != Thread.currentThread()) {
                try {
                    thread.join(TimeUnit.SECONDS.toMillis(10));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /**
         * Runs one completion. Whatever it throws ends this side's connection, as a verbs
         * poller that fails does, and the queue runs on: a throw out of here would reach
         * whichever thread happened to poll.
         */
        private void deliver(int kind, int slot, int length) {
            try {
                switch (kind) {
                    case RECEIVE -> conn.received(slot, length);
                    case SEND_DONE -> conn.sendCompleted(slot);
                    case RDMA_DONE -> conn.rdmaCompleted(slot);
                    default -> conn.onLinkLost(new RpcRdmaException("in-memory link disconnected"));
                }
            } catch (Throwable e) {
                LOG.log(System.Logger.Level.WARNING, conn + ": completion dispatch failed; connection lost", e);
                conn.onLinkLost(new RpcRdmaException("completion dispatch failed: " + e, e));
            }
        }

        /** Caller holds the monitor. */
        private void grow() {
            int n = kinds.length * 2;
            int[] k = new int[n];
            int[] sl = new int[n];
            int[] len = new int[n];
            for (int j = 0; j < count; j++) {
                int i = (head + j) & (kinds.length - 1);
                k[j] = kinds[i];
                sl[j] = slots[i];
                len[j] = lengths[i];
            }
            kinds = k;
            slots = sl;
            lengths = len;
            head = 0;
        }
    }
}
