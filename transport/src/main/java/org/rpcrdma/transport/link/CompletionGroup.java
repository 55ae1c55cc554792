package org.rpcrdma.transport.link;

import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.rpcrdma.transport.LinkClosedException;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.verbs.CompletionChannel;
import org.rpcrdma.transport.verbs.CompletionQueue;
import org.rpcrdma.transport.verbs.Device;

/**
 * A server's completion queues on one device and the fixed set of threads that take
 * completions off them (Netty's event-loop group shape; ≈ the kernel's per-CPU CQ pool,
 * {@code ib_cq_pool_get}): a few CQs, each with its own completion channel (event mode) and
 * ONE thread running a {@link CompletionDriver} over a {@link CompletionPoller}, which hands
 * each completion to its connection by {@code qp_num}. Each accepted connection's QP is
 * assigned to the CQ with the fewest entries reserved ({@link #assign}), so the server's
 * threads and wake-ups follow the group's size, not its clients: an idle connection costs
 * no thread and no wake-up.
 *
 * <p>Sizing: a CQ overrun is fatal (the device moves the CQ, and every QP on it, to error),
 * so each CQ keeps room for every work request of every QP on it: the QP's send queue (and
 * its own receive queue), plus, once for the CQ, the whole shared receive queue (any of its
 * receives may complete on any CQ). A connection that would not fit any CQ is refused with
 * {@link RpcRdmaException} naming the limit.
 *
 * <p>On a shared CQ no caller leads (callers wait for the group's thread, see
 * {@link VerbsLink#pollOnCaller}), and handlers run on the group's thread: one that blocks
 * holds up every connection on its CQ (hand such work to another thread, as
 * {@code CallHandler.onExecutor} does).
 *
 * <p>Owned by the server: {@link #close} once every QP on it is destroyed (QPs, then CQs,
 * then channels).
 */
