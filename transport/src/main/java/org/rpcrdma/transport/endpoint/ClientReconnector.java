package org.rpcrdma.transport.endpoint;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.ConnectionLostException;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.rpc.CallArguments;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.rpc.CallRequest;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.Events;
import org.rpcrdma.transport.rpc.ParkedCalls;

/**
 * Which connection of an {@link RpcRdmaClient} is current, and what happens to calls between
 * connections. When the connection is lost (not closed by us) its calls that could not
 * complete are handed over here ({@link #adopt}); the client connects again if it has
 * something to carry over: calls not yet sent, calls made with {@code retry} (sent again
 * with the same XID, so a server's duplicate request cache recognises them), or an enabled
 * backchannel, which the forward requester must keep connected (RFC 8167 §5.4): how often
 * and for how long is {@link ReconnectBackoff}'s. Calls made meanwhile are parked and sent on
 * the new connection. Other outstanding calls fail with {@link ConnectionLostException};
 * with nothing to carry over, the lost connection is released at once.
 *
 * <p>Apart from {@link RpcRdmaClient} because this hand-over (one lock, the parked calls,
 * the reconnect thread) is one state machine; the client's public API only asks it for the
 * current connection, to place a call, or to close.
 */
public final class ClientReconnector<A> {
    private static final System.Logger LOG = System.getLogger(ClientReconnector.class.getName());

    /** What the reconnector does with one connection of its client (on verbs, a {@link ClientAttachment}). */
    public interface Attachments<A> {
        ConnectionEngine engine(A a);

        /** Releases it, once (called again, does nothing). */
        void destroy(A a);

        boolean destroyed(A a);
    }

    private static final Attachments<ClientAttachment> VERBS = new Attachments<>() {
        @Override
        public ConnectionEngine engine(ClientAttachment a) {
            return a.connection;
        }

        @Override
        public void destroy(ClientAttachment a) {
            a.destroy();
        }

        @Override
        public boolean destroyed(ClientAttachment a) {
            return a.destroyed();
        }
    };

    private final InetSocketAddress server;
    private final RpcRdmaOptions options;
    /** Makes a new connection (throws if it cannot). */
    private final Supplier<A> attach;
    private final Attachments<A> attachments;
    private final LongAdder reconnects = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final List<Consumer<Connection>> reconnected = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    /** Calls to send on the next connection. */
    private final ParkedCalls waiting;
    /** Lost connections being released, off the reconnect path. */
    private final Teardowns teardowns = new Teardowns("rpcrdma-client-teardown");
    private volatile A current;
    private boolean reconnecting;
    private boolean closed;
    private Thread reconnector;

    /** An {@link RpcRdmaClient}'s: its connections are {@link ClientAttachment}s. */
    public static ClientReconnector<ClientAttachment> verbs(InetSocketAddress server, RpcRdmaOptions options,
            Supplier<ClientAttachment> attach) {
        return new ClientReconnector<>(server, options, attach, VERBS);
    }

    public ClientReconnector(InetSocketAddress server, RpcRdmaOptions options, Supplier<A> attach,
            Attachments<A> attachments) {
        this.server = server;
        this.options = options;
        this.attach = attach;
        this.attachments = attachments;
        this.waiting = new ParkedCalls(server.toString(), 0, "");
    }

    /** The first connection (made before anything can be lost). */
    public void first(A a) {
        current = a;
    }

    /** The current connection (after a loss, the lost one until a reconnect succeeds). */
    public A current() {
        return current;
    }

    /** Successful reconnects so far. */
    public long reconnects() {
        return reconnects.sum();
    }

    /** {@code listener} is told of each new connection after a reconnect (see {@link RpcRdmaClient#onReconnect}). */
    public void onReconnect(Consumer<Connection> listener) {
        reconnected.add(listener);
    }

    /** Calls parked for the next connection now. */
    public int parked() {
        return waiting.size();
    }

    /** Reconnect attempts that failed so far. */
    public long failedReconnects() {
        return failures.sum();
    }

