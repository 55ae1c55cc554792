package org.rpcrdma.transport.rpc;

import java.util.ArrayDeque;

/**
 * The {@link CallRequest}s of one connection, used again from call to call (a few: one
 * per call outstanding at once). Bounded so a burst does not pin memory; beyond it requests
 * are dropped to the garbage collector. The first thread to take a request keeps one here
 * without the lock when it gives it back itself: a blocking caller that takes its own
 * reply off the queue takes and returns its request on its own thread, call after call (two
 * lock acquisitions fewer per call). Requests another thread gives back (a poller
 * completing callback calls) go to the shared list, where the owner finds them.
 */
final class CallRequestPool {
    private static final int MAX = 256;
    private static final long NO_OWNER = -1;
    private final ArrayDeque<CallRequest> free = new ArrayDeque<>();
    /** Id of the thread that may use {@link #kept}; NO_OWNER until the first take. */
    private volatile long owner = NO_OWNER;
    /** The owner's free request, or null: read and written by the owner only. */
    private CallRequest kept;

    /** A request to start as a new call. */
    CallRequest take() {
        CallRequest c = null;
        long me = Thread.currentThread().threadId();
        if (owner == me || owner == NO_OWNER && claim(me)) {
            c = kept;
            kept = null;
        }
        if (c == null) {
            synchronized (this) {
                c = free.pollFirst();
            }
        }
        return c != null ? c : new CallRequest(this);
    }

    /** {@code c} ended and the transport holds it no more. */
    void put(CallRequest c) {
        if (owner == Thread.currentThread().threadId()) {
            if (kept == null) {
                kept = c;
                return;
            }
        }
        synchronized (this) {
            if (free.size() < MAX) {
                free.addFirst(c);
            }
        }
    }

    private synchronized boolean claim(long me) {
        if (owner == NO_OWNER) {
            owner = me;
        }
        return owner == me;
    }

    /** Free requests (the owner's kept one read racily from another thread: for tests, when calls are quiet). */
    synchronized int free() {
        return free.size() + (kept != null ? 1 : 0);
    }
}
