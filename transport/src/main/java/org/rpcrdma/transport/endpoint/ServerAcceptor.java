package org.rpcrdma.transport.endpoint;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.chunk.CallerBuffers;
import org.rpcrdma.transport.chunk.InvalidationPromise;
import org.rpcrdma.transport.link.CompletionGroup;
import org.rpcrdma.transport.link.SharedReceiveHardware;
import org.rpcrdma.transport.link.VerbsLink;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ConnectionSizing;
import org.rpcrdma.transport.rpc.SharedCredits;
import org.rpcrdma.transport.rpc.SharedReceives;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.verbs.CmEvent;
import org.rpcrdma.transport.verbs.CmId;
import org.rpcrdma.transport.verbs.ConnectionParameters;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.EventChannel;
import org.rpcrdma.transport.wire.ConnectPrivate;
import org.rpcrdma.transport.wire.ConnectSettings;

/**
 * A server's side of rdma_cm: the listening id, its event channel and the thread that takes
 * its events; each CONNECT_REQUEST accepted with RFC 8797 private data (after its QP exists
 * and its receives are posted, so the client's first call always finds one), each
 * DISCONNECTED dropped, and at close every connection, link and id released once, then the
 * completion groups and shared receive queues their QPs used (made per device at the
 * first connection there).
 *
 * <p>Apart from the server's API class because accepting is the life cycle of connections
 * and of the native objects they share, while the API holds what the server offers
 * (handler, backchannels, stats); each connection is put together by
 * {@link ConnectionAssembly} like a client's.
 */