    /**
     * A forward call on the current connection, or, while the client is reconnecting (or
     * its connection is lost and reconnecting is allowed), parked for the next one; its
     * arguments checked first, whichever it is.
     */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions o) {
        CallArguments.check(rpcCall, o, options.maxChunkBytes());
        long timeoutNanos = CallArguments.timeoutNanos(o, options.callTimeoutMillis());
        A a;
        synchronized (lock) {
            if (closed) {
                return CompletableFuture.failedFuture(new ConnectionLostException("client to " + server + " is closed", null));
            }
            a = current;
            if ((reconnecting || !engine(a).isOpen()) && options.reconnectAttempts() > 0) {
                CallRequest c = CallRequest.issue(rpcCall, o.retry());
                // whether it needs chunks is decided on the connection it is sent on
                c.maxReplyBytes(o.maxReplyBytes());
                c.ddp(o.ddpArgument(), o.receptacle());
                CallFuture f = c.future();
                waiting.issue(c, timeoutNanos);
                startReconnect();
                return f;
            }
        }
        return engine(a).call(rpcCall, o, timeoutNanos);
    }

    /** The connection a call can go on now (open, not reconnecting, not closed), else null: the call would be parked. */
    public ConnectionEngine openConnection() {
        synchronized (lock) {
            A a = current;
            return !closed && !reconnecting && engine(a).isOpen() ? engine(a) : null;
        }
    }

    /** From a lost connection: the calls it could not complete (maybe none). */
    public void adopt(ConnectionEngine lost, List<CallRequest> orphans) {
        A release = null;
        ConnectionEngine next = null;
        synchronized (lock) {
            A cur = current;
            boolean carryOver = !closed && options.reconnectAttempts() > 0;
            if (cur == null) {
                // lost while the first connect was still in progress: nothing to carry over to
            } else if (carryOver && engine(cur) == lost
                    && (!orphans.isEmpty() || lost.backchannelHandler() != null || !waiting.isEmpty())) {
                waiting.park(orphans);
                startReconnect();
                return;
            } else if (!closed && engine(cur) != lost && engine(cur).isOpen() && !reconnecting) {
                next = engine(cur); // an old connection's late orphans: the new one takes them
            } else if (carryOver && engine(cur) != lost && !orphans.isEmpty()) {
                // an old connection's late orphans while the current one is gone too: they
                // wait for the next connection like the current one's (RFC 8167 §5.4)
                waiting.park(orphans);
                startReconnect();
                return;
            } else if (!closed && engine(cur) == lost && !reconnecting && !attachments.destroyed(cur)) {
                // nothing to carry over: release the QP, memory and poller now rather than at
                // the next call or close() (a busy poller would spin a core until then)
                release = cur;
            }
        }
        if (next != null) {
            orphans.forEach(next::submit); // no lock: a call failing here runs its caller's code
            return;
        }
        if (release != null) {
            A r = release;
            teardowns.release(() -> attachments.destroy(r));
        }
        ConnectionLostException e = new ConnectionLostException(lost + ": connection lost", null);
        orphans.forEach(o -> o.fail(e));
    }

    private ConnectionEngine engine(A a) {
        return attachments.engine(a);
    }

    /** Caller holds lock. */
    private void startReconnect() {
        if (reconnecting) {
            return;
        }
        reconnecting = true;
        reconnector = Thread.ofPlatform().daemon().name("rpcrdma-client-reconnect").start(this::reconnect);
    }

    private void reconnect() {
        A old = current;
        CallHandler backchannel = engine(old).backchannelHandler();
        boolean announce = engine(old).backchannel().announced();
        // The connection is already lost (its calls were handed to us or failed): release it
        // on a thread of its own, as xprtrdma does; the new connection does not wait for it.
        teardowns.release(() -> attachments.destroy(old));
        Events.state(engine(old).toString(), "RECONNECTING", server.toString());
        RuntimeException last = null;
        ReconnectBackoff backoff = new ReconnectBackoff(options, backchannel != null, System.nanoTime());
        int attempt = 0;
        while (backoff.mayAttempt(attempt + 1, System.nanoTime())) {
            attempt++;
            synchronized (lock) {
                if (closed) {
                    break;
                }
            }
            A a;
            try {
                a = attach.get();
            } catch (RuntimeException e) {
                last = e;
                failures.increment();
                LOG.log(Level.DEBUG, "reconnect {0} to {1} failed: {2}", attempt, server, e.getMessage());
                if (!backoff.mayAttempt(attempt + 1, System.nanoTime()) || !pause(backoff.delayMillis(attempt))) {
                    break;
                }
                continue;
            }
            List<CallRequest> resend;
            synchronized (lock) {
                if (closed) {
                    engine(a).close(0, TimeUnit.MILLISECONDS);
                    attachments.destroy(a);
                    break;
                }
                current = a;
                reconnecting = false;
                resend = waiting.takeAll();
            }
            reconnects.increment();
            Events.state(engine(a).toString(), "RECONNECTED", "attempt " + attempt + ", resending " + resend.size());
            LOG.log(Level.DEBUG, "reconnected to {0}, resending {1} calls", server, resend.size());
            if (backchannel != null && announce) {
                engine(a).enableBackchannel(backchannel) // first in line: credits start at 1
                        .exceptionally(t -> {
                            LOG.log(Level.WARNING, "re-enabling the backchannel on {0} failed: {1}", server, t.toString());
                            return null;
                        });
            } else if (backchannel != null) {
                engine(a).serveBackwardCalls(backchannel);
            }
            resend.forEach(engine(a)::submit);
            for (var l : reconnected) {
                try {
                    l.accept(engine(a).connection());
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "a reconnect listener failed: {0}", e.toString());
                }
            }
            return;
        }
        List<CallRequest> failed;
        synchronized (lock) {
            reconnecting = false;
            failed = waiting.takeAll(); // ORDER: with the flag, or a call parked in between would wait for nobody
        }
        ParkedCalls.fail(failed, new ConnectionLostException("connection to " + server + " lost; "
                + attempt + " reconnect attempts failed"
                + (last == null ? "" : ": " + last.getMessage()), last));
    }

    /** Waits {@code millis} unless closed meanwhile; false if closed or interrupted. */
    private boolean pause(long millis) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        synchronized (lock) {
            try {
                for (long left = millis; !closed && left > 0; left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())) {
                    lock.wait(left);
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return false;
            }
            return !closed;
        }
    }

    /**
     * Waits for the lost connections still being released (after {@link #close}); whether
     * they all were within the reconnect's bound: if not, what they use (the client's
     * registered buffers) must not be freed.
     */
    public boolean awaitReleases() {
        return teardowns.await(options.connectTimeoutMillis() * 3L + 5000L);
    }

    /**
     * Fails the parked calls and waits for a reconnect in progress to give up.
     *
     * @return the connection to close, or null if closed before
     */
    public A close() {
        List<CallRequest> failed;
        Thread r;
        synchronized (lock) {
            if (closed) {
                return null;
            }
            closed = true;
            lock.notifyAll(); // a reconnect pausing between attempts stops now
            failed = waiting.takeAll();
            r = reconnector;
        }
        ParkedCalls.fail(failed, new ConnectionLostException("client to " + server + " closed", null));
        if (r != null) {
            try {
                r.join(options.connectTimeoutMillis() * 3L + 5000L);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        }
        return current;
    }
}
