package org.rpcrdma.transport;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.Consumer;
import org.rpcrdma.transport.endpoint.ServerAcceptor;
import org.rpcrdma.transport.rpc.StatsCounters;

/**
 * The server endpoint: listens through rdma_cm, accepts each connection with RFC 8797
 * private data (after creating its QP and posting its receives, so the client's first call
 * always finds one), and serves forward calls with one {@link CallHandler}. Each accepted
 * {@link Connection} can send backward calls once its client enabled its backchannel.
 * Accepting and the connections' life cycle are {@link ServerAcceptor}'s.
 */
public final class RpcRdmaServer implements AutoCloseable {
    private final Backchannels backchannels;
    private final StatsCounters stats = new StatsCounters();
    private final RegisteredBuffers registered;
    private final ServerAcceptor acceptor;

    private RpcRdmaServer(InetSocketAddress bind, RpcRdmaOptions o, CallHandler handler, Consumer<Connection> onConnect,
            int completionQueueEntries) {
        this.backchannels = new Backchannels(o);
        this.registered = new RegisteredBuffers(o.registrationCacheBytes());
        this.acceptor = new ServerAcceptor(bind, o, stats, registered.buffers(), conn -> {
            conn.handler(handler);
            conn.backchannel().listener((bound, clientId) -> backchannels.bind(clientId, bound));
        }, onConnect, completionQueueEntries);
    }

    /**
     * Listens on {@code bind} (use port 0 for any free port; see {@link #port()}).
     *
     * @param onConnect called with each new connection before its first call is served (may be null)
     */
    public static RpcRdmaServer listen(InetSocketAddress bind, RpcRdmaOptions o, CallHandler handler,
            Consumer<Connection> onConnect) {
        return new RpcRdmaServer(bind, o, handler, onConnect, Integer.MAX_VALUE);
    }

    /** Tests: as {@link #listen}, with completion queues of at most {@code completionQueueEntries} entries. */
    static RpcRdmaServer listen(InetSocketAddress bind, RpcRdmaOptions o, CallHandler handler,
            Consumer<Connection> onConnect, int completionQueueEntries) {
        return new RpcRdmaServer(bind, o, handler, onConnect, completionQueueEntries);
    }

    public int port() {
        return acceptor.port();
    }

    /** Connections currently open. */
    public List<Connection> connections() {
        return acceptor.connections();
    }

    /**
     * The backchannel of the client with this id ({@link RpcRdmaClient#clientId()}), made
     * on first use: calls made before the client enabled it wait for it like calls across a
     * reconnect (RFC 8167 §5.4).
     */
    public Backchannel backchannel(long clientId) {
        if (clientId == 0) {
            throw new IllegalArgumentException("client id 0 is reserved (a client that sent none)");
        }
        return backchannels.get(clientId);
    }

    /**
     * For upper layers that know their clients themselves (an NFSv4.1 session's
     * BIND_CONN_TO_SESSION / CREATE_SESSION): backward calls for {@code key} go to
     * {@code c} from now on, and calls waiting for that client are sent there.
     */
    public Backchannel bindBackchannel(long key, Connection c) {
        if (c.isClient() || !acceptor.serves(c)) {
            throw new IllegalArgumentException(c + " is not a connection of this server");
        }
        c.markBackchannelReady();
        return backchannels.bind(key, c);
    }

    /** Forgets a client's backchannel (its session ended); its waiting calls fail. */
    public void removeBackchannel(long clientId) {
        backchannels.remove(clientId);
    }

    /**
     * Bytes of registered receive memory: the shared receive queues' (the same however many
     * clients) plus each connection's own, when it has some.
     */
    public long receiveMemoryBytes() {
        return acceptor.receiveMemoryBytes();
    }

    /**
     * Completion queues that the connections share: one per completion thread
     * ({@link RpcRdmaOptions.Builder#completionThreads} per device in use), more once those
     * are full (the threads stay); 0 when each connection has its own.
     */
    public int completionQueues() {
        return acceptor.completionQueues();
    }

    /** A snapshot of the counters of all this server's connections, which count together. */
    public RpcRdmaStats stats() {
        return stats.snapshot();
    }

    /**
     * Memory for zero-copy chunks of this server's backward calls (see
     * {@link RpcRdmaClient#allocateRegistered}); each connection registers it at first use.
     */
    public RegisteredBuffer allocateRegistered(long bytes) {
        return registered.allocate(bytes);
    }

    /** This server's registered-buffer allocator (counts of live and freed buffers). */
    public RegisteredBuffers registeredBuffers() {
        return registered;
    }

    @Override
    public void close() {
        if (!acceptor.closeAll()) {
            return; // its connections still in use: their registered buffers too
        }
        backchannels.closeAll();
        registered.close(); // ORDER: after the links deregistered them
    }
}
