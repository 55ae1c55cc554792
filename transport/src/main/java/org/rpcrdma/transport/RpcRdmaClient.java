package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.rpcrdma.transport.core.Events;
import org.rpcrdma.transport.verbs.CmEvent;
import org.rpcrdma.transport.verbs.CmId;
import org.rpcrdma.transport.verbs.ConnectionParameters;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.EventChannel;
import org.rpcrdma.transport.wire.ConnectPrivate;
import org.rpcrdma.transport.wire.ConnectSettings;

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
 *
 * <p>Over 400 lines: connect (with the RDMA depth the server grants), reconnect with its
 * parking of calls between connections, the backchannel's re-enabling after a reconnect and
 * the registered buffers that outlive connections are one life cycle, kept in one place.
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
        private volatile boolean destroyed;

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
    private final RegisteredBuffers registered;
    private final Object lock = new Object();
    /** Calls to send on the next connection (guarded by lock). */
    private final List<OutgoingCall> waiting = new ArrayList<>();
    private volatile Attached current;
    private boolean reconnecting;
    private boolean closed;
    private Thread reconnector;

    private RpcRdmaClient(InetSocketAddress server, RpcRdmaOptions o) {
        this.server = server;
        this.options = o;
        this.registered = new RegisteredBuffers(o.registrationCacheBytes());
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
            int receiveCount = o.receiveBuffers(true);
            // The client does no RDMA Read or Write (RFC 8166 §3.4: the responder does them
            // all); it serves the server's RDMA Reads of its read chunks, as many at once as
            // the device allows (Linux's client offers 128).
            Device.Limits lim = id.device().queryLimits();
            int responderResources = Math.min(lim.maxQpRdAtom(), 255);
            // Backward calls with chunks (RFC 8167 §5.3) make us the responder that reads and
            // writes: only then do we ask for an RDMA Read depth of our own.
            int depth = o.clientTakesBackwardChunks() ? Math.min(lim.maxQpInitRdAtom(), o.rdmaDepth()) : 0;
            link = new VerbsLink(id, o.sendContexts(true), o.inlineThreshold(), receiveCount, o.inlineThreshold(),
                    o.busyPoll(), GENERATION.incrementAndGet(), o.chunkMemoryBytes(), depth, o.memoryWindows(), registered);
            link.adaptiveSpin(java.util.concurrent.TimeUnit.MICROSECONDS.toNanos(o.pollSpinMicros()));
            RpcRdmaStats stats = new RpcRdmaStats();
            // Receives go up before connect (RFC 8167 §4.3.1): the server may send as soon as
            // the connection is established, and with rnr_retry 0 a Send that finds no
            // receive kills it. Buffers are sized for our advertised threshold, the most the
            // negotiation can give.
            var receives = Connection.receivePool(link, link.receiveMemory(), receiveCount, o.inlineThreshold(),
                    o.receiveBatch(), stats);
            receives.replenish(Math.max(1, o.backwardCredits()));
            // R (RFC 8797 §4.1): we take a peer's Send with Invalidate, and may send one when it sets R too
            ConnectPrivate mine = new ConnectPrivate(o.remoteInvalidation(), o.inlineThreshold(), o.inlineThreshold());
            // rnr_retry_count 0 (a missing receive is an error, as in Linux), retry_count 7.
            // Like xprtrdma, offer the server RDMA Read resources (it reads Read chunks from
            // us) and initiate none ourselves; Linux svcrdma rejects a client offering 0.
            id.connect(new ConnectionParameters(mine.toBytes(), Math.max(1, responderResources), depth, 7, 0));
            CmEvent est = expect(ec, CmEvent.Type.ESTABLISHED);
            // What the server lets us read at once (its responder resources; ib_cm hands the
            // REP's values from our point of view, so that is the event's initiator depth)
            // bounds our RDMA Read depth: nfsd accepts with 0, and then we take no chunked
            // backward calls (we could not pull their read chunks).
            link.limitRdmaDepth(est.initiatorDepth());
            ConnectSettings s = ConnectSettings.negotiate(mine, ConnectPrivate.decode(est.privateData()));
            Connection c = new Connection("client->" + server,
                    new Connection.Params(true, s.clientToServer(), s.serverToClient(), o.credits(), o.backwardCredits(),
                            s.remoteInvalidation(), o.signalEvery(), o.callTimeoutMillis(), o.maxChunkBytes(),
                            o.maxChunkSegments()),
                    link, receives, o.sendContexts(true), link.sendMemory(), stats);
            c.clientInstance(instanceId);
            c.backwardChunks(link.rdmaDepth() > 0);
            c.orphanSink(os -> adopt(c, os));
            link.start(c, "rpcrdma-client-cq");
            c.start();
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

    /**
     * Native memory for zero-copy chunks ({@link RegisteredBuffer}): a call whose long-call
     * bytes, DDP argument or receptacle is a slice of it exposes that memory in place under
     * the call's own memory window, with no copy ({@link RpcRdmaStats#zeroCopyExposures}).
     * Registered now on the current connection; after a reconnect, on the new one at its
     * first use there. Close it when done (the client's close closes what is left).
     */
    public RegisteredBuffer allocateRegistered(long bytes) {
        RegisteredBuffer b = registered.allocate(bytes);
        try {
            current.link.register(b);
        } catch (RuntimeException e) {
            // the connection is going: the next one registers it at its first use
            LOG.log(Level.DEBUG, "registering {0} now failed: {1}", b, e.getMessage());
        }
        return b;
    }

    /** This client's registered-buffer allocator (counts of live and freed buffers). */
    public RegisteredBuffers registeredBuffers() {
        return registered;
    }

    /** A forward call with the default timeout ({@link RpcRdmaOptions#callTimeoutMillis}), without retry. */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall) {
        return call(rpcCall, false);
    }

    /** {@link #call(MemorySegment, long, TimeUnit, boolean)} with the default timeout. */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, boolean retry) {
        return call(rpcCall, options.callTimeoutMillis(), TimeUnit.MILLISECONDS, retry);
    }

    /**
     * Sends a forward call on the current connection; the timeout ({@code 0}: none) runs
     * from now, across reconnects. While the client is reconnecting the call waits for the
     * new connection. With {@code retry}, a call whose connection is lost before its reply
     * is sent again on the next connection with the same XID; without it, such a call
     * fails with {@link ConnectionLostException} (it may have been executed). Cancelling
     * the future abandons the call (see {@link Connection#call(MemorySegment)}).
     */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, long timeout, TimeUnit unit, boolean retry) {
        Attached a;
        synchronized (lock) {
            if (closed) {
                return CompletableFuture.failedFuture(new ConnectionLostException("client to " + server + " is closed", null));
            }
            a = current;
            if ((reconnecting || !a.connection.isOpen()) && options.reconnectAttempts() > 0) {
                OutgoingCall c = Connection.parked(rpcCall, retry, server.toString(), unit.toNanos(timeout));
                if (!c.isDone()) {
                    waiting.add(c);
                    startReconnect();
                }
                return c;
            }
        }
        return a.connection.call(rpcCall, unit.toNanos(timeout), retry);
    }

    /**
     * Serves backward calls with {@code handler}, grants the server the configured
     * backward credits (RFC 8167 §4.1) and tells our server so (see
     * {@link Connection#enableBackchannel}); repeated on every reconnect. Completes when the
     * server has acknowledged.
     */
    public CompletableFuture<Void> enableBackchannel(CallHandler handler) {
        return connection().enableBackchannel(handler);
    }

    /**
     * Serves backward calls with {@code handler} without telling the server (a foreign
     * server learns it from the upper layer: NFSv4.1 CREATE_SESSION); kept across reconnects.
     */
    public void serveBackwardCalls(CallHandler handler) {
        connection().serveBackwardCalls(handler);
    }

    /** From a lost connection: the calls it could not complete (maybe none). */
    private void adopt(Connection lost, List<OutgoingCall> orphans) {
        Attached release = null;
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
            } else if (!closed && cur.connection == lost && !reconnecting && !cur.destroyed) {
                // nothing to carry over: release the QP, memory and poller now rather than at
                // the next call or close() (a busy poller would spin a core until then)
                release = cur;
            }
        }
        if (release != null) {
            Attached r = release;
            Thread.ofPlatform().daemon().name("rpcrdma-client-release").start(r::destroy);
        }
        ConnectionLostException e = new ConnectionLostException(lost + ": connection lost", null);
        orphans.forEach(o -> o.fail(e));
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
        boolean announce = old.connection.backchannelAnnounced();
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
            List<OutgoingCall> resend;
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
            if (backchannel != null && announce) {
                a.connection.enableBackchannel(backchannel) // first in line: credits start at 1
                        .exceptionally(t -> {
                            LOG.log(Level.WARNING, "re-enabling the backchannel on {0} failed: {1}", server, t.toString());
                            return null;
                        });
            } else if (backchannel != null) {
                a.connection.serveBackwardCalls(backchannel);
            }
            resend.forEach(a.connection::resubmit);
            return;
        }
        List<OutgoingCall> failed;
        synchronized (lock) {
            reconnecting = false;
            failed = List.copyOf(waiting);
            waiting.clear();
        }
        ConnectionLostException e = new ConnectionLostException("connection to " + server + " lost; "
                + options.reconnectAttempts() + " reconnect attempts failed"
                + (last == null ? "" : ": " + last.getMessage()), last);
        failed.forEach(o -> o.fail(e));
    }

    /** Drains and fails pending calls, disconnects and releases every verbs resource. */
    @Override
    public void close() {
        List<OutgoingCall> failed;
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
        failed.forEach(o -> o.fail(e));
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
        registered.close(); // ORDER: after the link deregistered them
    }
}
