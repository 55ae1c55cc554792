package org.rpcrdma.transport.link;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
 * {@code ib_cq_pool_get}): each thread runs a {@link CompletionDriver} over the CQs it polls
 * ({@link GroupPoller}, one completion channel per thread in event mode), which hands each
 * completion to its connection by {@code qp_num}. Each accepted connection's QP is assigned
 * to the CQ with the fewest entries reserved ({@link #assign}), so the server's threads and
 * wake-ups follow the group's size, not its clients: an idle connection costs no thread and
 * no wake-up.
 *
 * <p>Sizing: a CQ overrun is fatal (the device moves the CQ, and every QP on it, to error),
 * so each CQ keeps room for every work request of every QP on it: the QP's send queue (and
 * its own receive queue), plus, once for the CQ, the whole shared receive queue (any of its
 * receives may complete on any CQ). A connection that fits no CQ gets a new one, polled by
 * the thread with the least reserved ({@link CqReservations}): the group grows by CQs, never
 * by threads, and keeps its CQs until it is closed. Only a connection larger than a whole CQ
 * is refused, with {@link RpcRdmaException} naming the limit.
 *
 * <p>On a shared CQ no caller leads (callers wait for the group's thread, see
 * {@link VerbsLink#pollOnCaller}), and handlers run on the group's thread: one that blocks
 * holds up every connection on its CQs (hand such work to another thread, as
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

    /** One thread of the group, its gate and channel, and the CQs it polls. */
    private static final class Member {
        final LinkGate gate;
        final CompletionChannel channel;
        final GroupPoller queues;
        final CompletionDriver driver;

        Member(Device dev, boolean busyPoll, long spinNanos, StatsCounters counters, Runnable onFailure) {
            this.gate = new LinkGate(what -> new LinkClosedException("completion group closed; " + what + " refused"));
            this.channel = busyPoll ? null : dev.createCompletionChannel();
            this.queues = new GroupPoller(gate, channel, counters, onFailure);
            this.driver = new CompletionDriver(queues, busyPoll, false); // callers never lead on a shared CQ
            driver.adaptiveSpin(spinNanos);
        }
    }

    /** One CQ of the group and its poller (dispatch by qp_num). */
    private record Queue(int index, CompletionQueue cq, CompletionPoller poller, Member thread) {}

    /**
     * A connection's place on one CQ of the group: {@link VerbsLink} registers its QP there,
     * and at destroy unregisters it, waits out a batch in dispatch, and gives the entries back.
     */
    final class Slot {
        private final Queue q;
        private final int entries;
        private boolean released;

        private Slot(Queue q, int entries) {
            this.q = q;
            this.entries = entries;
        }

        CompletionQueue cq() {
            return q.cq();
        }

        /**
         * Completions of {@code qpNum} go to {@code target}. Waits (briefly, rarely) while the
         * device reuses the number of a QP destroyed so recently that its last completions may
         * still be in the CQ.
         */
        void register(int qpNum, LinkCompletions target) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(REGISTER_WAIT_MILLIS);
            while (!q.poller().register(qpNum, target, false)) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new RpcRdmaException("qp_num " + qpNum + " of a QP just destroyed still has completions"
                            + " in completion queue " + q.index() + " after " + REGISTER_WAIT_MILLIS + " ms");
                }
                LockSupport.parkNanos(200_000);
            }
            if (q.thread().queues.failed()) { // its thread failed meanwhile: no one would take the completions
                q.poller().unregister(qpNum, target);
                throw new RpcRdmaException("the completion thread of completion queue " + q.index() + " failed");
            }
            q.thread().driver.wake(); // it sleeps while none of its CQs has a connection
        }

        /** The link is going: nothing more is dispatched to {@code target} once this returns (but from its own thread). */
        void unregister(int qpNum, LinkCompletions target) {
            q.poller().unregister(qpNum, target);
            q.poller().awaitQuiescent(QUIESCE_MILLIS);
        }

        /** After the QP was destroyed: its number frees once the CQ drained, its entries now. */
        void destroyed(int qpNum) {
            q.poller().destroyed(qpNum);
            release();
        }

        /** Gives the entries back (a QP that was never made, or one destroyed). Idempotent. */
        void release() {
            synchronized (CompletionGroup.this) {
                if (!released) {
                    released = true;
                    reservations.release(q.index(), entries);
                }
            }
        }
    }

    private final Device dev;
    private final SharedReceiveHardware shared;
    private final Member[] members;
    /** The CQs by index (guarded by this; read unlocked only to count). */
    private final List<Queue> queues = new CopyOnWriteArrayList<>();
    /** Guarded by this. */
    private final CqReservations reservations;
    private final int entriesEach;
    private final int sharedReceiveEntries;
    private boolean closed;

    /**
     * Makes {@code threads} CQs on {@code dev} (a cm_id's: the group keeps a wrapper of its own) and starts a
     * thread polling each.
     *
     * @param busyPoll   the threads spin on their CQs; else they arm them and sleep on their channel
     * @param spinNanos  event mode: how long a thread keeps polling after a completion before sleeping
     * @param shared     the shared receive queue the QPs on these CQs take receives from, or null
     * @param counters   the server's counters (channel wake-ups)
     * @param threadName the threads' names, each followed by its index
     */
    public CompletionGroup(Device dev, int threads, boolean busyPoll, long spinNanos, SharedReceiveHardware shared,
            int sharedReceiveDepth, StatsCounters counters, String threadName, int maxEntries) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads " + threads);
        }
        // its own wrapper: the cm_id whose device this is may close long before the group
        this.dev = dev.borrow();
        this.shared = shared;
        this.sharedReceiveEntries = shared == null ? 0 : sharedReceiveDepth;
        this.entriesEach = Math.min(Math.min(maxEntries, MAX_ENTRIES), this.dev.queryLimits().maxCqe());
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
                int t = i;
                members[i] = new Member(this.dev, busyPoll, spinNanos, counters, () -> threadFailed(t));
                openQueue(i);
            }
            for (int i = 0; i < threads; i++) {
                members[i].driver.start(threadName + "-" + i);
            }
            ok = true;
        } finally {
            if (!ok) {
                close();
            }
        }
    }

    /** Opens the next CQ, polled by thread {@code t}: armed before its thread sees it (it may be asleep). */
    private Queue openQueue(int t) {
        Member m = members[t];
        CompletionQueue q = dev.createCompletionQueue(entriesEach, m.channel);
        CompletionPoller p;
        try {
            if (m.channel != null) {
                q.requestNotify(false);
            }
            p = new CompletionPoller(m.gate, q, m.channel, shared);
        } catch (RuntimeException e) {
            q.close();
            throw e;
        }
        Queue added = new Queue(queues.size(), q, p, m);
        queues.add(added);
        m.queues.add(p);
        return added;
    }

    /**
     * Reserves {@code entries} on the CQ with the most room for a new connection's QP, or on
     * a new CQ when none has room.
     *
     * @throws RpcRdmaException naming the limit when the connection is larger than a whole CQ,
     *                          or the device refused a new CQ
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
        if (q == queues.size()) {
            int t = reservations.threadOf(q);
            try {
                openQueue(t);
            } catch (RuntimeException e) {
                reservations.abandon(q, entries);
                throw e;
            }
            LOG.log(Level.DEBUG, "completion group grew to {0} completion queues ({1} of them on thread {2})",
                    queues.size(), members[t].queues.pollers().length, t);
        }
        return new Slot(queues.get(q), entries);
    }

    /** Thread {@code t}'s poll failed and it ended: its CQs take no new connection (the others go on). */
    private synchronized void threadFailed(int t) {
        reservations.threadFailed(t);
        LOG.log(Level.ERROR, "completion thread {0} failed: the connections on its completion queues are lost,"
                + " and new ones go to the other threads", t);
    }

    /** The CQs of the group: one per thread, more once connections filled those. */
    public int queues() {
        return queues.size();
    }

    /** The threads of the group (fixed). */
    public int threads() {
        return members.length;
    }

    /** Connections on the group's CQs now. */
    public int links() {
        int n = 0;
        for (Queue q : queues) {
            n += q.poller().links();
        }
        return n;
    }

    /** Completions dropped because their QP was gone (its last, flushed work requests). */
    public long dropped() {
        long n = 0;
        for (Queue q : queues) {
            n += q.poller().dropped();
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
                m.driver.wake(); // one without connections sleeps until woken
            }
        }
        for (Member m : members) {
            if (m == null) {
                continue;
            }
            m.driver.awaitStopped(QUIESCE_MILLIS);
            m.gate.free(() -> {
                for (CompletionPoller p : m.queues.pollers()) {
                    p.closeQueue(); // ORDER: the CQs before their channel
                }
                LinkHardware.closeQuietly(m.channel);
                return null;
            });
        }
        dev.close(); // the wrapper only: librdmacm keeps the context
    }
}
