package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.rpcrdma.transport.core.Events;
import org.rpcrdma.transport.core.RpcRdmaStats;
import org.rpcrdma.transport.verbs.CmEvent;
import org.rpcrdma.transport.verbs.CmId;
import org.rpcrdma.transport.verbs.ConnectionParameters;
import org.rpcrdma.transport.verbs.EventChannel;
import org.rpcrdma.transport.wire.ConnectPrivate;
import org.rpcrdma.transport.wire.ConnectSettings;
import org.rpcrdma.transport.wire.Xdr;

/**
 * The client endpoint: initiates an RC connection through rdma_cm, sends RFC 8797 private
 * data with connect, applies the negotiated inline thresholds, and exposes the current
 * {@link Connection} (forward requester, backward responder once
 * {@link #enableBackchannel} was called).
 *
 * <p>When the connection is lost (not closed by us) the client connects again, up to
 * {@link RpcRdmaOptions#reconnectAttempts()} times, if it has something to carry over:
 * calls not yet sent, calls made with {@code retry} (sent again with the same XID, so a
 * server's duplicate request cache recognises them), or an enabled backchannel, which the
 * forward requester must keep connected (RFC 8167 §5.4). Other outstanding calls fail with
 * {@link ConnectionLostException}.
 *
 * <pre>{@code
 * try (RpcRdmaClient c = RpcRdmaClient.connect(new InetSocketAddress("10.0.0.1", 20049), RpcRdmaOptions.defaults())) {
 *     ReceivedMessage reply = c.call(rpcCallBytes).get();
 * }
 * }</pre>
 */
