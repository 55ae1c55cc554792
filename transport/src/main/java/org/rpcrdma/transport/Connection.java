package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.security.SecureRandom;
import java.util.ArrayList;
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
import org.rpcrdma.transport.wire.OncRpc;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.Xdr;

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
 * <p>Over 400 lines because it is the documented public API of a connection (the call
 * overloads for timeouts, Reply chunks and direct data placement, the zero-allocation
 * shapes callAndRead and callback calls, the backchannel, the accessors); the work itself lives in the classes named above, chunks in ChunkMarshal,
 * CallExposure, ReadChunkPuller and ReplyWriter, and who polls in CompletionDriver.
 */
public final class Connection implements AutoCloseable {
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
    private final RdmaQueue rdma;
    private final Requester requester;
    /** Call slots of callAndRead and callback calls, used again (no allocation per call). */
    private final ReusableCall.Pool slots = new ReusableCall.Pool();
    private final Responder responder;
    private final Unmarshal unmarshal;
    /** close() waits here for outstanding calls; notified as messages arrive while CLOSING. */
    private final Object drained = new Object();
    private volatile State state = State.OPEN;
    private volatile Throwable lossCause;
    private volatile boolean closedByUser;
    private volatile boolean backchannelReady;
    /** See {@link #backwardChunks(boolean)}. */
    private volatile boolean backwardChunks;
    private volatile boolean backchannelAnnounced;
    /** Takes calls this connection could not complete (the client reconnects, a Backchannel waits). */
    private volatile Consumer<List<OutgoingCall>> orphanSink;
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
        this.params = params;
        this.stats = stats;
        this.link = link;
        this.receives = receives;
        this.sends = new SendQueue(link, sendContexts, params.signalEvery(), params.sendInline(), sendMemory, stats);
        this.requester = new Requester(name, Direction.ofOwnCalls(params.client()), params.ownCallCredits(),
                params.grantToPeer(), receives, sends, stats,
                () -> lost(new RpcRdmaException("every credit is held by an abandoned call and no reply came for "
                        + Requester.STALL_MILLIS + " ms: the peer is not answering")));
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
        settle();
    }

    /** Posts the receives the peer's grant needs (if the endpoint has not yet). Called once. */
    void start() {
        receives.replenish(requester.requiredReceives());
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
    void orphanSink(Consumer<List<OutgoingCall>> sink) {
        this.orphanSink = sink;
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
     * Sends an RPC call (bytes from its XID on; msg_type must be CALL) in this side's call
     * direction, with the endpoint's default timeout ({@link RpcRdmaOptions#callTimeoutMillis}).
     * The future completes with the reply (release it), or exceptionally with
     * {@link CallTimeoutException}, {@link ConnectionLostException}, {@link RdmaErrorException},
     * {@link MalformedReplyException} or {@link RpcRdmaException}. Calls beyond the credit
     * window wait, and are then sent by the thread that frees a credit: a segment confined
     * to the caller's thread is copied when its call has to wait; any other must stay valid
     * until the call completes or is sent (closed before, the call alone fails with
     * {@link IllegalStateException}).
     *
     * <p>Cancelling the future, {@code orTimeout}, or completing it yourself abandons the
     * call: its late reply is released when it arrives. If abandoned calls come to hold
     * every credit and the peer stays silent, the connection is reset (the peer is not
     * answering).
     *
     * @throws BackchannelNotEnabledException on a server whose client has not enabled its backchannel
     */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall) {
        return call(rpcCall, params.callTimeoutMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * {@link #call(MemorySegment)} allowing a reply of up to {@code maxReplyBytes}: when that
     * does not fit the receive inline threshold, the call offers a Reply chunk that large
     * (RFC 8166 §3.5.4). A call too large for the send inline threshold always goes as a
     * long call (RDMA_NOMSG, Position-Zero Read chunk) on a client; a server's backward
     * calls must fit inline.
     */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, int maxReplyBytes) {
        return call(rpcCall, null, null, maxReplyBytes);
    }

    /**
     * A call with direct data placement (RFC 8166 §3.4.5-3.4.6), as NFS READ and WRITE use
     * it. {@code payload} (may be null) marks the call's DDP-eligible argument, inside the
     * message or a segment of its own ({@link DdpArgument#of}, exposed in place, not copied):
     * when the call does not fit inline it travels in a read chunk the server pulls, the rest inline.
     * {@code receptacle} (may be null) is where a DDP result goes: offered as a write chunk
     * of its size; the reply's {@link ReceivedMessage#placedBytes()} says how many bytes the
     * server placed there (checked against what was offered), already copied into it when
     * the future completes (on the thread that takes the reply, so the receptacle must not
     * be confined to the caller's thread). A reply over the receive inline threshold needs
     * {@code maxReplyBytes} (a Reply chunk that large is offered).
     */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, DdpArgument payload, MemorySegment receptacle,
            int maxReplyBytes) {
        return call(rpcCall, payload, receptacle, maxReplyBytes, params.callTimeoutMillis(), TimeUnit.MILLISECONDS);
    }

    /** {@link #call(MemorySegment, DdpArgument, MemorySegment, int)} with its own timeout ({@code 0}: none). */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, DdpArgument payload, MemorySegment receptacle,
            int maxReplyBytes, long timeout, TimeUnit unit) {
        long timeoutNanos = CallTimer.timeoutNanos(timeout, unit);
        checkMaxReplyBytes(maxReplyBytes);
        if (payload != null) {
            payload.checkIn(rpcCall);
        }
        if (receptacle != null && (receptacle.byteSize() == 0 || receptacle.byteSize() > params.maxChunkBytes())) {
            throw new IllegalArgumentException("receptacle of " + receptacle.byteSize() + " bytes is not in [1, "
                    + params.maxChunkBytes() + "] (maxChunkBytes)");
        }
        if (receptacle != null && !receptacle.isAccessibleBy(OutgoingCall.NOT_THE_OWNER)) {
            // the placed data is copied in on the thread that takes the reply (the poller):
            // memory confined to the caller's thread can't be written there
            throw new IllegalArgumentException("receptacle is confined to its arena's thread; use shared, automatic,"
                    + " global or heap memory");
        }
        return call(rpcCall, timeoutNanos, false, maxReplyBytes, payload, receptacle);
    }

    /**
     * The largest reply a call here can allow ({@code maxReplyBytes}): {@code maxChunkBytes}
     * where calls may offer a Reply chunk, else what fits inline (a server whose client
     * takes no backward calls with chunks, RFC 8167 §5.3; a link without chunk memory).
     */
    public int maxReplyBytes() {
        return ChunkMarshal.replyLimit(params, link, backwardChunks);
    }

    /**
     * {@link #call(MemorySegment)} with its own timeout: {@code 0} means none, as for every
     * call shape and {@link RpcRdmaOptions#callTimeoutMillis}.
     *
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, long timeout, TimeUnit unit) {
        return call(rpcCall, CallTimer.timeoutNanos(timeout, unit), false);
    }

    /**
     * With {@code retry} the call's bytes are copied and, if the connection is lost before
     * the reply, handed to the owner to send again (same XID) after reconnect.
     */
    CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, long timeoutNanos, boolean retry) {
        return call(rpcCall, timeoutNanos, retry, 0, null, null);
    }

    /** As {@link #call(MemorySegment, long, boolean)}, allowing a reply of up to {@code maxReplyBytes}. */
    CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, long timeoutNanos, boolean retry, int maxReplyBytes) {
        checkMaxReplyBytes(maxReplyBytes);
        return call(rpcCall, timeoutNanos, retry, maxReplyBytes, null, null);
    }

    private CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, long timeoutNanos, boolean retry,
            int maxReplyBytes, DdpArgument payload, MemorySegment receptacle) {
        if (!params.client() && !backchannelReady) {
            throw new BackchannelNotEnabledException(name + ": client has not enabled its backchannel;"
                    + " backward call not sent");
        }
        OutgoingCall c = newCall(rpcCall, retry);
        if (c.isDone()) {
            return c;
        }
        c.maxReplyBytes(maxReplyBytes);
        c.ddp(payload, receptacle);
        c.deadline(name, timeoutNanos, false);
        submit(c);
        return c;
    }

    /** A call object for {@code rpcCall}, already failed if the bytes are not an RPC CALL. */
    static OutgoingCall newCall(MemorySegment rpcCall, boolean retry) {
        if (rpcCall.byteSize() < 8 || Xdr.getInt(rpcCall, 4) != OncRpc.CALL) {
            OutgoingCall c = new OutgoingCall(rpcCall.byteSize() >= 4 ? Xdr.getInt(rpcCall, 0) : 0, rpcCall, false);
            c.fail(new IllegalArgumentException("not an ONC RPC CALL message"));
            return c;
        }
        return new OutgoingCall(Xdr.getInt(rpcCall, 0), rpcCall, retry);
    }

    /**
     * A call made while its endpoint has no open connection (a client reconnecting, a
     * server's backchannel waiting for its client): its bytes copied, its deadline running.
     */
    static OutgoingCall parked(MemorySegment rpcCall, boolean retry, String where, long timeoutNanos) {
        OutgoingCall c = newCall(rpcCall, retry);
        if (!c.isDone()) {
            c.detach();
            c.deadline(where, timeoutNanos, true);
        }
        return c;
    }

    /** Sends a call handed over from an earlier connection (same XID, same future and deadline). */
    void resubmit(OutgoingCall c) {
        if (!c.isDone()) {
            submit(c);
        }
    }

    private void submit(OutgoingCall c) {
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
            notSent(List.of(c));
        }
        settle();
    }

    /** Calls that cannot go out here: to the owner unless the user closed us, else failed. */
    private void notSent(List<OutgoingCall> calls) {
        if (!handOver(calls)) {
            ConnectionLostException e = lostException();
            for (OutgoingCall c : calls) {
                c.fail(e);
            }
        }
    }

    private ConnectionLostException lostException() {
        Throwable cause = lossCause;
        String why = closedByUser ? "closed" : state == State.CLOSING ? "closing" : "connection lost";
        return new ConnectionLostException(name + ": " + why + (cause == null || closedByUser ? "" : ": "
                + cause.getMessage()), cause);
    }

    /**
     * Blocking form of {@link #call(MemorySegment, long, TimeUnit)}. The calling thread
     * takes its reply off the completion queue itself when it can (no hand-off from the
     * poller thread): in busy-poll mode it polls; in event mode, unless another thread is
     * already waiting on the completion channel, it arms the channel and sleeps on it, so
     * the wake-up the device causes is the caller's own. Completions for other calls, and
     * the peer's calls (handlers included), may then be dispatched on this thread. On
     * timeout or interrupt the call is abandoned. A {@code timeout} of 0 means none (it
     * waits for the reply or the connection's loss).
     *
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public ReceivedMessage callAndWait(MemorySegment rpcCall, long timeout, TimeUnit unit)
            throws InterruptedException, TimeoutException {
        return callAndWait(rpcCall, 0, timeout, unit);
    }

    /**
     * {@link #callAndWait(MemorySegment, long, TimeUnit)} allowing a reply of up to
     * {@code maxReplyBytes}, as {@link #call(MemorySegment, int)}: a Reply chunk that large is
     * offered when it does not fit the receive inline threshold. A {@code timeout} of 0 means
     * none; a negative one is refused ({@link IllegalArgumentException}).
     */
    public ReceivedMessage callAndWait(MemorySegment rpcCall, int maxReplyBytes, long timeout, TimeUnit unit)
            throws InterruptedException, TimeoutException {
        checkMaxReplyBytes(maxReplyBytes);
        long deadline = System.nanoTime() + CallTimer.waitNanos(CallTimer.timeoutNanos(timeout, unit));
        link.blockingCallStarts();
        try {
            return awaitReply(call(rpcCall, 0, false, maxReplyBytes, null, null), rpcCall, deadline, timeout, unit);
        } finally {
            link.blockingCallEnds();
        }
    }

    /**
     * A blocking call whose reply is read in place: {@code reader} runs on this thread with
     * the reply's bytes (from its XID), which are valid only until it returns; then the
     * receive buffer goes back. Nothing is allocated per call on the inline path (no
     * future, no {@link ReceivedMessage}): the call slot is the connection's and used again.
     * The caller takes its reply off the completion queue itself as in
     * {@link #callAndWait(MemorySegment, long, TimeUnit)}; on timeout or interrupt the call
     * is abandoned (its late reply released when it comes). A {@code timeout} of 0 means none.
     *
     * @return what {@code reader} returned
     * @throws IllegalArgumentException if {@code rpcCall} is not an ONC RPC CALL, or {@code timeout} is negative
     * @throws TimeoutException         if no reply came within {@code timeout} (the call is abandoned)
     * @throws RpcRdmaException         or a subclass, if the call failed (an RDMA_ERROR, a malformed
     *                                  reply, the connection's loss)
     */
    public <T> T callAndRead(MemorySegment rpcCall, ReplyReader<T> reader, long timeout, TimeUnit unit)
            throws InterruptedException, TimeoutException {
        return callAndRead(rpcCall, 0, reader, timeout, unit);
    }

    /**
     * {@link #callAndRead(MemorySegment, ReplyReader, long, TimeUnit)} allowing a reply of up
     * to {@code maxReplyBytes}: when that does not fit the receive inline threshold a Reply
     * chunk that large is offered (RFC 8166 §3.5.4), and the reader gets the reassembled reply.
     * A {@code timeout} of 0 means none; a negative one is refused ({@link IllegalArgumentException}).
     */
    public <T> T callAndRead(MemorySegment rpcCall, int maxReplyBytes, ReplyReader<T> reader, long timeout,
            TimeUnit unit) throws InterruptedException, TimeoutException {
        checkMaxReplyBytes(maxReplyBytes);
        Objects.requireNonNull(reader, "reader");
        int xid = callXid(rpcCall);
        long timeoutNanos = CallTimer.timeoutNanos(timeout, unit);
        ReusableCall c = slots.take(xid, rpcCall, null);
        c.maxReplyBytes(maxReplyBytes);
        link.blockingCallStarts();
        try {
            submit(c);
            return c.await(link, reader, timeoutNanos, unit.toMillis(timeout), name, stats);
        } finally {
            link.blockingCallEnds();
        }
    }

    /**
     * An asynchronous call answered through {@code callback}, exactly once: {@code onReply}
     * with the reply's bytes, valid only until it returns (the receive buffer then goes
     * back), or {@code onFailure} (an RDMA_ERROR, a malformed reply, the connection's loss,
     * the connection's call timeout). Both run on the thread that took the completion off
     * the queue (a poller, or a caller of a blocking call; a timeout's onFailure, an expiry
     * thread of the call timer): they must not block. Nothing is
     * allocated per call on the inline path; the segment must stay valid until the call
     * completes. Calls beyond the credit window wait, as with {@link #call(MemorySegment)}.
     *
     * @throws IllegalArgumentException if {@code rpcCall} is not an ONC RPC CALL
     */
    public void call(MemorySegment rpcCall, ReplyCallback callback) {
        call(rpcCall, 0, callback);
    }

    /**
     * {@link #call(MemorySegment, ReplyCallback)} allowing a reply of up to
     * {@code maxReplyBytes}, as {@link #call(MemorySegment, int)}: a Reply chunk that large is
     * offered when it does not fit the receive inline threshold.
     */
    public void call(MemorySegment rpcCall, int maxReplyBytes, ReplyCallback callback) {
        checkMaxReplyBytes(maxReplyBytes);
        Objects.requireNonNull(callback, "callback");
        int xid = callXid(rpcCall);
        ReusableCall c = slots.take(xid, rpcCall, callback);
        c.maxReplyBytes(maxReplyBytes);
        c.deadline(name, TimeUnit.MILLISECONDS.toNanos(params.callTimeoutMillis()), false);
        submit(c);
    }

    /** The XID of {@code rpcCall}, checked to be an ONC RPC CALL we may send now. */
    private int callXid(MemorySegment rpcCall) {
        if (rpcCall.byteSize() < 8 || Xdr.getInt(rpcCall, 4) != OncRpc.CALL) {
            throw new IllegalArgumentException("not an ONC RPC CALL message");
        }
        if (!params.client() && !backchannelReady) {
            throw new BackchannelNotEnabledException(name + ": client has not enabled its backchannel;"
                    + " backward call not sent");
        }
        return Xdr.getInt(rpcCall, 0);
    }

    private void checkMaxReplyBytes(int maxReplyBytes) {
        if (maxReplyBytes < 0 || maxReplyBytes > params.maxChunkBytes()) {
            throw new IllegalArgumentException("maxReplyBytes " + maxReplyBytes + " is not in [0, "
                    + params.maxChunkBytes() + "] (maxChunkBytes)");
        }
    }

    /** Whether {@code t} runs this connection's immediate handler now (ReceivedMessage's reuse check). */
    boolean isImmediateDispatcher(Thread t) {
        return responder.isImmediateDispatcher(t);
    }

    /** Receives the requester wants posted now (tests: the order of the receive handshake). */
    int requiredReceives() {
        return requester.requiredReceives();
    }

    /** Reusable call slots now free (tests: a slot is used again, an abandoned one is not). */
    int freeCallSlots() {
        return slots.free();
    }

    private ReceivedMessage awaitReply(CompletableFuture<ReceivedMessage> f, MemorySegment rpcCall, long deadline,
            long timeout, TimeUnit unit) throws InterruptedException, TimeoutException {
        try {
            if (!f.isDone()) {
                link.pollOnCaller(f::isDone, deadline); // false: the poller thread completes f
            }
            ReceivedMessage reply = f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            boolean own = !(f instanceof OutgoingCall c) || c.deliveredBy == Thread.currentThread();
            (own ? stats.repliesTakenByCaller : stats.repliesHandedOff).increment();
            return reply;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new RpcRdmaException("call failed", e.getCause());
        } catch (TimeoutException e) {
            f.completeExceptionally(new CallTimeoutException(name, Xdr.getInt(rpcCall, 0), unit.toMillis(timeout)));
            throw new TimeoutException(name + ": call 0x" + Integer.toHexString(Xdr.getInt(rpcCall, 0))
                    + " got no reply within " + unit.toMillis(timeout) + " ms (abandoned)");
        } catch (InterruptedException e) {
            f.cancel(false);
            throw e;
        }
    }

    // ---- completion path (one completion thread at a time) ----

    /** A signalled Send completed: its context and all older ones are free. */
    void onSendCompleted(int slot) {
        sends.completed(slot);
        settle();
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
        try {
            // ORDER: repost before handling, so that a reply we send (which lets the peer
            // send another message) never finds fewer receives posted than credits granted;
            // the fence completes the handshake with a sender raising requiredReceives (see
            // Requester.pumpLocked): our take is visible to it, or its need to us.
            VarHandle.fullFence();
            receives.replenishAfterCompletion(requester.requiredReceives());
            keep = unmarshal.dispatch(slot, buf, length);
        } catch (RuntimeException e) {
            sends.noteFailure(e);
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
        settle();
    }

    /** A signalled RDMA Read or Write completed (the link's token). */
    void onRdmaCompleted(int token) {
        if (state == State.LOST) {
            return;
        }
        try {
            rdma.completed(token);
        } catch (RuntimeException e) {
            sends.noteFailure(e);
        }
        settle();
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
            settle();
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

    /** Acts on a link failure noted under a lock, now that none is held. */
    void settle() {
        Throwable f = sends.failure();
        if (f != null && state != State.LOST) {
            lost(f);
        }
    }

    /** The connection is gone: frees every buffer and call exactly once. Safe from any thread holding no transport lock. */
    void lost(Throwable cause) {
        synchronized (this) {
            if (state == State.LOST) {
                return;
            }
            state = State.LOST;
            lossCause = cause;
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
        List<OutgoingCall> again = new ArrayList<>();
        ConnectionLostException e = lostException();
        for (OutgoingCall c : t.sent()) {
            if (c.isDone()) {
                c.releaseExposure(); // abandoned: nobody waits; an exposure held for its reply goes now
                continue;
            }
            if (c.retry) {
                again.add(c); // sent, maybe executed: only the caller may allow a resend
            } else {
                c.fail(e);
            }
        }
        for (OutgoingCall c : t.unsent()) {
            if (!c.isDone()) {
                again.add(c); // never sent: always safe to send on the next connection
            }
        }
        // The owner hears of every loss, even with nothing to carry over: a client with a
        // backchannel must reconnect anyway (RFC 8167 §5.4), one without releases the link.
        if (!handOver(again)) {
            for (OutgoingCall c : again) {
                c.fail(e);
            }
        }
    }

    /** Gives calls to the owner unless the user closed us; false if not taken. */
    private boolean handOver(List<OutgoingCall> calls) {
        Consumer<List<OutgoingCall>> sink = orphanSink;
        if (sink == null || closedByUser) {
            return false;
        }
        for (OutgoingCall c : calls) {
            c.detach();
        }
        sink.accept(calls);
        return true;
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
            closedByUser = true;
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
