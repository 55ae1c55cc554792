package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.rpcrdma.transport.rpc.CallArguments;
import org.rpcrdma.transport.rpc.CallFuture;
import org.rpcrdma.transport.rpc.CallRequest;
import org.rpcrdma.transport.rpc.CallTimer;
import org.rpcrdma.transport.rpc.FutureShapes;
import org.rpcrdma.transport.rpc.ParkedCalls;

/**
 * The server's side of one client's backchannel, across that client's connections.
 *
 * <p>A server cannot connect to a client, so a backward call whose connection is lost
 * must wait for the client to connect again before it can be retransmitted (RFC 8167
 * §5.4). Calls made here are sent on the connection the client last enabled its
 * backchannel on; when that connection is lost, outstanding and new calls wait for the
 * client to come back, are then sent again on the new connection with the same XID. By
 * default they wait without limit, as the RFC requires of a backward requester (each call
 * still ends at its own timeout); with {@link RpcRdmaOptions#backchannelWaitMillis()} set
 * they fail after that long with {@link ConnectionLostException} naming the wait.
 *
 * <p>A backchannel whose client stayed away longer than the wait ({@link #IDLE_FORGET_MILLIS}
 * without one), with no call waiting, is forgotten by the server (so clients that come and
 * go do not accumulate); if that client returns, {@link RpcRdmaServer#backchannel} gives a
 * new one.
 *
 * <p>Our clients identify themselves when they enable the backchannel
 * ({@link RpcRdmaClient#clientId()}); an upper layer that knows its clients by other means
 * (an NFSv4.1 session) binds connections itself with {@link RpcRdmaServer#bindBackchannel}.
 */
public final class Backchannel implements RpcCaller {
    /** Without a wait limit: how long an absent client's backchannel with no call waiting is kept. */
    static final long IDLE_FORGET_MILLIS = 30_000;

    private final long clientId;
    private final RpcRdmaOptions options;
    private final long waitMillis;
    private final Forgetting forget;
    private final Object lock = new Object();
    private final ParkedCalls waiting;
    private Connection bound;
    private boolean closed;

    /**
     * @param options the server's (the wait for an absent client, the default call timeout, chunk limits)
     * @param forget  removes this backchannel from its server once its client is gone for good
     */
    Backchannel(long clientId, RpcRdmaOptions options, Forgetting forget) {
        this.clientId = clientId;
        this.options = options;
        this.waitMillis = options.backchannelWaitMillis();
        this.forget = forget;
        this.waiting = new ParkedCalls(toString(), waitMillis, "the client did not reconnect");
    }

    public long clientId() {
        return clientId;
    }

    /** The connection backward calls go to now, or null before the client first enabled it. */
    public Connection connection() {
        synchronized (lock) {
            return bound;
        }
    }

    /** Calls waiting for the client to reconnect. */
    public int waitingCalls() {
        return waiting.size();
    }

