package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.rpcrdma.transport.core.Direction;
import org.rpcrdma.transport.core.Events;
import org.rpcrdma.transport.core.Link;
import org.rpcrdma.transport.core.ReceivePool;
import org.rpcrdma.transport.core.ReceiveQueue;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

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
 * buffers (RFC 8167 §4.3). This class ties them together: the public API, classifying
 * what arrives, and the connection's life.
 *
 * <p>Calls end exactly once: with the reply, an error, their timeout, the caller's
 * cancellation, or the connection's loss (then {@link ConnectionLostException}, or handed
 * to the endpoint to be sent again on a new connection if they were never sent or asked
 * for retry).
 *
 * <p>Threading: the {@code on*} completion methods are called by one completion thread at
 * a time; everything else from any thread. Lock order: Connection (state only) →
 * Requester → SendQueue → ReceiveQueue → link. No future is completed and no user code
 * (handlers, future callbacks, the endpoint's hand-over) runs while any of them is held.
 *
 * <p>Chunks are ChunkMarshal's, CallExposure's, ReadChunkPuller's and ReplyWriter's work, who
 * polls is CompletionDriver's.
 */
public final class Connection implements BidirectionalCaller, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Connection.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Immutable per-connection parameters, fixed after private-data negotiation. */
    record Params(boolean client, int sendInline, int receiveInline, int ownCallCredits, int grantToPeer,
            boolean remoteInvalidation, int signalEvery, long callTimeoutMillis, int maxChunkBytes,
            int maxChunkSegments) {
        /** With the default chunk limits. */
        Params(boolean client, int sendInline, int receiveInline, int ownCallCredits, int grantToPeer,
                boolean remoteInvalidation, int signalEvery, long callTimeoutMillis) {
            this(client, sendInline, receiveInline, ownCallCredits, grantToPeer, remoteInvalidation, signalEvery,
                    callTimeoutMillis, RpcRdmaOptions.DEFAULT_MAX_CHUNK_BYTES, RpcRdmaOptions.DEFAULT_MAX_CHUNK_SEGMENTS);
        }

        Params {
            if (sendInline < RpcRdma.INLINE_MSG_HEADER_BYTES + 8 || receiveInline < RpcRdma.INLINE_MSG_HEADER_BYTES + 8) {
                throw new IllegalArgumentException("inline thresholds too small");
            }
            if (ownCallCredits < 1 || grantToPeer < 0) {
                throw new IllegalArgumentException("credits out of range");
            }
        }
    }

    private enum State { OPEN, CLOSING, LOST }

    private final String name;
    private final Params params;
    private final StatsCounters stats;
    private final Link link;
    private final ReceiveQueue receives;
    private final SendQueue sends;
    /** The one owner of this connection's failure: forces {@link #lost} once. */
    private final LinkFailure failure = new LinkFailure(this::lost);
    private final RdmaQueue rdma;
    private final Requester requester;
    /** How many receives stay posted: the one place that decides it. */
    private final ReceiveDemand demand;
    /** Call slots of callAndRead and callback calls, used again (no allocation per call). */
    private final CallRequestPool slots = new CallRequestPool();
    private final Responder responder;
    private final Unmarshal unmarshal;
    /** close() waits here for outstanding calls; notified as messages arrive while CLOSING. */
    private final Object drained = new Object();
    private volatile State state = State.OPEN;
    private volatile boolean backchannelReady;
    /** See {@link #backwardChunks(boolean)}. */
    private volatile boolean backwardChunks;
    private volatile boolean backchannelAnnounced;
    /** Fails or hands over the calls this connection cannot complete. */
    private final CallHandOver handOver;
    /** Server: told when a client enables its backchannel here, with the client's instance id. */
    private volatile BiConsumer<Connection, Long> backchannelListener;
    private volatile long clientInstance;
    /** Set by the endpoint once the peer is known (the CM id's, or the in-memory pair's). */
    private volatile java.net.InetSocketAddress remoteAddress;

    /**
     * @param receives   this connection's receive buffers (the endpoint may have posted some
     *                   already: a client posts before it connects)
     * @param sendMemory registered memory for {@code sendContexts * sendInline} bytes
     */
    Connection(String name, Params params, Link link, ReceiveQueue receives, int sendContexts, MemorySegment sendMemory,
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
                () -> lost(new RpcRdmaException("every credit is held by an abandoned call and no reply came for "
                        + CallSweep.STALL_MILLIS + " ms: the peer is not answering")));
        this.rdma = new RdmaQueue(link, stats);
        this.responder = new Responder(this, params.client(), params.grantToPeer(), params.sendInline(), sends, stats,
                new ReplyWriter(link, rdma, sends, params.sendInline(), params.maxChunkBytes(), stats),
                new ReadChunkPuller(link, rdma), params.maxChunkBytes(), params.maxChunkSegments(),
                link.rdmaDepth() > 0);
        this.unmarshal = new Unmarshal(this, RpcRdmaHeader.forInlineThreshold(params.receiveInline()), requester,
                responder, stats);
        Events.state(name, "OPEN", "inline " + params.sendInline() + "/" + params.receiveInline());
    }

    /**
     * The receive buffers of one QP, posting through {@code link} and counting in
     * {@code stats}: made by the endpoint before the connection, so receives can be posted
     * before the peer can send (RFC 8167 §4.3).
     */
    static ReceivePool receivePool(Link link, MemorySegment memory, int count, int bufferSize, int batch,
            StatsCounters stats) {
        return new ReceivePool(memory, count, bufferSize, batch, (slots, n) -> {
            link.postReceives(slots, n);
            stats.receivesPosted.add(n);
            stats.receiveBatches.increment();
        });
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
        return state == State.OPEN;
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
        backchannelAnnounced = true;
        MemorySegment msg = BackchannelControl.enableCall(RANDOM.nextInt(), clientInstance, backwardChunks);
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

    /** Client: whether the backchannel was announced with our control program (to repeat after reconnect). */
    boolean backchannelAnnounced() {
        return backchannelAnnounced;
    }

    /** Client: the instance id sent when enabling the backchannel (the same on every connection). */
    void clientInstance(long id) {
        this.clientInstance = id;
    }

    /**
     * The client's instance id: on a client its own ({@link RpcRdmaClient#clientId()}); on a
     * server the one the client gave when it enabled its backchannel here (what
     * {@link RpcRdmaServer#backchannel(long)} finds it by), 0 until then.
     */
    public long clientId() {
        return clientInstance;
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

    /** Server: called when a client enables its backchannel on this connection. */
    void backchannelListener(BiConsumer<Connection, Long> l) {
        this.backchannelListener = l;
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
        backchannelReady = true;
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
        return call(rpcCall, timeoutNanos, o.retry(), o.maxReplyBytes(), o.ddpArgument(), o.receptacle());
    }

    /**
     * The largest reply a call here can allow ({@code maxReplyBytes}): {@code maxChunkBytes}
     * where calls may offer a Reply chunk, else what fits inline (a server whose client
     * takes no backward calls with chunks, RFC 8167 §5.3; a link without chunk memory).
     */
    @Override
    public int maxReplyBytes() {
        return ChunkMarshal.replyLimit(params, link, backwardChunks);
    }

    private CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, long timeoutNanos, boolean retry,
            int maxReplyBytes, DdpArgument payload, MemorySegment receptacle) {
        checkBackchannelReady();
        if (rpcCall.byteSize() < 8 || Xdr.getInt(rpcCall, 4) != OncRpc.CALL) {
            return CallRequest.issue(rpcCall, retry).future(); // failed already
        }
        CallRequest c = slots.take();
        c.start(Xdr.getInt(rpcCall, 0), rpcCall, retry, null);
        CallFuture f = CallFuture.startOn(c);
        c.maxReplyBytes(maxReplyBytes);
        c.ddp(payload, receptacle);
        submit(c, timeoutNanos);
        return f;
    }

    private void checkBackchannelReady() {
        if (!params.client() && !backchannelReady) {
            throw new BackchannelNotEnabledException(name + ": client has not enabled its backchannel;"
                    + " backward call not sent");
        }
    }

    /**
     * Sends a call just issued, its deadline ({@code timeoutNanos}, 0: none) running from
     * now: every call shape, the reconnecting client's and a backchannel's calls come here.
     */
    void submit(CallRequest c, long timeoutNanos) {
        checkBackchannelReady();
        c.deadline(name, timeoutNanos, false);
        submit(c);
    }

    /**
     * The one submit: sends {@code c} here, a call just issued or one handed over from an
     * earlier connection (same XID, same future and deadline), or hands it on if this
     * connection can no longer send.
     */
    void submit(CallRequest c) {
        if (c.isDone()) {
            return; // abandoned while it was between connections
        }
        // Checked here, not at issue: a call parked or handed over meets this connection's
        // negotiated thresholds only now.
        if (ChunkMarshal.needsChunks(c, params.sendInline(), params.receiveInline())
                && !ChunkMarshal.expose(name, params, link, c, backwardChunks)) {
            return;
        }
        boolean taken;
        try {
            taken = state == State.OPEN && requester.submit(c);
        } catch (RpcRdmaException e) {
            c.fail(e);
            return;
        }
        if (!taken) {
            handOver.notSent(List.of(c), state == State.CLOSING);
        }
    }

    /**
     * {@inheritDoc} The calling thread takes its reply off the completion queue itself when
     * it can (no hand-off from the poller thread): in busy-poll mode it polls; in event mode,
     * unless another thread is already waiting on the completion channel, it arms the
     * channel and sleeps on it, so the wake-up the device causes is the caller's own.
     * Completions for other calls, and the peer's calls (handlers included), may then be
     * dispatched on this thread. On timeout ({@link CallTimeoutException}) or interrupt the
     * call is abandoned.
     */
    @Override
    public ReceivedMessage callAndWait(MemorySegment rpcCall, CallOptions o) throws InterruptedException {
        int xid = checkCall(rpcCall, o);
        long timeoutNanos = o.timeoutNanos(params.callTimeoutMillis());
        long deadline = System.nanoTime() + CallTimer.waitNanos(timeoutNanos);
        link.blockingCallStarts();
        try {
            return awaitReply(call(rpcCall, o, 0), xid, deadline, timeoutNanos);
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
        CallRequest c = slots.take();
        c.start(xid, rpcCall, false, null);
        c.start(ReadInPlace.INSTANCE);
        c.maxReplyBytes(o.maxReplyBytes());
        c.ddp(o.ddpArgument(), o.receptacle());
        link.blockingCallStarts();
        try {
            submit(c, 0); // the caller's wait is the deadline
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
        CallRequest c = slots.take();
        c.start(xid, rpcCall, false, callback);
        c.start(CallbackCompletion.INSTANCE);
        c.maxReplyBytes(o.maxReplyBytes());
        c.ddp(o.ddpArgument(), o.receptacle());
        submit(c, o.timeoutNanos(params.callTimeoutMillis()));
    }

    /** The XID of {@code rpcCall}, its arguments checked, a call we may send now. */
    private int checkCall(MemorySegment rpcCall, CallOptions o) {
        int xid = CallArguments.check(rpcCall, o, params.maxChunkBytes());
        checkBackchannelReady();
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
        return slots.free();
    }

    private ReceivedMessage awaitReply(CompletableFuture<ReceivedMessage> f, int xid, long deadline, long timeoutNanos)
            throws InterruptedException {
        try {
            if (!f.isDone()) {
                link.pollOnCaller(f::isDone, deadline); // false: the poller thread completes f
            }
            ReceivedMessage reply = f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            boolean own = !(f instanceof CallFuture c) || c.deliveredBy == Thread.currentThread();
            (own ? stats.repliesTakenByCaller : stats.repliesHandedOff).increment();
            return reply;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new RpcRdmaException("call failed", e.getCause());
        } catch (TimeoutException e) {
            CallTimeoutException t = new CallTimeoutException(name, xid, TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
            if (!f.completeExceptionally(t)) {
                return FutureShapes.await(f); // it ended meanwhile: take its outcome
            }
            throw t;
        } catch (InterruptedException e) {
            f.cancel(false);
            throw e;
        }
    }

    // ---- completion path (one completion thread at a time) ----

    /** A signalled Send completed: its context and all older ones are free. */
    void onSendCompleted(int slot) {
        sends.completed(slot);
    }

    /** The RPC message at {@code [offset, offset + length)} of receive buffer {@code slot} (completion thread). */
    MemorySegment messageView(int slot, long offset, long length) {
        return receives.view(slot, offset, length);
    }

    /** A receive completed with {@code length} bytes in receive buffer {@code slot}. */
    void onReceive(int slot, int length) {
        if (state == State.LOST) {
            return; // buffers were reclaimed when the connection was lost
        }
        MemorySegment buf;
        try {
            buf = receives.completed(slot);
        } catch (IllegalStateException e) {
            if (state == State.LOST) {
                return; // lost between the check and here: the buffer was reclaimed
            }
            throw e;
        }
        boolean keep = false;
        RuntimeException broke = null;
        try {
            // ORDER: repost before handling, so that a reply we send (which lets the peer
            // send another message) never finds fewer receives posted than credits granted
            demand.afterCompletion();
            keep = unmarshal.dispatch(slot, buf, length);
        } catch (RuntimeException e) {
            broke = e; // no lock is held here: the loss runs on this thread, after the buffer went back
        } finally {
            if (!keep) {
                releaseReceive(slot);
            }
            if (state == State.CLOSING) {
                synchronized (drained) {
                    drained.notifyAll();
                }
            }
        }
        if (broke != null) {
            lost(broke);
        }
    }

    /** A signalled RDMA Read or Write completed (the link's token). */
    void onRdmaCompleted(int token) {
        if (state == State.LOST) {
            return;
        }
        try {
            rdma.completed(token);
        } catch (RuntimeException e) {
            lost(e); // no lock is held here
        }
    }

    /** A posted receive came back flushed (QP in error): the connection is gone. */
    void onReceiveFlushed(int slot) {
        if (state != State.LOST) {
            try {
                receives.flushed(slot);
            } catch (IllegalStateException e) {
                // reclaimed by a concurrent loss
            }
        }
        lost(new RpcRdmaException("receive flushed"));
    }

    /** The link reports the connection gone (CM disconnect, async error, failed completion). */
    void onLinkLost(Throwable cause) {
        lost(cause);
    }

    /** A received message was released: its buffer may let a waiting call go. */
    void releaseReceive(int slot) {
        receives.release(slot);
        if (state != State.LOST) {
            requester.pump();
        }
    }

    /**
     * Chunked backward calls (RFC 8167 §5.3) on this connection: a client's, whether it
     * takes them (set by its endpoint, said in the enable call); a server's, whether the
     * client said so (then it may send them).
     */
    void backwardChunks(boolean v) {
        this.backwardChunks = v;
    }

    boolean backwardChunks() {
        return backwardChunks;
    }

    /** Server: the client enabled its backchannel here with our control program (and was answered). */
    void backchannelEnabled(long instance) {
        if (instance != 0) {
            clientInstance = instance;
        }
        BiConsumer<Connection, Long> l = backchannelListener;
        if (l != null && instance != 0) {
            try {
                l.accept(this, instance);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, name + ": backchannel listener threw", e);
            }
        }
    }

    // ---- loss and close ----

    /** The connection is gone: frees every buffer and call exactly once. Safe from any thread holding no transport lock. */
    void lost(Throwable cause) {
        synchronized (this) {
            if (state == State.LOST) {
                return;
            }
            state = State.LOST;
            handOver.lostBecause(cause);
        }
        stats.connectionsLost.increment();
        Events.state(name, "LOST", String.valueOf(cause));
        LOG.log(Level.DEBUG, "{0}: connection lost: {1}", name, String.valueOf(cause));
        link.disconnect();
        // ORDER: buffers back in the pool and sends stopped before any caller learns of
        // the loss, so what a failed call observes is the final state.
        receives.shutdown();
        sends.shutdown();
        rdma.shutdown();
        Requester.Taken t = requester.takeAll();
        synchronized (drained) {
            drained.notifyAll();
        }
        handOver.lost(t);
    }

    /**
     * Drains: refuses new calls, waits up to {@code timeout} for the calls somebody waits
     * for, then fails what is left and disconnects.
     */
    public void close(long timeout, TimeUnit unit) {
        synchronized (this) {
            if (state == State.OPEN) {
                state = State.CLOSING;
            }
            handOver.closedByUser();
        }
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        synchronized (drained) {
            long left;
            while (requester.active() > 0 && state != State.LOST && (left = deadline - System.nanoTime()) > 0) {
                try {
                    // woken by each message received while CLOSING; the bound covers a reply
                    // that slipped in between the check and the wait
                    drained.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 50)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        lost(new RpcRdmaException("closed"));
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
