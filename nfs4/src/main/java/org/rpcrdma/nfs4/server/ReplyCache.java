package org.rpcrdma.nfs4.server;

import org.rpcrdma.nfs4.Nfs4;

/**
 * A session's fore channel slot table on the server (RFC 8881 §2.10.6.1): each slot's
 * last sequence ID and the reply it gave, kept when the requester asked
 * ({@code sa_cachethis}). A request with the next ID runs; one with the same ID is a
 * replay, answered from the cache (NFS4ERR_RETRY_UNCACHED_REP if it was not kept,
 * NFS4ERR_DELAY while the first is still running); any other ID is
 * NFS4ERR_SEQ_MISORDERED. Thread-safe.
 */
final class ReplyCache {
    /** What SEQUENCE does with a request: run it ({@code status} OK, no reply), answer it {@code reply}, or fail it. */
    record Admission(int status, CompoundCodec.Result reply) {
        static final Admission RUN = new Admission(Nfs4.NFS4_OK, null);
    }

    private final int[] sequence; // last ID seen on each slot: 0 before the first (whose ID is 1)
    private final boolean[] running;
    private final CompoundCodec.Result[] cached;

    ReplyCache(int slots) {
        sequence = new int[slots];
        running = new boolean[slots];
        cached = new CompoundCodec.Result[slots];
    }

    int slots() {
        return sequence.length;
    }

    synchronized Admission admit(int slot, int sequenceId) {
        if (slot < 0 || slot >= sequence.length) {
            return new Admission(Nfs4.NFS4ERR_BADSLOT, null);
        }
        if (sequenceId == sequence[slot] + 1) {
            sequence[slot] = sequenceId;
            running[slot] = true;
            cached[slot] = null;
            return Admission.RUN;
        }
        if (sequenceId == sequence[slot] && sequenceId != 0) {
            if (running[slot]) {
                return new Admission(Nfs4.NFS4ERR_DELAY, null);
            }
            CompoundCodec.Result r = cached[slot];
            return r != null ? new Admission(Nfs4.NFS4_OK, r) : new Admission(Nfs4.NFS4ERR_RETRY_UNCACHED_REP, null);
        }
        return new Admission(Nfs4.NFS4ERR_SEQ_MISORDERED, null);
    }

    /** The request on {@code slot} ended with {@code reply}; kept for a replay if {@code keep}. */
    synchronized void done(int slot, CompoundCodec.Result reply, boolean keep) {
        running[slot] = false;
        cached[slot] = keep ? reply : null;
    }

    /** The highest slot in use or last used (SEQUENCE's sr_highest_slotid is our table's top). */
    int highestSlotId() {
        return sequence.length - 1;
    }
}
