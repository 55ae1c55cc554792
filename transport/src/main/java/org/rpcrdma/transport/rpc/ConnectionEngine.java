package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.ReplyCallback;
import org.rpcrdma.transport.ReplyReader;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.chunk.ChunkMarshal;
import org.rpcrdma.transport.chunk.RdmaQueue;
import org.rpcrdma.transport.chunk.ReadChunkPuller;
import org.rpcrdma.transport.chunk.ReplyWriter;
import org.rpcrdma.transport.link.CompletionSink;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.link.LinkFailure;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * The engine of one RPC-over-RDMA v1 connection, both directions on one RC QP (RFC 8166,
 * RFC 8167): what a {@link Connection} (its public face) delegates to, and what the link,
 * the endpoints and the rest of the engine hold.
 *
 * <p>The work is split as in Linux xprtrdma: a {@link Requester} for our calls (credits and
 * XIDs of our direction), a {@link Responder} for the peer's (their credits, RDMA_ERROR),
 * {@link Marshal} for how a message travels, a {@link SendQueue} for Sends and a
 * {@link ReceiveQueue} shared by both directions, kept at (our outstanding calls + credits
 * granted to the peer) posted buffers (RFC 8167 §4.3). {@link ConnectionLife} is the
 * connection's life and loss, {@link Arrivals} what the completion thread hands it,
 * {@link CallSubmit} how our calls enter it and {@link BackchannelEnabling} whether its
 * backward direction is on.
 *
 * <p>Threading: {@link Arrivals} is called by one completion thread at a time; everything
 * else from any thread. Lock order: ConnectionLife (state only) → Requester → SendQueue →
 * ReceiveQueue → link. No future is completed and no user code (handlers, future
 * callbacks, the endpoint's hand-over) runs while any of them is held.
 */
public final class ConnectionEngine implements CompletionSink {
    private final String name;
    private final Connection facade;
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
    private volatile InetSocketAddress remoteAddress;

    /**
     * @param receives   this connection's receive buffers (the endpoint may have posted some
     *                   already: a client posts before it connects)
     * @param sendMemory registered memory for {@code sendContexts * sendInline} bytes
     */
    public ConnectionEngine(String name, ConnectionParams params, Link link, ReceiveQueue receives, int sendContexts,
            MemorySegment sendMemory, StatsCounters stats) {
        this.name = name;
        this.handOver = new CallHandOver(name);
        this.params = params;
        this.stats = stats;
        this.link = link;
        this.receives = receives;
        this.sends = new SendQueue(link, sendContexts, params.signalEvery(), params.sendInline(), sendMemory, stats, failure);
        this.demand = new ReceiveDemand(receives, params.grantToPeer());
        this.requester = new Requester(name, Direction.ofOwnCalls(params.client()), params.ownCallCredits(), demand, sends, failure, stats,
                params.silenceMillis(), reason -> onLinkLost(new RpcRdmaException(reason)));
        RdmaQueue rdma = new RdmaQueue(link, stats);
        this.backchannel = new BackchannelEnabling(name, params.client());
        this.facade = ApiBridge.access().connection(this);
        this.responder = new Responder(this, receives, backchannel, params.client(), params.grantToPeer(), params.sendInline(), sends, stats,
                new ReplyWriter(link, rdma, sends, params.sendInline(), params.maxChunkBytes(), stats),
                new ReadChunkPuller(link, rdma), params.maxChunkBytes(), params.maxChunkSegments(),
                link.rdmaDepth() > 0);
        Unmarshal unmarshal = new Unmarshal(this, receives, RpcRdmaHeader.forInlineThreshold(params.receiveInline()), requester,
                responder, stats);
        this.life = new ConnectionLife(name, stats, link, receives, sends, rdma, requester, handOver);
        this.arrivals = new Arrivals(life, receives, demand, unmarshal, requester, sends, rdma);
        this.calls = new CallSubmit(name, params, link, life, requester, handOver, backchannel, stats);
        link.unsolicitedMessages(!params.client() || responder.handler() != null);
        Events.state(name, "OPEN", "inline " + params.sendInline() + "/" + params.receiveInline());
    }

    /** The public face of this connection: what users, handlers and listeners are given. */
    public Connection connection() {
        return facade;
    }

    // ---- set up by the endpoint ----

    /**
     * Server: Sends made before the connection is accepted (a backward call from the
     * endpoint's onConnect) wait until {@link #accepted}; the QP cannot send before.
     */
    public void holdSendsUntilAccepted() {
        sends.hold();
    }

    /** Server: rdma_accept returned; held Sends go out. */
    public void accepted() {
        sends.resume();
    }

    /** Posts the receives the peer's grant needs (if the endpoint has not yet). Called once. */
    public void start() {
        demand.start();
    }

    public void remoteAddress(InetSocketAddress a) {
        this.remoteAddress = a;
    }

    public InetSocketAddress remoteAddress() {
        return remoteAddress;
    }

    /** The owner that takes calls this connection could not complete. */
    public void orphanSink(Consumer<List<CallRequest>> sink) {
        handOver.owner(sink);
    }

    /** Server side: the serving handler (set by the endpoint). */
    public void handler(CallHandler h) {
        responder.handler(h);
        link.unsolicitedMessages(!params.client() || h != null);
    }

    /** Whether the backward direction is on, and with chunks. */
    public BackchannelEnabling backchannel() {
        return backchannel;
    }

    // ---- state (the facade's getters) ----

    public ConnectionParams params() {
        return params;
    }

    public int rdmaDepth() {
        return link.rdmaDepth();
    }

    public boolean isClient() {
        return params.client();
    }

    @Override
    public boolean remoteInvalidation() {
        return params.remoteInvalidation();
    }

    /** The live counters, for the transport's own counting. */
    @Override
    public StatsCounters counters() {
        return stats;
    }

    public Requester requester() {
        return requester;
    }

    public Responder responder() {
        return responder;
    }

    public ReceiveQueue receives() {
        return receives;
    }

    public boolean isOpen() {
        return life.isOpen();
    }

    /** Client: the backchannel handler, or null. */
    public CallHandler backchannelHandler() {
        return params.client() ? responder.handler() : null;
    }

    /** Receives the requester wants posted now (the order of the receive handshake). */
    public int requiredReceives() {
        return demand.required();
    }

    /** Reusable call slots now free (a slot is used again, an abandoned one is not). */
    public int freeCallSlots() {
        return calls.free();
    }

    /** Whether {@code t} runs this connection's immediate handler now (ReceivedMessage's reuse check). */
    public boolean isImmediateDispatcher(Thread t) {
        return responder.isImmediateDispatcher(t);
    }

    // ---- backward direction ----

    /** Client: serve backward calls with {@code handler} (see {@link Connection#serveBackwardCalls}). */
    public void serveBackwardCalls(CallHandler handler) {
        if (!params.client()) {
            throw new IllegalStateException("only the client serves backward calls");
        }
        if (params.grantToPeer() < 1) {
            throw new IllegalStateException("connection was opened with 0 backward credits (RpcRdmaOptions.backwardCredits)");
        }
        responder.handler(Objects.requireNonNull(handler, "handler"));
        link.unsolicitedMessages(true); // backward calls may come now
    }

    /** Client: serve backward calls and tell the server through our control program. */
    public CompletableFuture<Void> enableBackchannel(CallHandler handler) {
        serveBackwardCalls(handler);
        MemorySegment msg = backchannel.announce();
        return call(msg, CallOptions.DEFAULT).thenApply(reply -> BackchannelControl.checkAnswer(name, reply));
    }

    /** Server: the upper layer learned that the client is ready for backward calls. */
    public void markBackchannelReady() {
        if (params.client()) {
            throw new IllegalStateException("only a server sends backward calls");
        }
        backchannel.markReady();
    }

    // ---- calls: the shapes of RpcCaller ----

    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions o) {
        checkCall(rpcCall, o);
        return call(rpcCall, o, CallArguments.timeoutNanos(o, params.callTimeoutMillis()));
    }

    /** A call {@link CallArguments#check checked} by its endpoint, with its timeout in nanoseconds (0: none). */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions o, long timeoutNanos) {
        return calls.future(rpcCall, timeoutNanos, o.retry(), o.maxReplyBytes(), o.ddpArgument(), o.receptacle());
    }

    public int maxReplyBytes() {
        return ChunkMarshal.replyLimit(params, link, backchannel.backwardChunks());
    }

    /** Every call shape, the reconnecting client's and a backchannel's calls come here: see {@link CallSubmit}. */
    public void submit(CallRequest c) {
        calls.submit(c);
    }

    public ReceivedMessage callAndWait(MemorySegment rpcCall, CallOptions o) throws InterruptedException {
        int xid = checkCall(rpcCall, o);
        long timeoutNanos = CallArguments.timeoutNanos(o, params.callTimeoutMillis());
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

    public <T> T callAndRead(MemorySegment rpcCall, CallOptions o, ReplyReader<T> reader) throws InterruptedException {
        int xid = checkCall(rpcCall, o);
        Objects.requireNonNull(reader, "reader");
        if (o.retry()) {
            try (ReceivedMessage m = callAndWait(rpcCall, o)) {
                return reader.read(m.bytes());
            }
        }
        long timeoutNanos = CallArguments.timeoutNanos(o, params.callTimeoutMillis());
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

    public void call(MemorySegment rpcCall, CallOptions o, ReplyCallback callback) {
        int xid = checkCall(rpcCall, o);
        Objects.requireNonNull(callback, "callback");
        if (o.retry()) {
            FutureShapes.callback(call(rpcCall, o), callback);
            return;
        }
        CallRequest c = calls.pooled(xid, rpcCall, o, CallbackCompletion.INSTANCE, callback);
        calls.submit(c, CallArguments.timeoutNanos(o, params.callTimeoutMillis()));
    }

    /** The XID of {@code rpcCall}, its arguments checked, a call we may send now. */
    private int checkCall(MemorySegment rpcCall, CallOptions o) {
        int xid = CallArguments.check(rpcCall, o, params.maxChunkBytes());
        backchannel.checkReady();
        return xid;
    }

    // ---- completion path ----

    // The link's completions, handed to Arrivals (one completion thread at a time).

    @Override
    public void received(int slot, int length) {
        arrivals.received(slot, length);
    }

    @Override
    public void sendCompleted(int slot) {
        arrivals.sendCompleted(slot);
    }

    @Override
    public void rdmaCompleted(int token) {
        arrivals.rdmaCompleted(token);
    }

    @Override
    public void flushed(int slot) {
        arrivals.flushed(slot);
    }

    @Override
    public int outstandingCalls() {
        return requester.outstanding();
    }

    /** Receive-pool buffer {@code slot} (in-memory links write received bytes here). */
    @Override
    public MemorySegment receiveBuffer(int slot) {
        return receives.buffer(slot);
    }

    /**
     * The connection is gone (CM disconnect, async error, failed completion, a defect of the
     * peer): frees every buffer and call exactly once. Safe from any thread holding no
     * transport lock.
     */
    @Override
    public void onLinkLost(Throwable cause) {
        life.lost(cause);
    }

    /** A received message was released: its buffer may let a waiting call go. */
    public void releaseReceive(int slot) {
        arrivals.release(slot);
    }

    /** The link below (tests that play a raw peer post on it). */
    public Link link() {
        return link;
    }

    /** The send queue (tests that play a raw peer send through it). */
    public SendQueue sends() {
        return sends;
    }

    /** Drains, then fails what is left and disconnects: see {@link ConnectionLife#close}. */
    public void close(long timeout, TimeUnit unit) {
        life.close(timeout, unit);
    }

    @Override
    public String toString() {
        return name;
    }
}
