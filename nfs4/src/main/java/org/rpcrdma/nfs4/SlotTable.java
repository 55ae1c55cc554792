package org.rpcrdma.nfs4;

import java.util.concurrent.TimeUnit;

/**
 * The fore channel's slot table (RFC 8881 §2.10.6.1): one request at a time per slot, each
 * slot with its own sequence ID, starting at 1 for a new session. What happens to a
 * slot's sequence ID depends on how its request ended:
 * <ul>
 * <li>{@link Outcome#SEQUENCED}: the reply's SEQUENCE succeeded, so the server bumped the
 *     slot: the next request on it uses the next ID;
 * <li>{@link Outcome#NOT_SEQUENCED}: the server did not touch the slot: SEQUENCE itself
 *     failed (§2.10.6.1.2), the call was refused before anything was sent, or it was
 *     answered below NFS (RDMA_ERROR, an RPC error): the same ID again;
 * <li>{@link Outcome#UNKNOWN}: sent, no reply (timeout, lost connection): the server may or
 *     may not have executed it. The slot stays in use with the next ID (a request that was
 *     sent most likely arrived) but is <em>uncertain</em>: the server's answer to its next
 *     request settles it (§2.10.6.2);
 * <li>{@link Outcome#MISORDERED}: NFS4ERR_SEQ_MISORDERED. On an uncertain slot it means the
 *     lost request never ran: the ID goes back one and the request is sent again; on a
 *     certain slot it is the server's error to report;
 * <li>{@link Outcome#REPLAYED}: NFS4ERR_RETRY_UNCACHED_REP or NFS4ERR_SEQ_FALSE_RETRY: the
 *     server already executed a request with this ID (one we took for unsent): the next ID,
 *     and the request is sent again.
 * </ul>
 * Only slots up to the server's target highest slot ID are handed out (§18.46.3:
 * sr_target_highest_slotid). Thread-safe.
 */
final class SlotTable {
    /** How a request on a slot ended. */
    enum Outcome { SEQUENCED, NOT_SEQUENCED, UNKNOWN, MISORDERED, REPLAYED }

    /** A slot held for one request: its ID and the sequence ID to send, and the highest slot in use to report. */
    record Slot(int id, int sequenceId, int highestSlotId) {}

    private final int[] next; // sequence ID for the next request on each slot
    private final int[] lowest; // lowest ID the server may expect on the slot: below next while uncertain
    private final boolean[] busy;
    private int target;

    /** {@code slots}: the fore channel's negotiated ca_maxrequests. */
    SlotTable(int slots) {
        if (slots < 1) {
            throw new IllegalArgumentException("a session has at least one slot, given " + slots);
        }
        next = new int[slots];
        lowest = new int[slots];
        busy = new boolean[slots];
        java.util.Arrays.fill(next, 1);
        java.util.Arrays.fill(lowest, 1);
        target = slots - 1;
    }

    int slots() {
        return next.length;
    }

    /**
     * The lowest free slot up to the target, waiting up to {@code timeout} for one.
     *
     * @throws Nfs4Exception with NFS4ERR_DELAY when none is free within the timeout
     * @throws InterruptedException while waiting
     */
    synchronized Slot acquire(long timeout, TimeUnit unit) throws InterruptedException {
        long end = System.nanoTime() + unit.toNanos(timeout);
        while (true) {
            for (int i = 0; i <= target; i++) {
                if (!busy[i]) {
                    busy[i] = true;
                    return new Slot(i, next[i], highestBusy());
                }
            }
            long left = end - System.nanoTime();
            if (left <= 0) {
                throw new Nfs4Exception(Nfs4.NFS4ERR_DELAY, Nfs4.OP_SEQUENCE, "no free slot within the timeout");
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /**
     * Gives {@code s} back after its request ended with {@code outcome}.
     *
     * @return whether the request should be sent again (on whatever slot comes next): the
     *         server's answer corrected this slot's sequence ID, nothing was executed
     */
    synchronized boolean release(Slot s, Outcome outcome) {
        int id = s.id();
        if (!busy[id] || next[id] != s.sequenceId()) {
            throw new IllegalStateException("slot " + id + " released twice");
        }
        busy[id] = false;
        notifyAll();
        switch (outcome) {
            case SEQUENCED, REPLAYED -> {
                next[id] = s.sequenceId() + 1;
                lowest[id] = next[id];
                return outcome == Outcome.REPLAYED;
            }
            case NOT_SEQUENCED -> {
                return false;
            }
            case UNKNOWN -> {
                next[id] = s.sequenceId() + 1;
                return false;
            }
            case MISORDERED -> {
                if (s.sequenceId() > lowest[id]) {
                    next[id] = s.sequenceId() - 1;
                    return true;
                }
                return false;
            }
            default -> throw new AssertionError(outcome);
        }
    }

    /** The server's sr_target_highest_slotid: slots above it are not used until it rises (never past our table). */
    synchronized void target(int targetHighestSlotId) {
        target = Math.max(0, Math.min(targetHighestSlotId, next.length - 1));
        notifyAll();
    }

    /** The sequence ID the next request on slot {@code id} will carry. */
    synchronized int nextSequenceId(int id) {
        return next[id];
    }

    /** Whether slot {@code id} lost a request whose fate the server has not yet told. */
    synchronized boolean isUncertain(int id) {
        return lowest[id] < next[id];
    }

    private int highestBusy() {
        for (int i = busy.length - 1; i >= 0; i--) {
            if (busy[i]) {
                return i;
            }
        }
        return 0;
    }
}