public final class RpcRdmaClient implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RpcRdmaClient.class.getName());
    private static final AtomicInteger GENERATION = new AtomicInteger();
    private static final SecureRandom RANDOM = new SecureRandom();

    /** One connection's rdma_cm id, event channel, hardware and CM watcher. */
    private static final class Attached {
        final EventChannel events;
        final CmId id;
        final VerbsLink link;
        final Connection connection;
        final Thread cmThread;
        volatile boolean stop;
        private boolean destroyed;

        Attached(EventChannel events, CmId id, VerbsLink link, Connection connection) {
            this.events = events;
            this.id = id;
            this.link = link;
            this.connection = connection;
            this.cmThread = Thread.ofPlatform().daemon().name("rpcrdma-client-cm").start(this::watch);
        }

        private void watch() {
            while (!stop) {
                CmEvent ev = events.poll(200);
                if (ev != null && (ev.type() == CmEvent.Type.DISCONNECTED || ev.type() == CmEvent.Type.DEVICE_REMOVAL)) {
                    connection.onLinkLost(new RpcRdmaException("rdma_cm " + ev.type()));
                    return;
                }
            }
        }

        /** Releases every verbs resource of this connection (after it is lost or closed). */
        synchronized void destroy() {
            if (destroyed) {
                return; // a failed reconnect leaves the lost one current; close() comes here again
            }
            destroyed = true;
            stop = true;
            if (Thread.currentThread() != cmThread) {
                try {
                    cmThread.join(3000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            link.destroy();
            id.close();
            events.close();
        }
    }

    private final InetSocketAddress server;
    private final RpcRdmaOptions options;
    private final long instanceId;
    private final LongAdder reconnects = new LongAdder();
    private final Object lock = new Object();
    /** Calls to send on the next connection (guarded by lock). */
    private final List<Connection.Orphan> waiting = new ArrayList<>();
    private volatile Attached current;
    private boolean reconnecting;
    private boolean closed;
    private Thread reconnector;

    private RpcRdmaClient(InetSocketAddress server, RpcRdmaOptions o) {
        this.server = server;
        this.options = o;
        long id;
        do {
            id = RANDOM.nextLong();
        } while (id == 0);
        this.instanceId = id;
    }

    /** Connects to {@code server} (port from the address; 20049 is the usual one). */
    public static RpcRdmaClient connect(InetSocketAddress server, RpcRdmaOptions o) {
        RpcRdmaClient c = new RpcRdmaClient(server, o);
        c.current = c.attach();
        return c;
    }

    private Attached attach() {
        RpcRdmaOptions o = options;
        EventChannel ec = new EventChannel();
        CmId id = null;
        VerbsLink link = null;
        boolean ok = false;
        try {
            id = ec.createId();
            id.resolveAddress(null, server, o.connectTimeoutMillis());
            expect(ec, CmEvent.Type.ADDR_RESOLVED);
            id.resolveRoute(o.connectTimeoutMillis());
            expect(ec, CmEvent.Type.ROUTE_RESOLVED);
            link = new VerbsLink(id, o.sendContexts(), o.inlineThreshold(), o.receiveBuffers(), o.inlineThreshold(),
                    o.busyPoll(), GENERATION.incrementAndGet());
            ConnectPrivate mine = new ConnectPrivate(false, o.inlineThreshold(), o.inlineThreshold());
            // rnr_retry_count 0 (a missing receive is an error, as in Linux), retry_count 7.
            // Like xprtrdma, offer the server RDMA Read resources (it reads Read chunks from
            // us) and initiate none ourselves; Linux svcrdma rejects a client offering 0.
            id.connect(new ConnectionParameters(mine.toBytes(), 8, 0, 7, 0));
            CmEvent est = expect(ec, CmEvent.Type.ESTABLISHED);
            ConnectSettings s = ConnectSettings.negotiate(mine, ConnectPrivate.decode(est.privateData()));
            Connection c = new Connection("client->" + server,
                    new Connection.Params(true, s.clientToServer(), s.serverToClient(), o.credits(), o.backwardCredits(),
                            s.remoteInvalidation(), o.signalEvery()),
                    o.receiveBuffers(), o.receiveBatch(), o.sendContexts(), link.sendMemory(), link.receiveMemory(),
                    new RpcRdmaStats());
            c.clientInstance(instanceId);
            c.orphanSink(os -> adopt(c, os));
            link.start(c, "rpcrdma-client-cq");
            LOG.log(Level.DEBUG, "connected to {0}: inline {1}/{2}", server, s.clientToServer(), s.serverToClient());
            Attached a = new Attached(ec, id, link, c);
            ok = true;
            return a;
        } finally {
            if (!ok) {
                if (link != null) {
                    link.destroy();
                }
                if (id != null) {
                    id.close();
                }
                ec.close();
            }
        }
    }

    private CmEvent expect(EventChannel ec, CmEvent.Type type) {
        CmEvent ev = ec.poll(options.connectTimeoutMillis() + 1000L);
        if (ev == null) {
            throw new RpcRdmaException("connect to " + server + ": no " + type + " within "
                    + options.connectTimeoutMillis() + " ms");
        }
        if (ev.type() != type) {
            throw new RpcRdmaException("connect to " + server + ": " + ev.type() + " (status " + ev.status()
                    + ") instead of " + type);
        }
        return ev;
    }

    /** The current connection (after a loss, the lost one until a reconnect succeeds). */
    public Connection connection() {
        return current.connection;
    }

    /** Identifies this client to our server across reconnects (sent when enabling the backchannel). */
    public long clientId() {
        return instanceId;
    }

    /** Successful reconnects so far. */
    public long reconnects() {
        return reconnects.sum();
    }

    /** {@link #call(MemorySegment, boolean)} without retry. */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall) {
        return call(rpcCall, false);
    }

    /**
     * Sends a forward call on the current connection. While the client is reconnecting the
     * call waits for the new connection. With {@code retry}, a call whose connection is lost
     * before its reply is sent again on the next connection with the same XID; without it,
     * such a call fails with {@link ConnectionLostException} (it may have been executed).
     */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, boolean retry) {
        Attached a;
        synchronized (lock) {
            if (closed) {
                return CompletableFuture.failedFuture(new ConnectionLostException("client to " + server + " is closed", null));
            }
            a = current;
            if ((reconnecting || !a.connection.isOpen()) && options.reconnectAttempts() > 0) {
                if (rpcCall.byteSize() < 4) {
                    return CompletableFuture.failedFuture(new IllegalArgumentException("not an ONC RPC CALL message"));
                }
                CompletableFuture<ReceivedMessage> f = new CompletableFuture<>();
                waiting.add(new Connection.Orphan(Xdr.getInt(rpcCall, 0),
                        MemorySegment.ofArray(rpcCall.toArray(ValueLayout.JAVA_BYTE)), f, retry));
                startReconnect();
                return f;
            }
        }
        return a.connection.call(rpcCall, retry);
    }

    /**
     * Serves backward calls with {@code handler} and grants the server the configured
     * backward credits (RFC 8167); kept across reconnects. Completes when the server has
     * acknowledged.
     */
    public CompletableFuture<Void> enableBackchannel(CallHandler handler) {
        return connection().enableBackchannel(handler);
    }

    /** From a lost connection: the calls it could not complete (maybe none). */
    private void adopt(Connection lost, List<Connection.Orphan> orphans) {
        synchronized (lock) {
            Attached cur = current;
            if (cur == null) {
                // lost while the first connect was still in progress: nothing to carry over to
            } else if (!closed && options.reconnectAttempts() > 0 && cur.connection == lost
                    && (!orphans.isEmpty() || lost.backchannelHandler() != null || !waiting.isEmpty())) {
                waiting.addAll(orphans);
                startReconnect();
                return;
            } else if (!closed && cur.connection != lost && cur.connection.isOpen()) {
                // an old connection's late orphans: the new one takes them
                orphans.forEach(cur.connection::resubmit);
                return;
            }
        }
        ConnectionLostException e = new ConnectionLostException(lost + ": connection lost", null);
        orphans.forEach(o -> o.future().completeExceptionally(e));
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
        Attached old = current;
        CallHandler backchannel = old.connection.backchannelHandler();
        old.destroy(); // the connection is already lost: its calls were handed to us or failed
        Events.state(old.connection.toString(), "RECONNECTING", server.toString());
        RuntimeException last = null;
        for (int attempt = 1; attempt <= options.reconnectAttempts(); attempt++) {
            synchronized (lock) {
                if (closed) {
                    break;
                }
            }
            Attached a;
            try {
                a = attach();
            } catch (RuntimeException e) {
                last = e;
                LOG.log(Level.DEBUG, "reconnect {0} to {1} failed: {2}", attempt, server, e.getMessage());
                try {
                    Thread.sleep(Math.min(100L * attempt, 1000L));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    break;
                }
                continue;
            }
            List<Connection.Orphan> resend;
            synchronized (lock) {
                if (closed) {
                    a.connection.close(0, java.util.concurrent.TimeUnit.MILLISECONDS);
                    a.destroy();
                    break;
                }
                current = a;
                reconnecting = false;
                resend = List.copyOf(waiting);
                waiting.clear();
            }
            reconnects.increment();
            Events.state(a.connection.toString(), "RECONNECTED", "attempt " + attempt + ", resending " + resend.size());
            LOG.log(Level.DEBUG, "reconnected to {0}, resending {1} calls", server, resend.size());
            if (backchannel != null) {
                a.connection.enableBackchannel(backchannel); // first in line: credits start at 1
            }
            resend.forEach(a.connection::resubmit);
            return;
        }
        List<Connection.Orphan> failed;
        synchronized (lock) {
            reconnecting = false;
            failed = List.copyOf(waiting);
            waiting.clear();
        }
        ConnectionLostException e = new ConnectionLostException("connection to " + server + " lost; "
                + options.reconnectAttempts() + " reconnect attempts failed"
                + (last == null ? "" : ": " + last.getMessage()), last);
        failed.forEach(o -> o.future().completeExceptionally(e));
    }

    /** Drains and fails pending calls, disconnects and releases every verbs resource. */
    @Override
    public void close() {
        List<Connection.Orphan> failed;
        Thread r;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            failed = List.copyOf(waiting);
            waiting.clear();
            r = reconnector;
        }
        ConnectionLostException e = new ConnectionLostException("client to " + server + " closed", null);
        failed.forEach(o -> o.future().completeExceptionally(e));
        if (r != null) {
            try {
                r.join(options.connectTimeoutMillis() * 3L + 5000L);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        }
        Attached a = current;
        a.connection.close();
        a.destroy();
    }
}
