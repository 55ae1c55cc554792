package org.rpcrdma.transport;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;

/**
 * The one owner of a connection's failure (≈ Linux {@code xprt_force_disconnect}): a post
 * that threw, a completion that could not be handled. Whoever sees the link fail forces
 * the loss here, under whatever transport lock it holds; the first cause wins, and the
 * connection's loss runs exactly once, off that thread, where no lock is held (it fails
 * calls: user code runs). Later causes are dropped: the loss already takes every call.
 */
final class LinkFailure {
    private static final VarHandle CAUSE;

    static {
        try {
            CAUSE = MethodHandles.lookup().findVarHandle(LinkFailure.class, "cause", Throwable.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Consumer<Throwable> lose;
    private volatile Throwable cause;

    /** @param lose the connection's loss (itself once-guarded: a loss may also come from the link) */
    LinkFailure(Consumer<Throwable> lose) {
        this.lose = lose;
    }

    /** The link failed ({@code t}): the connection is lost, once, on another thread. Safe under any lock. */
    void force(Throwable t) {
        if (CAUSE.compareAndSet(this, null, t)) {
            CallTimer.execute(() -> lose.accept(t));
        }
    }

    /** The first cause forced, or null. */
    Throwable cause() {
        return cause;
    }
}
