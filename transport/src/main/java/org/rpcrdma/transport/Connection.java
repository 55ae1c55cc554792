package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.rpc.ApiBridge;
import org.rpcrdma.transport.rpc.ConnectionEngine;

/**
 * One RPC-over-RDMA v1 connection, both directions on one RC QP (RFC 8166, RFC 8167).
 *
 * <p>On the client (connection initiator) {@link #call} sends forward calls and a
 * backchannel handler serves backward calls; on the server {@link #call} sends backward
 * calls and the endpoint's handler serves forward calls. This class is the public face of
 * the connection; the work is the engine's (package {@code org.rpcrdma.transport.rpc}:
 * requester, responder, send and receive queues, as in Linux xprtrdma).
 *
 * <p>Calls end exactly once: with the reply, an error, their timeout, the caller's
 * cancellation, or the connection's loss (then {@link ConnectionLostException}, or handed
 * to the endpoint to be sent again on a new connection if they were never sent or asked
 * for retry). Every method may be called from any thread. No future is completed and no
 * user code (handlers, future callbacks) runs while a transport lock is held.
 */
public final class Connection implements BidirectionalCaller, AutoCloseable {
    static {
        ApiBridge.register(new EngineAccess());
    }

    private final ConnectionEngine engine;

    Connection(ConnectionEngine engine) {
        this.engine = engine;
    }

    /** The engine behind this connection (the endpoints of this package, and tests). */
    ConnectionEngine engine() {
        return engine;
    }

    /** Whether this side initiated the connection (client). */
    public boolean isClient() {
        return engine.isClient();
    }

    /** Negotiated inline threshold for messages this side sends (RFC 8797 §4). */
    public int sendInlineThreshold() {
        return engine.params().sendInline();
    }

    /** Negotiated inline threshold for messages this side receives. */
    public int receiveInlineThreshold() {
        return engine.params().receiveInline();
    }

    /**
     * RDMA Reads and Writes this side may have outstanding at once: the depth agreed at
     * connect (0 for a client whose server serves none of its RDMA Reads, as Linux's nfsd;
     * such a client takes no chunked backward calls).
     */
    public int rdmaDepth() {
        return engine.rdmaDepth();
    }

    /** Whether the peer accepts Send With Invalidate (RFC 8797 §4.3). */
    public boolean remoteInvalidation() {
        return engine.remoteInvalidation();
    }

    /**
     * A snapshot of this connection's counters (a server's connections count together: the
     * same as its {@link RpcRdmaServer#stats()}).
     */
    public RpcRdmaStats stats() {
        return engine.counters().snapshot();
    }

    /** Credits the peer granted for our calls (the current window). */
    public int ownCallWindow() {
        return engine.requester().window();
    }

    /** Most of our calls ever outstanding at once. */
    public int ownCallHighWater() {
        return engine.requester().highWater();
    }

    /** Most peer calls ever outstanding at once, counted on receipt (the responder's own count). */
    public int peerCallHighWater() {
        return engine.responder().highWater();
    }

    /** Our calls sent and not yet answered, abandoned ones included (they hold their credit). */
    public int outstandingCalls() {
        return engine.requester().outstanding();
    }

    /** Our sent calls whose caller gave up, still holding their XID and credit until the reply. */
    public int abandonedCalls() {
        return engine.requester().abandonedInFlight();
    }

    /** Our calls waiting for a credit or for a receive for their reply. */
    public int waitingCalls() {
        return engine.requester().waiting();
    }

    /** Calls the peer has outstanding here (received, not yet answered). */
    public int peerOutstandingCalls() {
        return engine.responder().outstanding();
    }

    /** Receive buffers posted now. */
    public int postedReceives() {
        return engine.receives().posted();
    }

    /** Receive buffers held by received messages not yet released (by the transport or a user). */
    public int heldReceives() {
        return engine.receives().held();
    }

    public boolean isOpen() {
        return engine.isOpen();
    }

    /**
     * Client only: serve backward calls with {@code handler}, granting the server the
     * backward credits of the options (RFC 8167 §4.1), and tell the server so through our
     * private control program. Only a panama-rpcrdma server understands it: the future
     * fails naming the answer (PROG_UNAVAIL from the Linux kernel's nfsd) otherwise; for
     * such a server use {@link #serveBackwardCalls} and announce the backchannel through
     * the upper layer (NFSv4.1 CREATE_SESSION).
     */
    public CompletableFuture<Void> enableBackchannel(CallHandler handler) {
        return engine.enableBackchannel(handler);
    }

