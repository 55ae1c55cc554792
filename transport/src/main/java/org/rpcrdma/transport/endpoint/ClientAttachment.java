package org.rpcrdma.transport.endpoint;

import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.chunk.CallerBuffers;
import org.rpcrdma.transport.chunk.InvalidationPromise;
import org.rpcrdma.transport.link.VerbsLink;
import org.rpcrdma.transport.rpc.CallRequest;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ConnectionSizing;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.verbs.CmEvent;
import org.rpcrdma.transport.verbs.CmId;
import org.rpcrdma.transport.verbs.ConnectionParameters;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.EventChannel;
import org.rpcrdma.transport.wire.ConnectPrivate;
import org.rpcrdma.transport.wire.ConnectSettings;

/**
 * One connection of an {@link RpcRdmaClient}: its rdma_cm id, event channel, hardware
 * ({@link VerbsLink}), {@link ConnectionEngine} and CM watcher thread; or, with
 * {@code shareClientThreads}, a place on the JVM's {@link SharedClientThreads} (their
 * completion group and their event thread, to which the id moves once connected). {@link #attach} makes one:
 * resolves address and route, builds the link, posts receives, connects with RFC 8797
 * private data and applies the negotiated inline thresholds and RDMA depth; a failure
 * partway releases what it got. {@link #destroy} releases it once.
 *
 * <p>Apart from {@link RpcRdmaClient} because connecting is the same for the first
 * connection and every reconnect ({@link ClientReconnector}); the client's public API and
 * the hand-over between connections do not need its details.
 */
public final class ClientAttachment {
    private static final System.Logger LOG = System.getLogger(ClientAttachment.class.getName());
    private static final AtomicInteger GENERATION = new AtomicInteger();
    /** The cm thread's wait for an event: a backstop only, destroy wakes it (stopWaiting). */
    private static final long EVENT_WAIT_MILLIS = 60_000;

    /** Null with shared threads (the id's events go to theirs). */
    private final EventChannel events;
    final CmId id;
    public final VerbsLink link;
    public final ConnectionEngine connection;
    /** Null with shared threads. */
    private final Thread cmThread;
    /** The shared threads this connection uses, or null. */
    private final SharedClientThreads.Lease shared;
    private volatile boolean stop;
    private volatile boolean destroyed;

    private ClientAttachment(EventChannel events, CmId id, VerbsLink link, ConnectionEngine connection,
            SharedClientThreads.Lease shared) {
        this.events = shared == null ? events : null;
        this.id = id;
        this.link = link;
        this.connection = connection;
        this.shared = shared;
        this.cmThread = shared == null ? Thread.ofPlatform().daemon().name("rpcrdma-client-cm").start(this::watch)
                : null;
    }

