package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.rpcrdma.transport.endpoint.ClientAttachment;
import org.rpcrdma.transport.endpoint.ClientReconnector;
import org.rpcrdma.transport.rpc.ConnectionEngine;
import org.rpcrdma.transport.rpc.FutureShapes;

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
 * forward requester must keep connected (RFC 8167 §5.4): with one it goes on trying past
 * those attempts ({@link RpcRdmaOptions#backchannelWaitMillis()}). Other outstanding calls
 * fail with {@link ConnectionLostException}.
 *
 * <pre>{@code
 * try (RpcRdmaClient c = RpcRdmaClient.connect(new InetSocketAddress("10.0.0.1", 20049), RpcRdmaOptions.defaults())) {
 *     ReceivedMessage reply = c.callAndWait(rpcCallBytes);
 * }
 * }</pre>
 *
 * <p>The public API and what outlives connections (the instance id, the registered
 * buffers); making one connection is {@link ClientAttachment}'s, the hand-over between
 * connections (parked calls, reconnect, the backchannel's re-enabling)
 * {@code endpoint.ClientReconnector}'s.
 */
public final class RpcRdmaClient implements BidirectionalCaller, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RpcRdmaClient.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();

    private final InetSocketAddress server;
    private final RpcRdmaOptions options;
    private final long instanceId;
    private final RegisteredBuffers registered;
    private final ClientReconnector<ClientAttachment> reconnector;

    private RpcRdmaClient(InetSocketAddress server, RpcRdmaOptions o) {
        this.server = server;
        this.options = o;
        this.registered = new RegisteredBuffers(o.registrationCacheBytes());
        long id;
        do {
            id = RANDOM.nextLong();
        } while (id == 0);
        this.instanceId = id;
        this.reconnector = ClientReconnector.verbs(server, o, this::attach);
    }

    /** Connects to {@code server} (port from the address; 20049 is the usual one). */
    public static RpcRdmaClient connect(InetSocketAddress server, RpcRdmaOptions o) {
        RpcRdmaClient c = new RpcRdmaClient(server, o);
        c.reconnector.first(c.attach());
        return c;
    }

    private ClientAttachment attach() {
        return ClientAttachment.attach(server, options, registered.buffers(), instanceId, reconnector::adopt);
    }

    /** The current connection (after a loss, the lost one until a reconnect succeeds). */
    @Override
    public Connection connection() {
        return reconnector.current().connection.connection();
    }

    /** Identifies this client to our server across reconnects (sent when enabling the backchannel). */
    public long clientId() {
        return instanceId;
    }

    /** Reconnect attempts that failed so far (a client with a backchannel keeps trying, RFC 8167 §5.4). */
    public long failedReconnects() {
        return reconnector.failedReconnects();
    }

    /** Successful reconnects so far. */
    public long reconnects() {
        return reconnector.reconnects();
    }

    /**
     * Native memory for zero-copy chunks ({@link RegisteredBuffer}): a call whose long-call
     * bytes, DDP argument or receptacle is a slice of it exposes that memory in place under
     * the call's own memory window, with no copy ({@link RpcRdmaStats#zeroCopyExposures()}).
     * Registered now on the current connection; after a reconnect, on the new one at its
     * first use there. Close it when done (the client's close closes what is left).
     */
    public RegisteredBuffer allocateRegistered(long bytes) {
        RegisteredBuffer b = registered.allocate(bytes);
        try {
            reconnector.current().link.register(b.memory());
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

    /**
     * {@inheritDoc} A forward call on the current connection; the timeout runs from now,
     * across reconnects. While the client is reconnecting the call waits for the new
     * connection. With {@link CallOptions#retry}, a call whose connection is lost before its
     * reply is sent again on the next connection with the same XID; without it, such a call
     * fails with {@link ConnectionLostException} (it may have been executed). Chunks (a long
     * call, a Reply chunk, a DDP argument, a receptacle) are decided on the connection the
     * call goes out on.
     */
    @Override
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions o) {
        return reconnector.call(rpcCall, o);
    }

    /**
     * {@inheritDoc} On an open connection as {@link Connection#callAndWait(MemorySegment,
     * CallOptions)} (the caller takes its own reply); while reconnecting, parked as
     * {@link #call(MemorySegment, CallOptions)}.
     */
    @Override
    public ReceivedMessage callAndWait(MemorySegment rpcCall, CallOptions o) throws InterruptedException {
        ConnectionEngine c = reconnector.openConnection();
        return c != null ? c.callAndWait(rpcCall, o) : FutureShapes.await(reconnector.call(rpcCall, o));
    }

    /**
     * {@inheritDoc} On an open connection as {@link Connection#callAndRead(MemorySegment,
     * CallOptions, ReplyReader)} (nothing allocated per call inline); while reconnecting,
     * parked as {@link #call(MemorySegment, CallOptions)}.
     */
    @Override
    public <T> T callAndRead(MemorySegment rpcCall, CallOptions o, ReplyReader<T> reader) throws InterruptedException {
        Objects.requireNonNull(reader, "reader");
        ConnectionEngine c = reconnector.openConnection();
        return c != null ? c.callAndRead(rpcCall, o, reader) : FutureShapes.read(reconnector.call(rpcCall, o), reader);
    }

    /**
     * {@inheritDoc} On an open connection as {@link Connection#call(MemorySegment, CallOptions,
     * ReplyCallback)}; while reconnecting, parked as {@link #call(MemorySegment, CallOptions)}.
     */
    @Override
    public void call(MemorySegment rpcCall, CallOptions o, ReplyCallback callback) {
        Objects.requireNonNull(callback, "callback");
        ConnectionEngine c = reconnector.openConnection();
        if (c != null) {
            c.call(rpcCall, o, callback);
        } else {
            FutureShapes.callback(reconnector.call(rpcCall, o), callback);
        }
    }

    /** The largest reply a call can allow: {@link RpcRdmaOptions#maxChunkBytes}. */
    @Override
    public int maxReplyBytes() {
        return options.maxChunkBytes();
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
    @Override
    public void serveBackwardCalls(CallHandler handler) {
        connection().serveBackwardCalls(handler);
    }

    /**
     * Tells {@code listener} of each new connection after a reconnect, once it serves
     * backward calls again and the parked calls are on their way (an NFSv4.1 client binds
     * it to its session then: RFC 8167 §6 wants the back channel ready first). Runs on the
     * reconnect thread: hand anything that blocks, like a call, to another thread.
     */
    @Override
    public void onReconnect(Consumer<Connection> listener) {
        reconnector.onReconnect(listener);
    }

    /** Drains and fails pending calls, disconnects and releases every verbs resource. */
    @Override
    public void close() {
        ClientAttachment a = reconnector.close();
        if (a == null) {
            return;
        }
        a.connection.connection().close();
        a.destroy();
        if (reconnector.awaitReleases()) {
            registered.close(); // ORDER: after every link deregistered them
        } else {
            LOG.log(Level.WARNING, "a lost connection to {0} is still being released: the client''s"
                    + " registered buffers stay allocated", server);
        }
    }
}