public final class ServerAcceptor implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ServerAcceptor.class.getName());
    private static final AtomicInteger GENERATION = new AtomicInteger(1 << 20);
    /**
     * How long {@link #close()} waits for the rdma_cm thread to finish what it is doing (an
     * accept takes seconds under emulation; {@code onConnect} is user code) before it gives up.
     */
    private static final long CM_THREAD_STOP_MILLIS = 60_000;
    /** The rdma_cm thread's wait for an event: a backstop only, close wakes it (stopWaiting). */
    private static final long EVENT_WAIT_MILLIS = 60_000;
    /** How long {@link #close()} waits for lost connections still being released (a QP's teardown on a dead link took ~55 s on Soft-RoCE). */
    private static final long RELEASE_WAIT_MILLIS = 120_000;

    private record Accepted(CmId id, VerbsLink link, ConnectionEngine engine) {}

    private final RpcRdmaOptions options;
    private final StatsCounters stats;
    private final CallerBuffers callerBuffers;
    private final Consumer<ConnectionEngine> role;
    private final Consumer<Connection> onConnect;
    private final EventChannel events = new EventChannel();
    private final CmId listener;
    private final Map<Long, Accepted> byId = new ConcurrentHashMap<>();
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    /** Per device name, the shared receive queue its connections draw on (sharedReceives > 0); made on first use. */
    private final Map<String, SharedReceiveHardware> sharedReceives = new ConcurrentHashMap<>();
    /** Per device name, the completion queues and threads its connections complete on (completionThreads > 0). */
    private final Map<String, CompletionGroup> completionGroups = new ConcurrentHashMap<>();
    private final Thread cmThread;
    /** Lost connections being released, off the rdma_cm thread that accepts the others. */
    private final Teardowns teardowns = new Teardowns("rpcrdma-server-teardown");
    /** At most this many entries in each CQ of a completion group (the group's own cap applies too). */
    private final int completionQueueEntries;
    private volatile boolean closing;

    /**
     * Listens on {@code bind} and starts taking connection requests.
     *
     * @param stats         the server's counters, which all its connections count in
     * @param callerBuffers the server's registered buffers, exposed in place by each connection
     * @param role          what the server adds to each connection (handler, backchannel listener)
     * @param onConnect     called with each new connection before its first call is served (may be null)
     */
    public ServerAcceptor(InetSocketAddress bind, RpcRdmaOptions o, StatsCounters stats, CallerBuffers callerBuffers,
            Consumer<ConnectionEngine> role, Consumer<Connection> onConnect) {
        this(bind, o, stats, callerBuffers, role, onConnect, Integer.MAX_VALUE);
    }

    /**
     * As above, the completion group's CQs of at most {@code completionQueueEntries} entries
     * (tests: small CQs make the group grow after a few connections).
     */
    public ServerAcceptor(InetSocketAddress bind, RpcRdmaOptions o, StatsCounters stats, CallerBuffers callerBuffers,
            Consumer<ConnectionEngine> role, Consumer<Connection> onConnect, int completionQueueEntries) {
        this.completionQueueEntries = completionQueueEntries;
        this.options = o;
        this.stats = stats;
        this.callerBuffers = callerBuffers;
        this.role = role;
        this.onConnect = onConnect;
        CmId l = null;
        try {
            l = events.createId();
            l.bind(bind);
            l.listen(64);
        } catch (RuntimeException e) {
            if (l != null) {
                l.close();
            }
            events.close();
            throw e;
        }
        this.listener = l;
        this.cmThread = Thread.ofPlatform().daemon().name("rpcrdma-server-cm").start(this::run);
    }

    public int port() {
        return listener.localPort();
    }

    /** Connections currently open. */
    public List<Connection> connections() {
        return List.copyOf(connections);
    }

    /** Whether {@code c} is an open connection of this server. */
    public boolean serves(Connection c) {
        return connections.contains(c);
    }

    /**
     * Bytes of registered receive memory: the shared receive queues' (the same however many
     * clients) plus each connection's own, when it has some.
     */
    public long receiveMemoryBytes() {
        long n = 0;
        for (SharedReceiveHardware h : sharedReceives.values()) {
            n += h.registeredBytes();
        }
        for (Accepted a : byId.values()) {
            MemorySegment m = a.link().receiveMemory();
            n += m == null ? 0 : m.byteSize();
        }
        return n;
    }

    /** Completion queues of the server's completion groups (a group grows by CQs, not threads): 0 without any. */
    public int completionQueues() {
        int n = 0;
        for (CompletionGroup g : completionGroups.values()) {
            n += g.queues();
        }
        return n;
    }

    /** Completions the completion groups dropped because their connection was gone. */
    public long completionsDropped() {
        long n = 0;
        for (CompletionGroup g : completionGroups.values()) {
            n += g.dropped();
        }
        return n;
    }

    private void run() {
        while (!closing) {
            CmEvent ev;
            try {
                ev = events.poll(EVENT_WAIT_MILLIS);
            } catch (RuntimeException e) {
                if (!closing) {
                    LOG.log(Level.WARNING, "rdma_cm event channel failed", e);
                }
                return;
            }
            if (ev == null) {
                continue;
            }
            try {
                switch (ev.type()) {
                    case CONNECT_REQUEST -> accept(ev);
                    case DISCONNECTED, DEVICE_REMOVAL -> drop(ev.id(), "rdma_cm " + ev.type());
                    case ESTABLISHED -> LOG.log(Level.DEBUG, "connection established");
                    default -> LOG.log(Level.DEBUG, "rdma_cm event {0}", ev);
                }
            } catch (VirtualMachineError e) {
                throw e;
            } catch (RuntimeException | Error e) {
                // user callbacks run here too (the backchannel listener): this thread must
                // outlive them, or the server accepts no connection again
                LOG.log(Level.WARNING, "rdma_cm event " + ev + " failed", e);
            }
        }
    }

    /**
     * Builds everything for a connection request, then accepts it: the QP and its receives
     * first (the client may send as soon as it is established), the connection bound to
     * its link and poller before {@code onConnect} sees it. Any failure on the way rejects
     * the request (the client fails fast with the reason) and releases what was built.
     */
    private void accept(CmEvent ev) {
        CmId id = ev.id();
        RpcRdmaOptions o = options;
        VerbsLink link = null;
        ConnectionEngine c = null;
        SharedReceives shared = null;
        boolean ok = false;
        try {
            int receiveCount = ConnectionSizing.receiveBuffers(o, false);
            // RDMA Read depth (RFC 8166 §3.4: the responder reads the requester's read
            // chunks): no more than the client offered as its responder resources, the
            // device allows as initiator, and our option. rdma_cm hands the passive side the
            // REQ's values from its own point of view (ib_cm's cm_format_req_event swaps them):
            // the event's initiator depth is the client's responder resources. We serve no
            // RDMA Reads of the client's (it never reads ours): our responder resources
            // follow its initiator depth.
            Device.Limits lim = id.device().queryLimits();
            int depth = Math.min(ev.initiatorDepth(), Math.min(lim.maxQpInitRdAtom(), o.rdmaDepth()));
            int responderResources = Math.min(ev.responderResources(), Math.min(lim.maxQpRdAtom(), 255));
            LOG.log(Level.DEBUG, "connect request: RDMA Read depth {0} (client offered {1}), responder resources {2}",
                    depth, ev.initiatorDepth(), responderResources);
            SharedReceiveHardware srq = null;
            if (o.sharedReceives() > 0) {
                srq = sharedReceives.computeIfAbsent(id.device().name(), d -> new SharedReceiveHardware(id.device(),
                        o.sharedReceives(), o.inlineThreshold(), o.receiveBatch(), ConnectionSizing.sharedCredits(o),
                        GENERATION.incrementAndGet()));
                SharedCredits.Share share = srq.credits().join();
                if (share == null) {
                    throw new RpcRdmaException("serving " + srq.credits().active() + " connections, as many as "
                            + o.sharedReceives() + " shared receives back");
                }
                shared = new SharedReceives(srq.pool(), srq.credits(), share);
            }
            CompletionGroup group = null;
            if (o.completionThreads() > 0) {
                SharedReceiveHardware q = srq;
                group = completionGroups.computeIfAbsent(id.device().name(), d -> new CompletionGroup(id.device(),
                        o.completionThreads(), o.busyPoll(), TimeUnit.MICROSECONDS.toNanos(o.pollSpinMicros()), q,
                        o.sharedReceives(), stats, "rpcrdma-server-cq", completionQueueEntries));
            }
            link = new VerbsLink(id, ConnectionSizing.sendContexts(o, false), o.inlineThreshold(), receiveCount,
                    o.inlineThreshold(), o.busyPoll(), GENERATION.incrementAndGet(), o.chunkMemoryBytes(), depth,
                    o.memoryWindows(), callerBuffers, srq, group);
            link.adaptiveSpin(TimeUnit.MICROSECONDS.toNanos(o.pollSpinMicros()));
            // R (RFC 8797 §4.1): every rkey of ours may be invalidated by the peer's Send with
            // Invalidate (only when we expose through windows); we send one when it sets R too
            ConnectPrivate mine = new ConnectPrivate(InvalidationPromise.advertise(o.remoteInvalidation(),
                    link.windowsOnly()), o.inlineThreshold(), o.inlineThreshold());
            ConnectSettings s = ConnectSettings.negotiate(ConnectPrivate.decode(ev.privateData()), mine);
            link.rkeysInvalidatableByPeer(mine.remoteInvalidation()); // ORDER: before a backward call exposes memory
            VerbsLink l = link;
            ConnectionAssembly assembly = shared != null ? new ConnectionAssembly(false, o, link, shared, stats)
                    : new ConnectionAssembly(false, o, link, link.receiveMemory(), stats);
            c = assembly.connection("server<-" + id.handle().address(), s, link.sendMemory(), id.peerAddress(),
                    conn -> {
                        role.accept(conn);
                        conn.holdSendsUntilAccepted();
                    });
            ConnectionAssembly.start(c, conn -> l.start(conn, "rpcrdma-server-cq"));
            byId.put(id.handle().address(), new Accepted(id, link, c));
            connections.add(c.connection());
            if (onConnect != null) {
                onConnect.accept(c.connection());
            }
            // rnr_retry 0; the retry count is the REQ's (the client's), ours is ignored.
            id.accept(new ConnectionParameters(mine.toBytes(), responderResources, depth,
                    ConnectionParameters.RETRY_COUNT, 0));
            c.accepted();
            ok = true;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (RuntimeException | Error e) {
            // onConnect is user code: an Error from it refuses this request like any other
            // failure, and the thread goes on accepting. One line per refusal (a peer's request
            // can cause it); the stack trace only at DEBUG.
            LOG.log(Level.WARNING, "rejecting connection request: {0}", e.toString());
            LOG.log(Level.DEBUG, "rejected connection request", e);
        } finally {
            if (!ok) {
                byId.remove(id.handle().address());
                if (c != null) {
                    connections.remove(c.connection());
                    c.onLinkLost(new RpcRdmaException("connection request rejected"));
                } else if (shared != null) {
                    shared.shutdown(); // its share; the connection's loss does it otherwise
                }
                try {
                    id.reject(null);
                } catch (RuntimeException e) {
                    LOG.log(Level.DEBUG, "rdma_reject: {0}", e.getMessage());
                }
                if (link != null) {
                    link.destroy();
                }
                id.close();
            }
        }
    }

    private void drop(CmId id, String why) {
        if (id == null) {
            return;
        }
        Accepted a = byId.remove(id.handle().address());
        if (a == null) {
            return;
        }
        connections.remove(a.engine().connection());
        a.engine().onLinkLost(new RpcRdmaException(why));
        // the QP's teardown can take long on a dead link: this thread accepts every client's
        // connection (the reconnect of this very client too) and must not wait for it
        teardowns.release(() -> {
            a.link().destroy();
            a.id().close();
        });
    }

    /** Waits for the rdma_cm thread to end (woken by closeAll); false if it did not in time. */
    private boolean awaitCmThread() {
        if (Thread.currentThread() == cmThread) {
            return true; // closed from onConnect or a listener: the loop ends when it returns
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CM_THREAD_STOP_MILLIS);
        boolean interrupted = false;
        while (cmThread.isAlive()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                cmThread.join(Duration.ofNanos(left));
            } catch (InterruptedException e) {
                interrupted = true; // still wait: what the thread uses must not be freed under it
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return !cmThread.isAlive();
    }

    /**
     * Stops taking events, then closes every connection and releases its link and id, then
     * the shared receive queues, the listener and the event channel. When the rdma_cm thread
     * does not stop in time nothing native is freed (see below).
     *
     * @return false if the rdma_cm thread was still busy: the caller must not free what the
     *         connections use either (the registered buffers)
     */
    public boolean closeAll() {
        closing = true;
        events.stopWaiting(); // the rdma_cm thread returns from its wait at once and sees closing
        if (!awaitCmThread() || !teardowns.await(RELEASE_WAIT_MILLIS)) {
            // Freeing the event channel, the ids and the links under a thread that still uses
            // them is a use-after-free in native memory: leave them to the process instead.
            LOG.log(Level.WARNING, "rdma_cm thread or a lost connection''s release still busy after {0} ms (an"
                    + " onConnect that does not return?): its event channel and connections are left open",
                    CM_THREAD_STOP_MILLIS);
            return false;
        }
        for (Accepted a : byId.values()) {
            try {
                a.engine().connection().close(0, TimeUnit.MILLISECONDS);
                a.link().destroy();
                a.id().close();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "closing a connection failed", e);
            }
        }
        byId.clear();
        connections.clear();
        // ORDER: after every QP on them; the CQs before the shared receive queue, whose pool
        // their threads give receives back to
        completionGroups.values().forEach(CompletionGroup::close);
        completionGroups.clear();
        sharedReceives.values().forEach(SharedReceiveHardware::close);
        sharedReceives.clear();
        listener.close();
        events.close();
        return true;
    }

    @Override
    public void close() {
        closeAll();
    }
}
