package org.rpcrdma.transport.rpc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * How one use of a pooled {@link CallRequest} ended, in one word: the state in the low two
 * bits, the use's generation above them. A use ends exactly once, by the one
 * compare-and-set out of PENDING; a future or a timer names the generation it was made for,
 * so it cannot end a later call on the same request.
 */
final class CallOutcome {
    private static final VarHandle WORD;

    static {
        try {
            WORD = MethodHandles.lookup().findVarHandle(CallOutcome.class, "word", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final int PENDING = 0;
    static final int REPLIED = 1;
    static final int FAILED = 2;
    static final int ABANDONED = 3;

    /** A new request has no use yet: nothing may end it. */
    private volatile int word = ABANDONED;

    /**
     * The next use: PENDING in a new generation, a release store (the request is its
     * caller's until it is submitted, and the requester's lock publishes it then).
     */
    void next() {
        WORD.setRelease(this, ((word >>> 2) + 1) << 2 | PENDING);
    }

    int generation() {
        return word >>> 2;
    }

    boolean isDone() {
        return (word & 3) != PENDING;
    }

    /** Whether the use ended as {@code o} (REPLIED, FAILED, ABANDONED). */
    boolean endedAs(int o) {
        return (word & 3) == o;
    }

    /** The one transition out of PENDING, of the current use. */
    boolean end(int to) {
        int s = word;
        return (s & 3) == PENDING && WORD.compareAndSet(this, s, s | to);
    }

    /** The same transition, only if the current use is still {@code gen}. */
    boolean end(int gen, int to) {
        return WORD.compareAndSet(this, gen << 2 | PENDING, gen << 2 | to);
    }

    /** The state's number, for a log line. */
    int state() {
        return word & 3;
    }
}
