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
    }

    /**
     * Reserves {@code entries} on the CQ with the fewest reserved (the lowest index among
     * equals), if it has room for them.
     *
     * @return the CQ's index
     * @throws RpcRdmaException naming the limit when no CQ has room
     */
    int reserve(int entries) {
        int best = -1;
        for (int i = 0; i < queues; i++) {
            if (best < 0 || reserved[i] < reserved[best]) {
                best = i;
            }
        }
        if (budget - reserved[best] < entries) {
            throw new RpcRdmaException("a connection needs " + entries + " completion queue entries and the "
                    + queues + " completion queues of this server have at most " + (budget - reserved[best])
                    + " left: refused (more completionThreads, or fewer credits, give room)");
        }
        reserved[best] += entries;
        return best;
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
