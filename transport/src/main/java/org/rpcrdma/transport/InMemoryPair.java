package org.rpcrdma.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.rpcrdma.transport.endpoint.ConnectionAssembly;
import org.rpcrdma.transport.link.InMemoryLink;
import org.rpcrdma.transport.link.InMemoryWire;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ConnectionSizing;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.wire.ConnectSettings;

/**
 * A client and a server {@link Connection} joined in memory instead of by an RC QP: the
 * whole transport (header coding, credits per direction, XID tables, receive pool) with no
 * RDMA device. For testing call handlers and upper layers without hardware, and for
 * measuring what the transport itself costs per call.
 *
 * <p>A Send is copied into a receive the peer has posted, or, as with rnr_retry_count 0,
 * ends the connection when none is. As on a NIC, a Send completes locally and the peer
 * takes it on its own completion context ({@code link.InMemoryWire}): a thread of each
 * side, or a caller blocked on a reply that polls the wire while it waits (a blocking call
 * answered at once then costs no thread hand-off). Either side may be called from any
 * number of threads at once; a call returns before its reply arrives, as on verbs.
 *
 * <p>RDMA Read and Write are emulated over a registry of exposed memory keyed by rkey, as
 * an RNIC checks them: the rkey must be one the peer exposed and has not invalidated, the
 * range must lie inside what it exposed (addresses are the memory's own, as with verbs'
 * virtual addressing), and a Write needs a writable exposure; anything else is a remote
 * access error that ends the connection on both sides, as it puts both QPs in error.
 * Both sides set R when the options ask for remote invalidation: a Send with Invalidate
 * withdraws the peer's rkey, and the peer's own withdrawal of it then counts as remote.
 * The responder does them all (RFC 8166 §3.4): the server, and the client for backward
 * calls with chunks when the options let it take them (RFC 8167 §5.3). Memory from
 * {@link #allocateRegistered}, and other caller memory the pair's registration cache
 * takes, is exposed in place, as on verbs: each side "registers" a buffer or cache entry
 * once (counted, and forgotten when the buffer is closed, the entry dropped or the pair
 * closes). Exposed memory whose arena the caller closed behaves as pinned pages do: the
 * peer's Write lands where the caller cannot see it, its Read gets zeros.
 *
 * <p>The wire itself (posted receives, deliveries in order) is {@code link.InMemoryWire}; this
 * class is the rest of the device behind one {@code Link}: RDMA Read and Write with their
 * rkey checks, invalidation and registration.
 *
 * <pre>{@code
 * try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.defaults(), handler)) {
 *     ReceivedMessage reply = p.client().call(rpcCall).join();
 * }
 * }</pre>
 */