    /**
     * Client only: serve backward calls with {@code handler} from now on, without telling
     * the server (the upper layer does: NFSv4.1 CREATE_SESSION with a back channel, RFC 8167
     * §6). Receives for the backward credits are posted already.
     */
    @Override
    public void serveBackwardCalls(CallHandler handler) {
        engine.serveBackwardCalls(handler);
    }

    /**
     * The client's instance id: on a client its own ({@link RpcRdmaClient#clientId()}); on a
     * server the one the client gave when it enabled its backchannel here (what
     * {@link RpcRdmaServer#backchannel(long)} finds it by), 0 until then.
     */
    public long clientId() {
        return engine.backchannel().clientInstance();
    }

    /**
     * The peer's address: the server a client connected to, the client a server accepted
     * (from the connection manager's route); {@link InMemoryPair#ADDRESS} in memory.
     */
    public InetSocketAddress remoteAddress() {
        return engine.remoteAddress();
    }

    /**
     * Server only: the upper layer learned that the client is ready for backward calls
     * (e.g. NFSv4.1 CREATE_SESSION with a back channel).
     */
    public void markBackchannelReady() {
        engine.markBackchannelReady();
    }

    /**
     * {@inheritDoc} In this side's call direction: forward on a client, backward on a
     * server. Calls beyond the credit window wait, and are then sent by the thread that
     * frees a credit: a segment confined to the caller's thread is copied when its call has
     * to wait; any other must stay valid until the call completes or is sent (closed before,
     * the call alone fails with {@link IllegalStateException}). A call too large for the send
     * inline threshold goes as a long call (RDMA_NOMSG, Position-Zero Read chunk) on a client.
     * If abandoned calls come to hold every credit and the peer stays silent, the connection
     * is reset (the peer is not answering). With {@link CallOptions#retry} the bytes are
     * copied and, if the connection is lost before the reply, the call goes to the endpoint
     * that owns this connection, to be sent again (same XID) on its next one.
     *
     * @throws BackchannelNotEnabledException on a server whose client has not enabled its backchannel
     */
    @Override
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions o) {
        return engine.call(rpcCall, o);
    }

    /**
     * The largest reply a call here can allow ({@code maxReplyBytes}): {@code maxChunkBytes}
     * where calls may offer a Reply chunk, else what fits inline (a server whose client
     * takes no backward calls with chunks, RFC 8167 §5.3; a link without chunk memory).
     */
    @Override
    public int maxReplyBytes() {
        return engine.maxReplyBytes();
    }

    /**
     * {@inheritDoc} The calling thread takes its reply off the completion queue itself when
     * it can (no hand-off from the poller thread): in busy-poll mode it polls; in event mode,
     * unless another thread is already waiting on the completion channel, it arms the
     * channel and sleeps on it, so the wake-up the device causes is the caller's own.
     * Completions for other calls, and the peer's calls (handlers included), may then be
     * dispatched on this thread. On timeout ({@link CallTimeoutException}) or interrupt the
     * call is abandoned. Inline, the reply it returns is all it allocates (see callAndRead).
     */
    @Override
    public ReceivedMessage callAndWait(MemorySegment rpcCall, CallOptions o) throws InterruptedException {
        return engine.callAndWait(rpcCall, o);
    }

    /**
     * {@inheritDoc} The caller takes its reply off the completion queue itself as in
     * {@link #callAndWait(MemorySegment, CallOptions)}. Nothing is allocated per call on the
     * inline path (no future, no {@link ReceivedMessage}): the call slot is the connection's
     * and used again; a call with {@link CallOptions#retry} has its bytes copied and goes
     * through {@link #callAndWait(MemorySegment, CallOptions)}.
     */
    @Override
    public <T> T callAndRead(MemorySegment rpcCall, CallOptions o, ReplyReader<T> reader) throws InterruptedException {
        return engine.callAndRead(rpcCall, o, reader);
    }

    /**
     * {@inheritDoc} Nothing is allocated per call on the inline path (the call slot is the
     * connection's); calls beyond the credit window wait, as with
     * {@link #call(MemorySegment, CallOptions)}. A call with {@link CallOptions#retry} has its
     * bytes copied and completes through a future.
     */
    @Override
    public void call(MemorySegment rpcCall, CallOptions o, ReplyCallback callback) {
        engine.call(rpcCall, o, callback);
    }

    /** This connection (it never reconnects). */
    @Override
    public Connection connection() {
        return this;
    }

    /**
     * Drains: refuses new calls, waits up to {@code timeout} for the calls somebody waits
     * for, then fails what is left and disconnects.
     */
    public void close(long timeout, TimeUnit unit) {
        engine.close(timeout, unit);
    }

    @Override
    public void close() {
        close(5, TimeUnit.SECONDS);
    }

    @Override
    public String toString() {
        return engine.toString();
    }
}
