package org.rpcrdma.nfs4;

import java.util.concurrent.TimeUnit;

/**
 * The fore channel's slot table (RFC 8881 §2.10.6.1): one request at a time per slot, each
 * slot with its own sequence ID, starting at 1 for a new session. What happens to a
 * slot's sequence ID depends on how its request ended:
 * <ul>
 * <li>{@link Outcome#SEQUENCED}: the reply's SEQUENCE succeeded, so the server bumped the
 *     slot: the next request on it uses the next ID;
 * <li>{@link Outcome#NOT_SEQUENCED}: SEQUENCE itself failed (the server did not touch the
 *     slot, §2.10.6.1.2): the same ID again;
 * <li>{@link Outcome#UNKNOWN}: no reply (timeout, lost connection): we cannot know whether
 *     the server executed it, so the slot is retired for this session rather than risk a
 *     false retry (NFS4ERR_SEQ_FALSE_RETRY) or a replayed stale reply.
 * </ul>
 * Only slots up to the server's target highest slot ID are handed out (§18.46.3:
 * sr_target_highest_slotid). Thread-safe.
 */
final class SlotTable {
    /** How a request on a slot ended. */
    enum Outcome { SEQUENCED, NOT_SEQUENCED, UNKNOWN }

    /** A slot held for one request: its ID and the sequence ID to send, and the highest slot in use to report. */
    record Slot(int id, int sequenceId, int highestSlotId) {}

    private final int[] next; // sequence ID for the next request on each slot
    private final boolean[] busy;
    private final boolean[] retired;
    private int target;

    /** {@code slots}: the fore channel's negotiated ca_maxrequests. */
    SlotTable(int slots) {
        if (slots < 1) {
            throw new IllegalArgumentException("a session has at least one slot, given " + slots);
        }
        next = new int[slots];
        busy = new boolean[slots];
        retired = new boolean[slots];
        java.util.Arrays.fill(next, 1);
        target = slots - 1;
    }

    int slots() {
        return next.length;
    }

    /**
     * The lowest free slot up to the target, waiting up to {@code timeout} for one.
     *
     * @throws Nfs4Exception with NFS4ERR_BADSLOT when every slot is retired
     * @throws InterruptedException while waiting
     */
    synchronized Slot acquire(long timeout, TimeUnit unit) throws InterruptedException {
        long end = System.nanoTime() + unit.toNanos(timeout);
        while (true) {
            boolean usable = false;
            for (int i = 0; i <= target; i++) {
                if (retired[i]) {
                    continue;
                }
                usable = true;
                if (!busy[i]) {
                    busy[i] = true;
                    return new Slot(i, next[i], highestBusy());
                }
            }
            if (!usable) {
                throw new Nfs4Exception(Nfs4.NFS4ERR_BADSLOT, Nfs4.OP_SEQUENCE,
                        "every slot up to " + target + " is retired after requests with no reply");
            }
            long left = end - System.nanoTime();
            if (left <= 0) {
                throw new Nfs4Exception(Nfs4.NFS4ERR_DELAY, Nfs4.OP_SEQUENCE, "no free slot within the timeout");
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /** Gives {@code s} back after its request ended with {@code outcome}. */
    synchronized void release(Slot s, Outcome outcome) {
        if (!busy[s.id()] || next[s.id()] != s.sequenceId()) {
            throw new IllegalStateException("slot " + s.id() + " released twice");
        }
        busy[s.id()] = false;
        switch (outcome) {
            case SEQUENCED -> next[s.id()] = s.sequenceId() + 1;
            case NOT_SEQUENCED -> { }
            case UNKNOWN -> retired[s.id()] = true;
        }
        notifyAll();
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

    synchronized boolean isRetired(int id) {
        return retired[id];
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