    /**
     * Connects to {@code server}.
     *
     * @param registered  the client's registered buffers (outlive connections)
     * @param instanceId  identifies the client to our server across reconnects
     * @param orphanSink  takes a lost connection's calls it could not complete
     * @throws RpcRdmaException if connecting fails (nothing is left behind)
     */
    public static ClientAttachment attach(InetSocketAddress server, RpcRdmaOptions o, CallerBuffers registered,
            long instanceId, BiConsumer<ConnectionEngine, List<CallRequest>> orphanSink) {
        EventChannel ec = new EventChannel();
        CmId id = null;
        VerbsLink link = null;
        SharedClientThreads.Lease shared = null;
        boolean ok = false;
        try {
            id = ec.createId();
            id.resolveAddress(null, server, o.connectTimeoutMillis());
            expect(ec, CmEvent.Type.ADDR_RESOLVED, server, o);
            id.resolveRoute(o.connectTimeoutMillis());
            expect(ec, CmEvent.Type.ROUTE_RESOLVED, server, o);
            int receiveCount = ConnectionSizing.receiveBuffers(o, true);
            // The client does no RDMA Read or Write (RFC 8166 §3.4: the responder does them
            // all); it serves the server's RDMA Reads of its read chunks, as many at once as
            // the device allows (Linux's client offers 128).
            Device.Limits lim = id.device().queryLimits();
            int responderResources = Math.min(lim.maxQpRdAtom(), 255);
            // Backward calls with chunks (RFC 8167 §5.3) make us the responder that reads and
            // writes: only then do we ask for an RDMA Read depth of our own.
            int depth = ConnectionSizing.clientTakesBackwardChunks(o) ? Math.min(lim.maxQpInitRdAtom(), o.rdmaDepth()) : 0;
            if (o.shareClientThreads()) {
                shared = SharedClientThreads.acquire(id.device(), o);
            }
            link = new VerbsLink(id, ConnectionSizing.sendContexts(o, true), o.inlineThreshold(), receiveCount, o.inlineThreshold(),
                    o.busyPoll(), GENERATION.incrementAndGet(), o.chunkMemoryBytes(), depth, o.memoryWindows(), registered,
                    null, shared == null ? null : shared.group());
            link.adaptiveSpin(TimeUnit.MICROSECONDS.toNanos(o.pollSpinMicros()));
            // Receives go up before connect (RFC 8167 §4.3.1): the server may send as soon as
            // the connection is established, and with rnr_retry 0 a Send that finds no
            // receive kills it. Buffers are sized for our advertised threshold, the most the
            // negotiation can give.
            ConnectionAssembly assembly = new ConnectionAssembly(true, o, link, link.receiveMemory(),
                    new StatsCounters());
            assembly.receives().replenish(Math.max(1, o.backwardCredits()));
            // R (RFC 8797 §4.1): every rkey of ours may be invalidated by the peer's Send with
            // Invalidate (only when we expose through windows); we send one when it sets R too
            ConnectPrivate mine = new ConnectPrivate(InvalidationPromise.advertise(o.remoteInvalidation(),
                    link.windowsOnly()), o.inlineThreshold(), o.inlineThreshold());
            // rnr_retry_count 0 (a missing receive is an error, as in Linux), retry_count 6 (the
            // REQ's count rules both QPs: a dead link fails them, and we reconnect).
            // Like xprtrdma, offer the server RDMA Read resources (it reads Read chunks from
            // us) and initiate none ourselves; Linux svcrdma rejects a client offering 0.
            id.connect(new ConnectionParameters(mine.toBytes(), Math.max(1, responderResources), depth,
                    ConnectionParameters.RETRY_COUNT, 0));
            CmEvent est = expect(ec, CmEvent.Type.ESTABLISHED, server, o);
            // What the server lets us read at once (its responder resources; ib_cm hands the
            // REP's values from our point of view, so that is the event's initiator depth)
            // bounds our RDMA Read depth: nfsd accepts with 0, and then we take no chunked
            // backward calls (we could not pull their read chunks).
            link.limitRdmaDepth(est.initiatorDepth());
            ConnectSettings s = ConnectSettings.negotiate(mine, ConnectPrivate.decode(est.privateData()));
            link.rkeysInvalidatableByPeer(mine.remoteInvalidation()); // ORDER: before any call exposes memory
            VerbsLink l = link;
            ConnectionEngine c = assembly.connection("client->" + server, s, link.sendMemory(), id.peerAddress(), conn -> {
                conn.backchannel().clientInstance(instanceId);
                conn.backchannel().backwardChunks(l.rdmaDepth() > 0);
                conn.orphanSink(os -> orphanSink.accept(conn, os));
            });
            ConnectionAssembly.start(c, conn -> l.start(conn, "rpcrdma-client-cq"));
            LOG.log(Level.DEBUG, "connected to {0}: inline {1}/{2}", server, s.clientToServer(), s.serverToClient());
            ClientAttachment a = new ClientAttachment(ec, id, link, c, shared);
            if (shared != null) {
                // a disconnect may already wait on our channel: migrating moves it along
                shared.watch(id, a::onEvent);
                ec.close();
            }
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
                if (shared != null) {
                    shared.release();
                }
            }
        }
    }

    private static CmEvent expect(EventChannel ec, CmEvent.Type type, InetSocketAddress server, RpcRdmaOptions o) {
        CmEvent ev = ec.poll(o.connectTimeoutMillis() + 1000L);
        if (ev == null) {
            throw new RpcRdmaException("connect to " + server + ": no " + type + " within "
                    + o.connectTimeoutMillis() + " ms");
        }
        if (ev.type() != type) {
            String step = switch (type) {
                case ADDR_RESOLVED -> "rdma_resolve_addr";
                case ROUTE_RESOLVED -> "rdma_resolve_route";
                default -> "rdma_connect";
            };
            throw ev.failure(step, "connect to " + server + " awaiting " + type);
        }
        return ev;
    }

    private void watch() {
        while (!stop) {
            CmEvent ev = events.poll(EVENT_WAIT_MILLIS);
            if (ev != null && onEvent(ev)) {
                return;
            }
        }
    }

    /** True when {@code ev} ended the connection (no later event matters). */
    private boolean onEvent(CmEvent ev) {
        if (ev.type() == CmEvent.Type.DISCONNECTED || ev.type() == CmEvent.Type.DEVICE_REMOVAL) {
            connection.onLinkLost(new RpcRdmaException("rdma_cm " + ev.type()));
            return true;
        }
        return false;
    }

    boolean destroyed() {
        return destroyed;
    }

    /** Releases every verbs resource of this connection (after it is lost or closed). */
    public synchronized void destroy() {
        if (destroyed) {
            return; // a failed reconnect leaves the lost one current; close() comes here again
        }
        destroyed = true;
        stop = true;
        if (shared != null) {
            link.destroy();
            id.close();
            shared.release(); // ORDER: after the QP and the id, the last one closes the group and channel
            return;
        }
        events.stopWaiting(); // the cm thread returns from its wait at once and sees stop
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
