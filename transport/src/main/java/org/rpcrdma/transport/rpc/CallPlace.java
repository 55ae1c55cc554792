package org.rpcrdma.transport.rpc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Where a call is in the requester that has it now: waiting to be sent (for a credit, RFC
 * 8166 §3.3.1, or a receive), sent and awaiting its reply by XID, or out of its structures;
 * and whether it was abandoned after its Send, so that it keeps its credit and XID slot
 * until the late reply (RFC 8166 §3.3.1). One per pooled {@link CallRequest}, made with it;
 * everything but {@link #owner()} is guarded by the owner's lock.
 */
final class CallPlace {
    private static final VarHandle OWNER;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(CallPlace.class, "owner", Requester.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int NEW = 0;
    private static final int WAITING = 1;
    private static final int SENT = 2;
    private static final int DONE = 3;

    /** The requester that has this call now (null while it is between connections). */
    private volatile Requester owner;
    private int state = NEW;
    /** Sent, then abandoned by the caller. */
    private boolean abandoned;

    /** A new call, in no requester yet (a release store: the submitting lock publishes it). */
    void reset() {
        OWNER.setRelease(this, (Requester) null);
        state = NEW;
        abandoned = false;
    }

    Requester owner() {
        return owner;
    }

    /** Between connections: no requester has it. */
    void leave() {
        owner = null;
    }

    /** Queued in {@code r} to be sent (a release store: the lock publishes it to the completion thread). */
    void queuedIn(Requester r) {
        OWNER.setRelease(this, r);
        state = WAITING;
    }

    boolean waitingToBeSent() {
        return state == WAITING;
    }

    boolean sent() {
        return state == SENT;
    }

    void markSent() {
        state = SENT;
    }

    /** Out of the requester's structures (answered, dropped, taken by a loss). */
    void markDone() {
        state = DONE;
    }

    /** Sent and then abandoned: it holds its credit until the late reply. Whether this marked it. */
    boolean markAbandonedInFlight() {
        if (state != SENT || abandoned) {
            return false;
        }
        abandoned = true;
        return true;
    }

    boolean abandonedInFlight() {
        return abandoned;
    }
}