public final class CompletionGroup implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CompletionGroup.class.getName());
    /** CQ entries asked for at most (devices allow from 32 K, rxe, to millions). */
    private static final int MAX_ENTRIES = 1 << 16;
    /** Entries of each CQ kept free of reservations, for slack in a provider's accounting. */
    private static final int SPARE = 16;
    /** How long destroy waits for a retired qp_num of the CQ to drain before a new QP may have it. */
    private static final long REGISTER_WAIT_MILLIS = 2000;
    /** How long a link's destroy waits for the group's thread to finish a batch that may hold its completions. */
    private static final long QUIESCE_MILLIS = 2000;

    /** One CQ of the group, its channel, gate, poller and thread. */
    static final class Member {
        final int index;
        final LinkGate gate;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final CompletionPoller poller;
        final CompletionDriver driver;
        Thread thread;

        Member(int index, Device dev, int entries, boolean busyPoll, SharedReceiveHardware shared) {
            this.index = index;
            this.gate = new LinkGate(what -> new LinkClosedException("completion group closed; " + what + " refused"));
            CompletionChannel ch = busyPoll ? null : dev.createCompletionChannel();
            CompletionQueue q = null;
            try {
                q = dev.createCompletionQueue(entries, ch);
            } finally {
                if (q == null && ch != null) {
                    ch.close();
                }
            }
            this.channel = ch;
            this.cq = q;
            this.poller = new CompletionPoller(gate, q, ch, shared);
            this.driver = new CompletionDriver(poller, busyPoll);
        }
    }

    /**
     * A connection's place on one CQ of the group: {@link VerbsLink} registers its QP there,
     * and at destroy unregisters it, waits out a batch in dispatch, and gives the entries back.
     */
    final class Slot {
        private final Member m;
        private final int entries;
        private boolean released;

        private Slot(Member m, int entries) {
            this.m = m;
            this.entries = entries;
        }

        CompletionQueue cq() {
            return m.cq;
        }

        /**
         * Completions of {@code qpNum} go to {@code target}. Waits (briefly, rarely) while the
         * device reuses the number of a QP destroyed so recently that its last completions may
         * still be in the CQ.
         */
        void register(int qpNum, LinkCompletions target) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(REGISTER_WAIT_MILLIS);
            while (!m.poller.register(qpNum, target, false)) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new RpcRdmaException("qp_num " + qpNum + " of a QP just destroyed still has completions"
                            + " in completion queue " + m.index + " after " + REGISTER_WAIT_MILLIS + " ms");
                }
                LockSupport.parkNanos(200_000);
            }
        }

        /** The link is going: nothing more is dispatched to {@code target} once this returns (but from its own thread). */
        void unregister(int qpNum, LinkCompletions target) {
            m.poller.unregister(qpNum, target);
            m.poller.awaitQuiescent(QUIESCE_MILLIS);
        }

        /** After the QP was destroyed: its number frees once the CQ drained, its entries now. */
        void destroyed(int qpNum) {
            m.poller.destroyed(qpNum);
            release();
        }

        /** Gives the entries back (a QP that was never made, or one destroyed). Idempotent. */
        void release() {
            synchronized (CompletionGroup.this) {
                if (!released) {
                    released = true;
                    reservations.release(m.index, entries);
                }
            }
        }
    }

    private final Member[] members;
    /** Guarded by this. */
    private final CqReservations reservations;
    private final int entriesEach;
    private final int sharedReceiveEntries;
    private boolean closed;

    /**
     * Makes {@code threads} CQs on {@code dev} and starts a thread on each.
     *
     * @param busyPoll   the threads spin on their CQ; else they arm it and sleep on its channel
     * @param spinNanos  event mode: how long a thread keeps polling after a completion before sleeping
     * @param shared     the shared receive queue the QPs on these CQs take receives from, or null
     * @param counters   the server's counters (channel wake-ups)
     * @param threadName the threads' names, each followed by its index
     */
    public CompletionGroup(Device dev, int threads, boolean busyPoll, long spinNanos, SharedReceiveHardware shared,
            int sharedReceiveDepth, StatsCounters counters, String threadName) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads " + threads);
        }
        this.sharedReceiveEntries = shared == null ? 0 : sharedReceiveDepth;
        this.entriesEach = Math.min(MAX_ENTRIES, dev.queryLimits().maxCqe());
        int budget = entriesEach - sharedReceiveEntries - SPARE;
        if (budget <= 0) {
            throw new RpcRdmaException("a completion queue of " + entriesEach + " entries (the device's most)"
                    + " cannot hold the " + sharedReceiveEntries + " shared receives");
        }
        this.reservations = new CqReservations(threads, budget);
        this.members = new Member[threads];
        boolean ok = false;
        try {
            for (int i = 0; i < threads; i++) {
                members[i] = new Member(i, dev, entriesEach, busyPoll, shared);
                members[i].poller.countIn(counters);
                members[i].driver.adaptiveSpin(spinNanos);
            }
            for (int i = 0; i < threads; i++) {
                members[i].thread = members[i].driver.start(threadName + "-" + i);
            }
            ok = true;
        } finally {
            if (!ok) {
                close();
            }
        }
    }

    /**
     * Reserves {@code entries} on the CQ with the most room for a new connection's QP.
     *
     * @throws RpcRdmaException naming the limit when no CQ has that much room left
     */
    synchronized Slot assign(int entries) {
        if (closed) {
            throw new LinkClosedException("completion group closed");
        }
        int q;
        try {
            q = reservations.reserve(entries);
        } catch (RpcRdmaException e) {
            throw new RpcRdmaException(e.getMessage() + " (" + entriesEach + " entries each, " + sharedReceiveEntries
                    + " of them kept for the shared receives)");
        }
        return new Slot(members[q], entries);
    }

    /** The CQs (and threads) of the group. */
    public int queues() {
        return members.length;
    }

    /** Connections on the group's CQs now. */
    public int links() {
        int n = 0;
        for (Member m : members) {
            n += m == null ? 0 : m.poller.links();
        }
        return n;
    }

    /** Completions dropped because their QP was gone (its last, flushed work requests). */
    public long dropped() {
        long n = 0;
        for (Member m : members) {
            n += m == null ? 0 : m.poller.dropped();
        }
        return n;
    }

    /**
     * Stops the threads and frees the CQs, then the channels (every QP on them must be
     * destroyed by now). Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (Member m : members) {
            if (m != null) {
                m.gate.stop();
            }
        }
        for (Member m : members) {
            if (m == null) {
                continue;
            }
            Thread t = m.thread;
            if (t != null && t != Thread.currentThread()) {
                try {
                    t.join(QUIESCE_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (t.isAlive()) {
                    LOG.log(Level.WARNING, "completion thread {0} did not stop within {1} ms (in a call handler?);"
                            + " freeing its queue without it", t.getName(), QUIESCE_MILLIS);
                }
            }
            m.gate.free(() -> {
                LinkHardware.closeQuietly(m.cq, m.channel); // ORDER: the CQ before its channel
                m.poller.close();
                return null;
            });
        }
    }
}
