package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rpcrdma.transport.core.Direction;
import org.rpcrdma.transport.core.Events;
import org.rpcrdma.transport.core.Link;
import org.rpcrdma.transport.core.ReceiveQueue;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * One RPC-over-RDMA v1 connection, both directions on one RC QP (RFC 8166, RFC 8167).
 *
 * <p>On the client (connection initiator) {@link #call} sends forward calls and a
 * backchannel handler serves backward calls; on the server {@link #call} sends backward
 * calls and the endpoint's handler serves forward calls. The work is split as in Linux
 * xprtrdma: a {@link Requester} for our calls (credits and XIDs of our direction), a
 * {@link Responder} for the peer's (their credits, RDMA_ERROR), {@link Marshal} for how a
 * message travels, a {@link SendQueue} for Sends and a {@link ReceiveQueue} shared by both
 * directions, kept at (our outstanding calls + credits granted to the peer) posted
 * buffers (RFC 8167 §4.3). This class is the public API and ties them together:
 * {@link ConnectionLife} is the connection's life and loss, {@link Arrivals} what the
 * completion thread hands it, {@link CallSubmit} how our calls enter it and
 * {@link BackchannelEnabling} whether its backward direction is on.
 *
 * <p>Calls end exactly once: with the reply, an error, their timeout, the caller's
 * cancellation, or the connection's loss (then {@link ConnectionLostException}, or handed
 * to the endpoint to be sent again on a new connection if they were never sent or asked
 * for retry).
 *
 * <p>Threading: {@link Arrivals} is called by one completion thread at a time; everything
 * else from any thread. Lock order: ConnectionLife (state only) →
 * Requester → SendQueue → ReceiveQueue → link. No future is completed and no user code
 * (handlers, future callbacks, the endpoint's hand-over) runs while any of them is held.
 *
 * <p>Chunks are ChunkMarshal's, CallExposure's, ReadChunkPuller's and ReplyWriter's work, who
 * polls is CompletionDriver's.
 */
public final class Connection implements BidirectionalCaller, AutoCloseable {

    private final String name;
    private final ConnectionParams params;
    private final StatsCounters stats;
    private final Link link;
    private final ReceiveQueue receives;
    private final SendQueue sends;
    /** The one owner of this connection's failure: forces {@link #onLinkLost} once. */
    private final LinkFailure failure = new LinkFailure(this::onLinkLost);
    private final Requester requester;
    /** How many receives stay posted: the one place that decides it. */
    private final ReceiveDemand demand;
    private final Responder responder;
    /** Fails or hands over the calls this connection cannot complete. */
    private final CallHandOver handOver;
    private final ConnectionLife life;
    private final Arrivals arrivals;
    private final BackchannelEnabling backchannel;
    private final CallSubmit calls;
    /** Set by the endpoint once the peer is known (the CM id's, or the in-memory pair's). */
    private volatile java.net.InetSocketAddress remoteAddress;

    /**
     * @param receives   this connection's receive buffers (the endpoint may have posted some
     *                   already: a client posts before it connects)
     * @param sendMemory registered memory for {@code sendContexts * sendInline} bytes
     */
    Connection(String name, ConnectionParams params, Link link, ReceiveQueue receives, int sendContexts, MemorySegment sendMemory,
            StatsCounters stats) {
        this.name = name;
        this.handOver = new CallHandOver(name);
        this.params = params;
        this.stats = stats;
        this.link = link;
        this.receives = receives;
        this.sends = new SendQueue(link, sendContexts, params.signalEvery(), params.sendInline(), sendMemory, stats, failure);
        this.demand = new ReceiveDemand(receives, params.grantToPeer());
        this.requester = new Requester(name, Direction.ofOwnCalls(params.client()), params.ownCallCredits(), demand, sends, failure, stats,
                () -> onLinkLost(new RpcRdmaException("every credit is held by an abandoned call and no reply came for "
                        + CallSweep.STALL_MILLIS + " ms: the peer is not answering")));
        RdmaQueue rdma = new RdmaQueue(link, stats);
        this.backchannel = new BackchannelEnabling(name, params.client());
        this.responder = new Responder(this, receives, backchannel, params.client(), params.grantToPeer(), params.sendInline(), sends, stats,
                new ReplyWriter(link, rdma, sends, params.sendInline(), params.maxChunkBytes(), stats),
                new ReadChunkPuller(link, rdma), params.maxChunkBytes(), params.maxChunkSegments(),
                link.rdmaDepth() > 0);
        Unmarshal unmarshal = new Unmarshal(this, receives, RpcRdmaHeader.forInlineThreshold(params.receiveInline()), requester,
                responder, stats);
        this.life = new ConnectionLife(name, stats, link, receives, sends, rdma, requester, handOver);
        this.arrivals = new Arrivals(life, receives, demand, unmarshal, requester, sends, rdma);
        this.calls = new CallSubmit(name, params, link, life, requester, handOver, backchannel);
        Events.state(name, "OPEN", "inline " + params.sendInline() + "/" + params.receiveInline());
    }

    /**
     * Server: Sends made before the connection is accepted (a backward call from the
     * endpoint's onConnect) wait until {@link #accepted}; the QP cannot send before.
     */
    void holdSendsUntilAccepted() {
        sends.hold();
    }

    /** Server: rdma_accept returned; held Sends go out. */
    void accepted() {
        sends.resume();
    }

    /** Posts the receives the peer's grant needs (if the endpoint has not yet). Called once. */
    void start() {
        demand.start();
    }

    // ---- public API ----

    /** Whether this side initiated the connection (client). */
    public boolean isClient() {
        return params.client();
    }

    /** Negotiated inline threshold for messages this side sends (RFC 8797 §4). */
    public int sendInlineThreshold() {
        return params.sendInline();
    }

    /** Negotiated inline threshold for messages this side receives. */
    public int receiveInlineThreshold() {
        return params.receiveInline();
    }

    /**
     * RDMA Reads and Writes this side may have outstanding at once: the depth agreed at
     * connect (0 for a client whose server serves none of its RDMA Reads, as Linux's nfsd;
     * such a client takes no chunked backward calls).
     */
    public int rdmaDepth() {
        return link.rdmaDepth();
    }

    /** Whether the peer accepts Send With Invalidate (RFC 8797 §4.3). */
    public boolean remoteInvalidation() {
        return params.remoteInvalidation();
    }

    /**
     * A snapshot of this connection's counters (a server's connections count together: the
     * same as its {@link RpcRdmaServer#stats()}).
     */
    public RpcRdmaStats stats() {
        return stats.snapshot();
    }

    /** The live counters, for the transport's own counting. */
    StatsCounters counters() {
        return stats;
    }

    /** Credits the peer granted for our calls (the current window). */
    public int ownCallWindow() {
        return requester.window();
    }

    /** Most of our calls ever outstanding at once. */
    public int ownCallHighWater() {
        return requester.highWater();
    }

    /** Most peer calls ever outstanding at once, counted on receipt (the responder's own count). */
    public int peerCallHighWater() {
        return responder.highWater();
    }

    /** Our calls sent and not yet answered, abandoned ones included (they hold their credit). */
    public int outstandingCalls() {
        return requester.outstanding();
    }

    /** Our sent calls whose caller gave up, still holding their XID and credit until the reply. */
    public int abandonedCalls() {
        return requester.abandonedInFlight();
    }

    /** Our calls waiting for a credit or for a receive for their reply. */
    public int waitingCalls() {
        return requester.waiting();
    }

    /** Calls the peer has outstanding here (received, not yet answered). */
    public int peerOutstandingCalls() {
        return responder.outstanding();
    }

    public int postedReceives() {
        return receives.posted();
    }

    /** Receive buffers held by received messages not yet released (by the transport or a user). */
    public int heldReceives() {
        return receives.held();
    }

    public boolean isOpen() {
        return life.isOpen();
    }

    /** Receive-pool buffer {@code slot} (in-memory links write received bytes here). */
    MemorySegment receiveBuffer(int slot) {
        return receives.buffer(slot);
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
        serveBackwardCalls(handler);
        MemorySegment msg = backchannel.announce();
        return call(msg).thenApply(reply -> BackchannelControl.checkAnswer(name, reply));
    }

    /**
     * Client only: serve backward calls with {@code handler} from now on, without telling
     * the server (the upper layer does: NFSv4.1 CREATE_SESSION with a back channel, RFC 8167
     * §6). Receives for the backward credits are posted already.
     */
    @Override
    public void serveBackwardCalls(CallHandler handler) {
        if (!params.client()) {
            throw new IllegalStateException("only the client serves backward calls");
        }
        if (params.grantToPeer() < 1) {
            throw new IllegalStateException("connection was opened with 0 backward credits (RpcRdmaOptions.backwardCredits)");
        }
        responder.handler(java.util.Objects.requireNonNull(handler, "handler"));
    }

    /** Client: the backchannel handler, or null. */
    CallHandler backchannelHandler() {
        return params.client() ? responder.handler() : null;
    }

    /** Whether the backward direction is on, and with chunks. */
    BackchannelEnabling backchannel() {
        return backchannel;
    }

    /**
     * The client's instance id: on a client its own ({@link RpcRdmaClient#clientId()}); on a
     * server the one the client gave when it enabled its backchannel here (what
     * {@link RpcRdmaServer#backchannel(long)} finds it by), 0 until then.
     */
    public long clientId() {
        return backchannel.clientInstance();
    }

    /**
     * The peer's address: the server a client connected to, the client a server accepted
     * (from the connection manager's route); {@link InMemoryPair#ADDRESS} in memory.
     */
    public java.net.InetSocketAddress remoteAddress() {
        return remoteAddress;
    }

    void remoteAddress(java.net.InetSocketAddress a) {
        this.remoteAddress = a;
    }

    /** The owner that takes calls this connection could not complete. */
    void orphanSink(Consumer<List<CallRequest>> sink) {
        handOver.owner(sink);
    }

    /** Server side: the serving handler (set by the endpoint). */
    void handler(CallHandler h) {
        responder.handler(h);
    }

    /**
     * Server only: the upper layer learned that the client is ready for backward calls
     * (e.g. NFSv4.1 CREATE_SESSION with a back channel).
     */
    public void markBackchannelReady() {
        if (params.client()) {
            throw new IllegalStateException("only a server sends backward calls");
        }
        backchannel.markReady();
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
        checkCall(rpcCall, o);
        return call(rpcCall, o, o.timeoutNanos(params.callTimeoutMillis()));
    }

    /** A call {@link CallArguments#check checked} by its endpoint, with its timeout in nanoseconds (0: none). */
    CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions o, long timeoutNanos) {
        return calls.future(rpcCall, timeoutNanos, o.retry(), o.maxReplyBytes(), o.ddpArgument(), o.receptacle());
    }

    /**
     * The largest reply a call here can allow ({@code maxReplyBytes}): {@code maxChunkBytes}
     * where calls may offer a Reply chunk, else what fits inline (a server whose client
     * takes no backward calls with chunks, RFC 8167 §5.3; a link without chunk memory).
     */
    @Override
    public int maxReplyBytes() {
        return ChunkMarshal.replyLimit(params, link, backchannel.backwardChunks());
    }

    /** Every call shape, the reconnecting client's and a backchannel's calls come here: see {@link CallSubmit}. */
    void submit(CallRequest c) {
        calls.submit(c);
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
        int xid = checkCall(rpcCall, o);
        long timeoutNanos = o.timeoutNanos(params.callTimeoutMillis());
        link.blockingCallStarts();
        try {
            if (o.retry()) { // its bytes copied, it may outlive this connection: through a future
                return CallFuture.await(call(rpcCall, o, 0), link, xid, System.nanoTime()
                        + CallTimer.waitNanos(timeoutNanos), timeoutNanos, name, stats);
            }
            CallRequest c = calls.pooled(xid, rpcCall, o, ReadInPlace.INSTANCE, null); // as callAndRead: no future
            calls.submit(c, 0); // the caller's wait is the deadline
            return ReadInPlace.awaitMessage(c, link, timeoutNanos, TimeUnit.NANOSECONDS.toMillis(timeoutNanos), name,
                    stats);
        } finally {
            link.blockingCallEnds();
        }
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
        int xid = checkCall(rpcCall, o);
        Objects.requireNonNull(reader, "reader");
        if (o.retry()) {
            try (ReceivedMessage m = callAndWait(rpcCall, o)) {
                return reader.read(m.bytes());
            }
        }
        long timeoutNanos = o.timeoutNanos(params.callTimeoutMillis());
        CallRequest c = calls.pooled(xid, rpcCall, o, ReadInPlace.INSTANCE, null);
        link.blockingCallStarts();
        try {
            calls.submit(c, 0); // the caller's wait is the deadline
            return ReadInPlace.await(c, link, reader, timeoutNanos, TimeUnit.NANOSECONDS.toMillis(timeoutNanos), name,
                    stats);
        } finally {
            link.blockingCallEnds();
        }
    }

    /**
     * {@inheritDoc} Nothing is allocated per call on the inline path (the call slot is the
     * connection's); calls beyond the credit window wait, as with
     * {@link #call(MemorySegment, CallOptions)}. A call with {@link CallOptions#retry} has its
     * bytes copied and completes through a future.
     */
    @Override
    public void call(MemorySegment rpcCall, CallOptions o, ReplyCallback callback) {
        int xid = checkCall(rpcCall, o);
        Objects.requireNonNull(callback, "callback");
        if (o.retry()) {
            FutureShapes.callback(call(rpcCall, o), callback);
            return;
        }
        CallRequest c = calls.pooled(xid, rpcCall, o, CallbackCompletion.INSTANCE, callback);
        calls.submit(c, o.timeoutNanos(params.callTimeoutMillis()));
    }

    /** The XID of {@code rpcCall}, its arguments checked, a call we may send now. */
    private int checkCall(MemorySegment rpcCall, CallOptions o) {
        int xid = CallArguments.check(rpcCall, o, params.maxChunkBytes());
        backchannel.checkReady();
        return xid;
    }

    /** This connection (it never reconnects). */
    @Override
    public Connection connection() {
        return this;
    }

    /** Whether {@code t} runs this connection's immediate handler now (ReceivedMessage's reuse check). */
    boolean isImmediateDispatcher(Thread t) {
        return responder.isImmediateDispatcher(t);
    }

    /** Receives the requester wants posted now (tests: the order of the receive handshake). */
    int requiredReceives() {
        return demand.required();
    }

    /** Reusable call slots now free (tests: a slot is used again, an abandoned one is not). */
    int freeCallSlots() {
        return calls.free();
    }

    // ---- completion path ----

    /** Where the link's completions go. */
    Arrivals arrivals() {
        return arrivals;
    }

    /**
     * The connection is gone (CM disconnect, async error, failed completion, a defect of the
     * peer): frees every buffer and call exactly once. Safe from any thread holding no
     * transport lock.
     */
    void onLinkLost(Throwable cause) {
        life.lost(cause);
    }

    /** A received message was released: its buffer may let a waiting call go. */
    void releaseReceive(int slot) {
        arrivals.release(slot);
    }

    // ---- close: see ConnectionLife ----

    /**
     * Drains: refuses new calls, waits up to {@code timeout} for the calls somebody waits
     * for, then fails what is left and disconnects.
     */
    public void close(long timeout, TimeUnit unit) {
        life.close(timeout, unit);
    }

    @Override
    public void close() {
        close(5, TimeUnit.SECONDS);
    }

    @Override
    public String toString() {
        return name;
    }
}