public final class InMemoryPair implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final long chunkMemoryBytes;
    private final RegisteredBuffers registered;
    private final ConnectionEngine client;
    private final ConnectionEngine server;
    /** Sends, receives and deliveries between the two sides. */
    private final InMemoryWire wire;
    /** Memory exposed by either side: rkey -> region. */
    private final ConcurrentHashMap<Integer, InMemoryLink.Exposed> exposed = new ConcurrentHashMap<>();
    private final InMemoryLink clientEnd;
    private final InMemoryLink serverEnd;

    /**
     * {@code co} and {@code so} are each side's options; both sides have the smaller inline
     * threshold, as a negotiation gives; the pair's own memory (chunks, registration cache)
     * is sized by the client's.
     */
    private InMemoryPair(RpcRdmaOptions co, RpcRdmaOptions so, CallHandler handler) {
        chunkMemoryBytes = co.chunkMemoryBytes();
        registered = new RegisteredBuffers(co.registrationCacheBytes());
        wire = new InMemoryWire(ConnectionSizing.receiveBuffers(co, true), ConnectionSizing.receiveBuffers(so, false));
        InMemoryLink c = new InMemoryLink(wire, wire.first(),
                ConnectionSizing.clientTakesBackwardChunks(co) ? co.rdmaDepth() : 0, arena, chunkMemoryBytes,
                registered.buffers(), exposed);
        InMemoryLink s = new InMemoryLink(wire, wire.second(), so.rdmaDepth(), arena, chunkMemoryBytes,
                registered.buffers(), exposed);
        InMemoryLink.join(c, s);
        clientEnd = c;
        serverEnd = s;
        int inline = Math.min(co.inlineThreshold(), so.inlineThreshold());
        client = side(true, "in-memory client", co, inline, c, conn -> {
            // as an RpcRdmaClient's: what the server knows it by once its backchannel is on
            conn.backchannel().clientInstance(new java.security.SecureRandom().nextLong() | 1);
            conn.backchannel().backwardChunks(ConnectionSizing.clientTakesBackwardChunks(co));
        });
        server = side(false, "in-memory server", so, inline, s, conn -> conn.handler(handler));
        ConnectionAssembly.start(client, c::bind);
        ConnectionAssembly.start(server, s::bind);
        wire.start("in-memory pair");
    }

    /** One side as an endpoint assembles it, over this pair's memory, with the negotiated {@code inline}. */
    private ConnectionEngine side(boolean isClient, String name, RpcRdmaOptions o, int inline, InMemoryLink end,
            Consumer<ConnectionEngine> role) {
        MemorySegment receiveMemory = arena.allocate((long) ConnectionSizing.receiveBuffers(o, isClient) * inline);
        var assembly = new ConnectionAssembly(isClient, o, end, receiveMemory, new StatsCounters());
        return assembly.connection(name, new ConnectSettings(inline, inline, o.remoteInvalidation()),
                arena.allocate((long) ConnectionSizing.sendContexts(o, isClient) * inline), ADDRESS, role);
    }

    /**
     * Each side's {@link Connection#remoteAddress()}: the pair has no network, so an
     * unresolved address that claims none ({@code in-memory}, port 0).
     */
    public static final java.net.InetSocketAddress ADDRESS = java.net.InetSocketAddress.createUnresolved("in-memory", 0);

    /** Opens a pair with the options' inline threshold and credits; {@code handler} serves forward calls. */
    public static InMemoryPair open(RpcRdmaOptions options, CallHandler handler) {
        return new InMemoryPair(options, options, handler);
    }

    /**
     * A pair whose sides have options of their own (tests: a server that grants fewer
     * credits than the client asks for, RFC 8166 §3.3.1).
     */
    static InMemoryPair open(RpcRdmaOptions clientOptions, RpcRdmaOptions serverOptions, CallHandler handler) {
        return new InMemoryPair(clientOptions, serverOptions, handler);
    }

    public Connection client() {
        return client.connection();
    }

    public Connection server() {
        return server.connection();
    }

    /** Memory for zero-copy chunks of either side's calls (see {@link RpcRdmaClient#allocateRegistered}). */
    public RegisteredBuffer allocateRegistered(long bytes) {
        return registered.allocate(bytes);
    }

    /** The pair's registered-buffer allocator. */
    public RegisteredBuffers registeredBuffers() {
        return registered;
    }

    /** Withdraws an rkey (either side's). */
    void invalidate(int rkey) {
        exposed.remove(rkey);
    }

    /**
     * If {@code link} is a pair's, runs what is queued on its wire until nothing is (tests:
     * what a Send they posted by hand sets off has happened); false if that took over 5 s.
     */
    static boolean settle(Link link) {
        return !(link instanceof InMemoryLink e) || e.wire().settle(java.util.concurrent.TimeUnit.SECONDS.toNanos(5));
    }

    /**
     * Where the completions of {@code link}'s side go from now on, if it is a pair's (as
     * {@link org.rpcrdma.transport.link.VerbsLink#deliverTo} for a verbs link).
     */
    static void deliverTo(Link link, org.rpcrdma.transport.link.CompletionSink sink) {
        if (link instanceof InMemoryLink e) {
            e.deliverTo(sink);
        }
    }

    /**
     * Runs what is queued on the pair, on the calling thread, until neither side has a
     * completion queued or being run: whatever was sent so far has been delivered and
     * handled as far as it goes without a new call (a handler that answers at once has
     * answered; one that keeps its call holds it). For tests of handlers and upper layers
     * that look at the state an asynchronous call or a one-way message left, without
     * polling for it. False if that took over 5 s (something keeps sending), or when called
     * from a handler or callback the pair is running (it cannot wait for itself).
     */
    public boolean settle() {
        return wire.settle(java.util.concurrent.TimeUnit.SECONDS.toNanos(5));
    }

    /** Rkeys exposed now (either side). */
    int exposedCount() {
        return exposed.size();
    }

    /** Chunk-pool bytes in use now on one side (tests: back to none after a call). */
    long chunkBytesInUse(boolean clientSide) {
        return (clientSide ? clientEnd : serverEnd).chunkBytesInUse();
    }

    /** Closes both connections (failing what is pending) and frees their memory. */
    @Override
    public void close() {
        client.close(0, java.util.concurrent.TimeUnit.MILLISECONDS);
        server.close(0, java.util.concurrent.TimeUnit.MILLISECONDS);
        wire.close(); // what the closes queued (the link's loss on each side) delivered before the memory goes
        clientEnd.forgetAll();
        serverEnd.forgetAll();
        registered.close();
        arena.close();
    }
}
