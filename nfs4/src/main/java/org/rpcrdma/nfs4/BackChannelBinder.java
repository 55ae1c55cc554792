package org.rpcrdma.nfs4;

import java.lang.System.Logger.Level;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.rpcrdma.transport.Connection;

/**
 * Keeps the session's back channel on the connection the client is on. CREATE_SESSION
 * binds the first connection; a connection made after a loss serves our callbacks at once
 * but the server sends none there until BIND_CONN_TO_SESSION names it for the back channel
 * (RFC 8167 §3.2, §6; RFC 8881 §18.34), so it is bound when the transport reports it, and
 * again whenever SEQUENCE says the server has no back channel path to us
 * (SEQ4_STATUS_CB_PATH_DOWN, _SESSION: RFC 8881 §18.46.3), at most every
 * {@link #REBIND_MILLIS} for a connection already bound. Binds run one at a time on a
 * thread of their own, never on the transport's or a caller's.
 *
 * <p>SEQ4_STATUS_BACKCHANNEL_FAULT asks for a new session, which this client does not make
 * (no state recovery): it is logged once and left in {@code lastSequenceFlags()}.
 */
final class BackChannelBinder {
    private static final System.Logger LOG = System.getLogger(BackChannelBinder.class.getName());
    /** A connection already bound whose server still reports the path down is bound again at most this often. */
    static final long REBIND_MILLIS = 10_000;

    /** Sends BIND_CONN_TO_SESSION on the current connection. */
    @FunctionalInterface
    interface Bind {
        SessionOps.BindResult bind() throws InterruptedException;
    }

    private final Supplier<Connection> current;
    private final Bind bind;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "nfs4-bind-conn");
        t.setDaemon(true);
        return t;
    });
    private final LongAdder binds = new LongAdder();
    private Connection bound;
    /** The connection the bind under way is for (null when none runs). */
    private Connection binding;
    private boolean running;
    private boolean again;
    private boolean closed;
    private boolean faultLogged;
    private long lastNanos = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(REBIND_MILLIS);

    BackChannelBinder(Supplier<Connection> current, Bind bind) {
        this.current = current;
        this.bind = bind;
    }

    /** CREATE_SESSION bound {@code c}'s back channel. */
    synchronized void bound(Connection c) {
        bound = c;
    }

    /** The transport made {@code c} after losing the connection. */
    void reconnected(Connection c) {
        LOG.log(Level.DEBUG, "reconnected on {0}: binding its back channel", c);
        schedule();
    }

    /** SEQUENCE's sr_status_flags. */
    void sequenceFlags(int flags) {
        if ((flags & Nfs4.SEQ4_STATUS_BACKCHANNEL_FAULT) != 0) {
            synchronized (this) {
                if (faultLogged) {
                    return;
                }
                faultLogged = true;
            }
            LOG.log(Level.WARNING, "the server reports a back channel fault (SEQ4_STATUS_BACKCHANNEL_FAULT): it wants"
                    + " a new session, which this client does not make; callbacks may not arrive");
        }
        if ((flags & Nfs4.SEQ4_STATUS_CB_PATH_FLAGS) == 0) {
            return;
        }
        synchronized (this) {
            Connection c = current.get();
            if (c == bound && System.nanoTime() - lastNanos < TimeUnit.MILLISECONDS.toNanos(REBIND_MILLIS)) {
                return;
            }
            if (running && c == binding) {
                return; // flags from before that bind took effect: it is on its way
            }
        }
        LOG.log(Level.DEBUG, "SEQUENCE status flags 0x{0}: the server has no back channel path; binding", Integer.toHexString(flags));
        schedule();
    }

    /** Connections bound by BIND_CONN_TO_SESSION for the back channel. */
    long binds() {
        return binds.sum();
    }

    private void schedule() {
        synchronized (this) {
            if (closed) {
                return;
            }
            if (running) {
                again |= current.get() != binding; // the bind under way is for the connection before this one
                return;
            }
            running = true;
            binding = current.get();
        }
        try {
            worker.execute(this::run);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed meanwhile: nothing to bind any more
        }
    }

    private void run() {
        Connection c;
        synchronized (this) {
            c = binding;
        }
        try {
            SessionOps.BindResult r = bind.bind();
            if (r.backChannel()) {
                synchronized (this) {
                    bound = c;
                }
                binds.increment();
                LOG.log(Level.DEBUG, "{0} bound to the session for channels {1}", c, r.dir());
            } else {
                LOG.log(Level.WARNING, "BIND_CONN_TO_SESSION on {0}: the server bound it for the fore channel only"
                        + " (CDFS4 {1}); callbacks cannot reach this client", c, r.dir());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "BIND_CONN_TO_SESSION on {0} failed: {1}", c, e.toString());
        } finally {
            boolean rerun;
            synchronized (this) {
                lastNanos = System.nanoTime();
                rerun = again && !closed && !Thread.currentThread().isInterrupted();
                again = false;
                running = rerun;
                binding = rerun ? current.get() : null;
            }
            if (rerun) {
                try {
                    worker.execute(this::run);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    // closed meanwhile
                }
            }
        }
    }

    void close() {
        synchronized (this) {
            closed = true;
        }
        worker.shutdownNow();
    }
}
