package org.rpcrdma.transport.link;

import java.util.Arrays;
import org.rpcrdma.transport.RpcRdmaException;

/**
 * The bookkeeping of a {@link CompletionGroup}: the entries reserved on each of its CQs and
 * the thread that polls each. Pure Java, guarded by the group. Each CQ has the same
 * {@code budget} (its entries less those kept for the shared receives and a spare): a QP is
 * placed only where all of its work requests fit, since a CQ overrun moves the CQ and every
 * QP on it to error.
 */
final class CqReservations {
    private final int threads;
    private final int budget;
    private int[] reserved;
    private int[] thread;
    private int queues;
    /** Threads whose poll failed: they poll nothing any more. */
    private final boolean[] failed;

    /** One CQ per thread to begin with. */
    CqReservations(int threads, int budget) {
        if (threads < 1 || budget < 1) {
            throw new IllegalArgumentException("threads " + threads + ", budget " + budget);
        }
        this.threads = threads;
        this.budget = budget;
        this.reserved = new int[threads];
        this.thread = new int[threads];
        for (int i = 0; i < threads; i++) {
            thread[i] = i;
        }
        this.queues = threads;
        this.failed = new boolean[threads];
    }

    /**
     * Reserves {@code entries} on the CQ with the fewest reserved (the lowest index among
     * equals) if it has room for them; else on a new CQ, index {@link #queues()} before the
     * call, polled by the thread with the fewest entries reserved over its CQs (as the
     * kernel's {@code ib_cq_pool_get} grows its pool): the caller opens it, or
     * {@link #abandon}s it. The threads stay as they are; only CQs are added.
     *
     * @return the CQ's index
     * @throws RpcRdmaException when {@code entries} exceed a whole CQ's budget, or every thread failed
     */
    int reserve(int entries) {
        if (entries > budget) {
            throw new RpcRdmaException("a connection needs " + entries + " completion queue entries, more than the "
                    + budget + " a whole completion queue of this server has: refused (fewer credits give room)");
        }
        int best = -1;
        for (int i = 0; i < queues; i++) {
            if (!failed[thread[i]] && (best < 0 || reserved[i] < reserved[best])) {
                best = i;
            }
        }
        if (best < 0 || budget - reserved[best] < entries) {
            best = grow();
        }
        reserved[best] += entries;
        return best;
    }

    /** A new CQ on the least loaded thread that has not failed (the lowest index among equals); its index. */
    private int grow() {
        long[] load = new long[threads];
        for (int i = 0; i < queues; i++) {
            load[thread[i]] += reserved[i];
        }
        int t = -1;
        for (int i = 0; i < threads; i++) {
            if (!failed[i] && (t < 0 || load[i] < load[t])) {
                t = i;
            }
        }
        if (t < 0) {
            throw new RpcRdmaException("every completion thread of this server failed (see the log): refused");
        }
        if (queues == reserved.length) {
            reserved = Arrays.copyOf(reserved, 2 * queues);
            thread = Arrays.copyOf(thread, 2 * queues);
        }
        reserved[queues] = 0;
        thread[queues] = t;
        return queues++;
    }

    /** Thread {@code t} stopped polling (its poll failed): its CQs take no new connection. */
    void threadFailed(int t) {
        failed[t] = true;
    }

    /** Forgets CQ {@code queue}, the last one, just reserved for {@code entries}: it could not be opened. */
    void abandon(int queue, int entries) {
        if (queue != queues - 1 || reserved[queue] != entries) {
            throw new IllegalStateException("queue " + queue + " is not the one just added: " + this);
        }
        queues--;
    }

    /** Gives back {@code entries} reserved on CQ {@code queue}. */
    void release(int queue, int entries) {
        reserved[queue] -= entries;
    }

    /** The thread that polls CQ {@code queue}. */
    int threadOf(int queue) {
        return thread[queue];
    }

    int queues() {
        return queues;
    }

    int threads() {
        return threads;
    }

    int reserved(int queue) {
        return reserved[queue];
    }

    @Override
    public String toString() {
        return "reserved " + Arrays.toString(Arrays.copyOf(reserved, queues)) + " of " + budget + " each, threads "
                + Arrays.toString(Arrays.copyOf(thread, queues));
    }
}