    /**
     * {@inheritDoc} A backward call, always made with {@link CallOptions#retry} (RFC 8167
     * §5.4): outstanding and new calls wait for a client that lost its connection and are
     * sent again, same XID, on the connection it comes back on. Besides the failures of
     * every call: {@link ConnectionLostException} when the client did not come back in time
     * or the server closed, {@link ChunksUnavailableException} for chunks to a client that
     * takes none.
     */
    @Override
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions o) {
        CallArguments.check(rpcCall, o, options.maxChunkBytes());
        CallOptions retried = o.retry() ? o : o.withRetry(true);
        long timeoutNanos = CallArguments.timeoutNanos(o, options.callTimeoutMillis());
        Connection c;
        synchronized (lock) {
            if (closed) {
                return CompletableFuture.failedFuture(new ConnectionLostException(this
                        + ": closed (the server closed, or the client stayed away and was forgotten)", null));
            }
            c = bound;
            if (c == null || !c.isOpen()) {
                CallRequest parked = CallRequest.issue(rpcCall, true);
                parked.maxReplyBytes(o.maxReplyBytes());
                parked.ddp(o.ddpArgument(), o.receptacle());
                CallFuture f = parked.future();
                waiting.issue(parked, timeoutNanos);
                return f;
            }
        }
        return c.call(rpcCall, retried);
    }

    /** {@inheritDoc} Through the call's future (a backward call may wait for its client). */
    @Override
    public ReceivedMessage callAndWait(MemorySegment rpcCall, CallOptions o) throws InterruptedException {
        return FutureShapes.await(call(rpcCall, o));
    }

    /** {@inheritDoc} Through the call's future (a backward call may wait for its client). */
    @Override
    public <T> T callAndRead(MemorySegment rpcCall, CallOptions o, ReplyReader<T> reader) throws InterruptedException {
        java.util.Objects.requireNonNull(reader, "reader");
        return FutureShapes.read(call(rpcCall, o), reader);
    }

    /** {@inheritDoc} Through the call's future (a backward call may wait for its client). */
    @Override
    public void call(MemorySegment rpcCall, CallOptions o, ReplyCallback callback) {
        java.util.Objects.requireNonNull(callback, "callback");
        FutureShapes.callback(call(rpcCall, o), callback);
    }

    /**
     * What the connection bound now allows (chunks only to a client that takes them,
     * RFC 8167 §5.3); 0 while no connection is bound.
     */
    @Override
    public int maxReplyBytes() {
        Connection c = connection();
        return c == null ? 0 : c.maxReplyBytes();
    }

    /**
     * How a server forgets a backchannel: it removes {@code b} if {@code closeIfAbandoned},
     * run within the removal's one atomic step, closed it; an enable bound in that same step
     * (RpcRdmaServer's map, per client) therefore never binds a closed one.
     */
    @FunctionalInterface
    interface Forgetting {
        void forget(Backchannel b, BooleanSupplier closeIfAbandoned);
    }

    /** The client enabled its backchannel on {@code c}: waiting calls go there now. */
    void bind(Connection c) {
        resend(c, attach(c));
    }

    /**
     * The first half of {@link #bind}, made within the server's step that keeps this
     * backchannel: {@code c} bound, and the calls that waited for it taken; null if closed.
     */
    List<CallRequest> attach(Connection c) {
        synchronized (lock) {
            if (closed) {
                return null;
            }
            bound = c;
            return waiting.takeAll();
        }
    }

    /** The second half of {@link #bind}, with no lock held: {@code calls} go to {@code c}. */
    void resend(Connection c, List<CallRequest> calls) {
        if (calls == null) {
            return;
        }
        c.engine().orphanSink(os -> adopt(c, os));
        calls.forEach(c.engine()::submit);
    }

    /** From a lost connection: its outstanding backward calls (maybe none). */
    private void adopt(Connection lost, List<CallRequest> orphans) {
        Connection now;
        boolean gone;
        synchronized (lock) {
            now = bound;
            gone = closed;
            if (!gone && (now == lost || now == null || !now.isOpen())) {
                waiting.park(orphans);
                CallTimer.schedule(() -> forgetIfAbandoned(lost), TimeUnit.MILLISECONDS.toNanos(forgetMillis()));
                return;
            }
        }
        if (gone) {
            fail(orphans, this + ": server closed");
        } else {
            orphans.forEach(now.engine()::submit); // the client is already back on another connection
        }
    }

    private long forgetMillis() {
        return waitMillis > 0 ? waitMillis : IDLE_FORGET_MILLIS;
    }

    /** The forget timer's task: the server forgets us if the client has not come back since {@code lost}. */
    void forgetIfAbandoned(Connection lost) {
        forget.forget(this, () -> closeIfAbandoned(lost));
    }

    /**
     * Closes this backchannel if its client has not come back since {@code lost} and no call
     * waits; whether it did. Runs within the server's removal of it ({@link Forgetting}).
     */
    private boolean closeIfAbandoned(Connection lost) {
        synchronized (lock) {
            if (closed || bound != lost) {
                return false; // closed, or the client came back
            }
            if (waiting.size() > 0) { // calls that ended at their own timeouts meanwhile are not counted
                // calls made while it was away still wait: look again when they have expired
                CallTimer.schedule(() -> forgetIfAbandoned(lost), TimeUnit.MILLISECONDS.toNanos(forgetMillis()));
                return false;
            }
            closed = true;
            return true;
        }
    }

    void close() {
        List<CallRequest> left;
        synchronized (lock) {
            closed = true;
            left = waiting.takeAll();
        }
        ParkedCalls.fail(left, new ConnectionLostException(this + ": server closed", null));
    }

    private static void fail(List<CallRequest> os, String why) {
        ConnectionLostException e = new ConnectionLostException(why, null);
        os.forEach(o -> o.fail(e));
    }

    @Override
    public String toString() {
        return "backchannel " + Long.toHexString(clientId);
    }
}
