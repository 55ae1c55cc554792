package org.rpcrdma.transport.endpoint;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.function.Consumer;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.ConnectionParams;
import org.rpcrdma.transport.rpc.ConnectionSizing;
import org.rpcrdma.transport.rpc.ReceivePool;
import org.rpcrdma.transport.rpc.ReceiveQueue;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.wire.ConnectSettings;

/**
 * Puts one {@link ConnectionEngine} together, the same way for a client, a server and each side of
 * an {@link InMemoryPair}; those keep only what differs (the link, the connect handshake,
 * what their role adds). In steps, because a client posts receives before it connects (RFC
 * 8167 §4.3.1: the server may send as soon as the connection is established) and knows the
 * negotiated inline sizes only after:
 * <ol>
 *   <li>the constructor: the receive pool over the link, counting in the endpoint's counters;
 *   <li>{@link #connection}: the connection over the negotiated settings, the sizes and
 *       credits this role takes from the options, and the role's own settings;
 *   <li>{@link #start}: the link bound to it, then its receives posted.
 * </ol>
 * The last two are apart so that an endpoint holds the connection before anything can fail
 * in starting it (a server then releases it with the rest of a refused request).
 */
public final class ConnectionAssembly {
    private final boolean client;
    private final RpcRdmaOptions options;
    private final Link link;
    private final StatsCounters counters;
    private final ReceiveQueue receives;

    /**
     * @param receiveMemory registered memory for {@code ConnectionSizing.receiveBuffers(options, client)} buffers
     *                      of the inline threshold each (the most the negotiation can give)
     * @param counters      the endpoint's counters (a server's connections share one set)
     */
    public ConnectionAssembly(boolean client, RpcRdmaOptions options, Link link, MemorySegment receiveMemory,
            StatsCounters counters) {
        this(client, options, link, receivePool(link, receiveMemory, ConnectionSizing.receiveBuffers(options, client),
                options.inlineThreshold(), options.receiveBatch(), counters), counters);
    }

    /** As above, the connection's receives from {@code receives} (a server's shared receive queue). */
    public ConnectionAssembly(boolean client, RpcRdmaOptions options, Link link, ReceiveQueue receives,
            StatsCounters counters) {
        this.client = client;
        this.options = options;
        this.link = link;
        this.counters = counters;
        this.receives = receives;
    }

    /**
     * The receive buffers of one QP, posting through {@code link} and counting in
     * {@code stats}: made by the endpoint before the connection, so receives can be posted
     * before the peer can send (RFC 8167 §4.3).
     */
    public static ReceivePool receivePool(Link link, MemorySegment memory, int count, int bufferSize, int batch,
            StatsCounters stats) {
        return new ReceivePool(memory, count, bufferSize, batch, (slots, n) -> {
            link.postReceives(slots, n);
            stats.receivesPosted.add(n);
            stats.receiveBatches.increment();
        });
    }

    /** The receive pool, for an endpoint that posts receives before it connects. */
    ReceiveQueue receives() {
        return receives;
    }

    /**
     * The connection over the negotiated settings, with what this role takes from the options
     * (its own calls and the peer's credits, send contexts, chunk limits); not started.
     *
     * @param negotiated the inline sizes and R both sides agreed on (RFC 8797 §4)
     * @param sendMemory registered memory for {@code ConnectionSizing.sendContexts(options, client)} sends of the
     *                   inline threshold each
     * @param role       what this endpoint adds (handler, backchannel, client id...)
     */
    public ConnectionEngine connection(String name, ConnectSettings negotiated, MemorySegment sendMemory, InetSocketAddress peer,
            Consumer<ConnectionEngine> role) {
        RpcRdmaOptions o = options;
        int sendInline = client ? negotiated.clientToServer() : negotiated.serverToClient();
        int receiveInline = client ? negotiated.serverToClient() : negotiated.clientToServer();
        // a server's backward window is the client's grant, clamped to ownCalls (RFC 8167 §4.1)
        ConnectionEngine c = new ConnectionEngine(name, new ConnectionParams(client, sendInline, receiveInline, ConnectionSizing.ownCalls(o, client),
                ConnectionSizing.peerCalls(o, client), negotiated.remoteInvalidation(), o.signalEvery(), o.callTimeoutMillis(),
                o.maxChunkBytes(), o.maxChunkSegments(), o.silenceTimeoutMillis()), link, receives, ConnectionSizing.sendContexts(o, client), sendMemory, counters);
        c.remoteAddress(peer);
        role.accept(c);
        return c;
    }

    /**
     * Starts {@code c}: binds the link to it (its completions reach the connection from then
     * on), then posts the receives the peer's grant needs.
     */
    public static void start(ConnectionEngine c, Consumer<ConnectionEngine> bindLink) {
        bindLink.accept(c);
        c.start();
    }
}
