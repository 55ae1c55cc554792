package org.rpcrdma.transport.link;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;
import org.rpcrdma.transport.rpc.CallTimer;

/**
 * The one owner of a connection's failure (≈ Linux {@code xprt_force_disconnect}): a post
 * that threw under a transport lock. Whoever sees the link fail forces the loss here,
 * under whatever lock it holds; the first cause wins. The loss (which fails calls: user
 * code runs) then runs where no lock is held: on the forcing thread as soon as it let go
 * of the requester's lock ({@link #settle}, so a caller or a completion sees its effect
 * at once), and in any case on a thread of its own (the kernel's close work). The
 * connection's loss is itself once-guarded, so whichever comes first does it.
 */
public final class LinkFailure {
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
    public LinkFailure(Consumer<Throwable> lose) {
        this.lose = lose;
    }

    /** The link failed ({@code t}): the connection is lost, once. Safe under any lock. */
    public void force(Throwable t) {
        if (CAUSE.compareAndSet(this, null, t)) {
            CallTimer.execute(() -> lose.accept(t));
        }
    }

    /** A thread that may have forced a failure holds no transport lock now: the loss runs here if it did. */
    public void settle() {
        Throwable t = cause;
        if (t != null) {
            lose.accept(t);
        }
    }

    /** The first cause forced, or null. */
    Throwable cause() {
        return cause;
    }
}
