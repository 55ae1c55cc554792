package org.rpcrdma.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.rpcrdma.transport.core.CreditAccount;
import org.rpcrdma.transport.core.Direction;
import org.rpcrdma.transport.core.Events;
import org.rpcrdma.transport.core.Link;
import org.rpcrdma.transport.core.ReceivePool;
import org.rpcrdma.transport.core.RpcRdmaStats;
import org.rpcrdma.transport.core.SendContextRing;
import org.rpcrdma.transport.core.XidTable;
import org.rpcrdma.transport.wire.OncRpc;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaDecoder;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.RpcRdmaProtocolException;
import org.rpcrdma.transport.wire.Xdr;

/**
 * One RPC-over-RDMA v1 connection, both directions on one RC QP (RFC 8166, RFC 8167).
 *
 * <p>On the client (connection initiator) {@link #call} sends forward calls and an enabled
 * backchannel handler serves backward calls; on the server {@link #call} sends backward
 * calls and the endpoint's handler serves forward calls. Each direction has its own
 * {@link CreditAccount} and {@link XidTable}; receives come from one {@link ReceivePool}
 * shared by both directions, kept at (our outstanding calls + credits granted to the peer)
 * posted buffers (RFC 8167 §4.2–4.3). Messages are inline RDMA_MSG, copied into a
 * pre-registered send-context buffer (no chunks yet: larger messages fail the call).
 *
 * <p>Threading: {@code on*} completion methods are called by one completion thread;
 * {@link #call}, {@link IncomingCall#reply} and {@link #close} may be called from any
 * thread. Sends are serialised by one lock so they are posted in send-context order.
 */
public final class Connection implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Connection.class.getName());

    /** ONC RPC program a client calls to tell our server its backchannel is ready. */
    public static final int BACKCHANNEL_CONTROL_PROGRAM = 0x40524442; // "@RDB", user-defined range

    /** Immutable per-connection parameters, fixed after private-data negotiation. */
    record Params(boolean client, int sendInline, int receiveInline, int ownCallCredits, int grantToPeer,
            boolean remoteInvalidation, int signalEvery) {
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

    /**
     * A call of ours that this connection can no longer complete but that may be sent again
     * on a new connection with the same XID (RFC 8167 §5.4): either it was never sent, or
     * the caller asked for retry. {@code message} is a private copy.
     */
    record Orphan(int xid, MemorySegment message, CompletableFuture<ReceivedMessage> future, boolean retry) {}

    private final Params params;
    private final RpcRdmaStats stats;
    private final Direction own;
    private final CreditAccount credits;
    private final XidTable<Pending> pending;
    private final ReceivePool receives;
    private final SendContextRing ring;
    private final MemorySegment[] sendBuffers;
    private final RpcRdmaHeader rxHeader;
    private final Object sendLock = new Object();
    /** close() waits here for outstanding calls; notified as replies arrive while CLOSING. */
    private final Object drained = new Object();
    private final ArrayDeque<Outbound> sendQueue = new ArrayDeque<>();
    private final ArrayDeque<Pending> creditWaiters = new ArrayDeque<>();
    /**
     * Calls holding a credit but not sent because no receive could be posted for their
     * reply (the user holds too many received messages): back-pressure instead of an RNR
     * error that would drop the connection. Sent as buffers are released.
     */
    private final ArrayDeque<Pending> bufferWaiters = new ArrayDeque<>();
    private final AtomicInteger peerOutstanding = new AtomicInteger();
    private final AtomicInteger peerHighWater = new AtomicInteger();
    private final String name;
    private volatile CallHandler handler;
    private volatile boolean backchannelReady;
    private volatile boolean closedByUser;
    /** Takes orphaned calls when the connection is lost (the client reconnects, a Backchannel waits). */
    private volatile Consumer<List<Orphan>> orphanSink;
    /** Server: told when a client enables its backchannel here, with the client's instance id. */
    private volatile BiConsumer<Connection, Long> backchannelListener;
    private volatile long clientInstance;
    private volatile State state = State.OPEN;
    private volatile Throwable lossCause;
    private Link link;

    /**
     * @param sendMemory    registered memory for {@code ring size * sendInline} bytes
     * @param receiveMemory registered memory for {@code receive count * receiveInline} bytes
     */
    Connection(String name, Params params, int receiveCount, int receiveBatch, int sendContexts,
            MemorySegment sendMemory, MemorySegment receiveMemory, RpcRdmaStats stats) {
        this.name = name;
        this.params = params;
        this.stats = stats;
        this.own = Direction.ofOwnCalls(params.client());
        this.credits = new CreditAccount(own, params.ownCallCredits(), stats);
        this.pending = new XidTable<>(own, params.ownCallCredits(),
                own == Direction.FORWARD ? stats.unmatchedForwardReplies::add : stats.unmatchedBackwardReplies::add);
        this.receives = new ReceivePool(receiveMemory, receiveCount, params.receiveInline(), receiveBatch,
                this::postReceives, stats);
        this.ring = new SendContextRing(sendContexts, Math.min(params.signalEvery(), sendContexts), stats);
        this.sendBuffers = new MemorySegment[sendContexts];
        for (int i = 0; i < sendContexts; i++) {
            sendBuffers[i] = sendMemory.asSlice((long) i * params.sendInline(), params.sendInline());
        }
        this.rxHeader = RpcRdmaHeader.forInlineThreshold(params.receiveInline());
        Events.state(name, "OPEN", "inline " + params.sendInline() + "/" + params.receiveInline());
    }

    /** Binds the hardware and posts the initial receives. Called once by the endpoint. */
    void start(Link link) {
        this.link = link;
        receives.replenish(requiredReceives());
    }

    private void postReceives(int[] slots, int count) {
        link.postReceives(slots, count);
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

    /** Whether the peer accepts Send With Invalidate (RFC 8797 §4.3). */
    public boolean remoteInvalidation() {
        return params.remoteInvalidation();
    }

    public RpcRdmaStats stats() {
        return stats;
    }

    /** Credits the peer granted for our calls (the current window). */
    public int ownCallWindow() {
        return credits.window();
    }

    /** Most of our calls ever outstanding at once. */
    public int ownCallHighWater() {
        return credits.highWater();
    }

    /** Most peer calls ever outstanding at once, counted on receipt (the responder's own count). */
    public int peerCallHighWater() {
        return peerHighWater.get();
    }

    /** Receive-pool buffer {@code slot} (the link writes received bytes here). */
    MemorySegment receiveBuffer(int slot) {
        return receives.buffer(slot);
    }

    /** Receive-pool buffer address for the verbs link's SGE. */
    long receiveAddress(int slot) {
        return receives.address(slot);
    }

    public int postedReceives() {
        return receives.posted();
    }

    public boolean isOpen() {
        return state == State.OPEN;
    }

    /**
     * Client only: serve backward calls with {@code handler} and grant the server
     * {@code credits} backward credits (RFC 8167 §5.2). Tells our server through the
     * backchannel control program; a foreign server learns it from the upper layer.
     */
    public CompletableFuture<Void> enableBackchannel(CallHandler handler) {
        if (!params.client()) {
            throw new IllegalStateException("only the client enables a backchannel");
        }
        if (params.grantToPeer() < 1) {
            throw new IllegalStateException("connection was opened with 0 backward credits");
        }
        this.handler = handler;
        // Arguments: the client's instance id (hyper), so a server can recognise the same
        // client on a new connection and resend backward calls there (RFC 8167 §5.4).
        MemorySegment msg = Arena.ofAuto().allocate(48);
        int xid = (int) System.nanoTime();
        int[] words = {xid, OncRpc.CALL, OncRpc.RPC_VERSION, BACKCHANNEL_CONTROL_PROGRAM, 1, 0, 0, 0, 0, 0};
        for (int i = 0; i < words.length; i++) {
            Xdr.putInt(msg, i * 4L, words[i]);
        }
        Xdr.putInt(msg, 40, (int) (clientInstance >>> 32));
        Xdr.putInt(msg, 44, (int) clientInstance);
        return call(msg).thenAccept(ReceivedMessage::release);
    }

    /** Client: the handler given to {@link #enableBackchannel}, or null. */
    CallHandler backchannelHandler() {
        return params.client() ? handler : null;
    }

    /** Client: the instance id sent when enabling the backchannel (same on every connection). */
    void clientInstance(long id) {
        this.clientInstance = id;
    }

    /** The owner that takes calls this connection could not complete (see {@link Orphan}). */
    void orphanSink(Consumer<List<Orphan>> sink) {
        this.orphanSink = sink;
    }

    /** Server: called when a client enables its backchannel on this connection. */
    void backchannelListener(BiConsumer<Connection, Long> l) {
        this.backchannelListener = l;
    }

    /** Server side: the serving handler (set by the endpoint). */
    void handler(CallHandler h) {
        this.handler = h;
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
     * direction. The future completes with the reply (release it), or exceptionally with
     * {@link ConnectionLostException}, {@link RdmaErrorException} or {@link RpcRdmaException}.
     * Calls beyond the credit window wait; the segment must stay valid until the call
     * completes or is sent.
     *
     * @throws BackchannelNotEnabledException on a server whose client has not enabled its backchannel
     */
    public CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall) {
        return call(rpcCall, false);
    }

    /**
     * {@link #call}; with {@code retry} the call's bytes are copied and, if the connection
     * is lost before the reply, handed to the owner to send again after reconnect.
     */
    CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, boolean retry) {
        if (!params.client() && !backchannelReady) {
            throw new BackchannelNotEnabledException(name + ": client has not enabled its backchannel;"
                    + " backward call not sent");
        }
        Pending p = new Pending(retry && rpcCall.isNative() ? heapCopy(rpcCall) : rpcCall, null, retry);
        return submit(p);
    }

    /** Sends a call orphaned by an earlier connection, with its XID and future. */
    void resubmit(Orphan o) {
        submit(new Pending(o.message(), o.future(), o.retry()));
    }

    private static MemorySegment heapCopy(MemorySegment m) {
        return MemorySegment.ofArray(m.toArray(ValueLayout.JAVA_BYTE));
    }

    private CompletableFuture<ReceivedMessage> submit(Pending p) {
        MemorySegment rpcCall = p.message;
        if (rpcCall.byteSize() < 8 || Xdr.getInt(rpcCall, 4) != OncRpc.CALL) {
            p.future.completeExceptionally(new IllegalArgumentException("not an ONC RPC CALL message"));
            return p.future;
        }
        if (RpcRdma.INLINE_MSG_HEADER_BYTES + rpcCall.byteSize() > params.sendInline()) {
            p.future.completeExceptionally(new RpcRdmaException("call of " + rpcCall.byteSize()
                    + " bytes exceeds the send inline threshold " + params.sendInline() + " (chunks not supported)"));
            return p.future;
        }
        p.xid = Xdr.getInt(rpcCall, 0);
        if (state != State.OPEN) {
            if (!handOver(List.of(p))) {
                p.future.completeExceptionally(new ConnectionLostException(name + ": connection not open", lossCause));
            }
            return p.future;
        }
        if (credits.tryAcquire()) {
            p.run();
            return p.future;
        }
        Events.CreditWait w = new Events.CreditWait();
        w.begin();
        p.waitEvent = w;
        synchronized (creditWaiters) {
            creditWaiters.add(p); // before acquire: run() removes it, on whichever thread
        }
        if (!credits.acquire(p)) {
            p.copyForLater(); // the caller may reuse its segment once call() returns
        }
        return p.future;
    }

    /**
     * Blocking form of {@link #call}. In busy-poll mode the calling thread polls the
     * completion queue itself while it waits (no hand-off from the poller thread: the
     * reply, and any backward call that arrives meanwhile, is processed on this thread).
     */
    public ReceivedMessage callAndWait(MemorySegment rpcCall, long timeout, TimeUnit unit)
            throws InterruptedException, TimeoutException {
        try {
            CompletableFuture<ReceivedMessage> f = call(rpcCall);
            long deadline = System.nanoTime() + unit.toNanos(timeout);
            Link l = link;
            if (!f.isDone() && l != null) {
                l.pollOnCaller(f::isDone, deadline); // false: event mode, the poller thread completes f
            }
            return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new RpcRdmaException("call failed", e.getCause());
        }
    }

    // ---- send path ----

    /** A call of ours from issue to reply. Runs as the credit-granted continuation. */
    private final class Pending implements Runnable {
        final CompletableFuture<ReceivedMessage> future;
        final boolean retry;
        MemorySegment message;
        int xid;
        Events.CreditWait waitEvent;

        /** {@code future} null: a new call; otherwise one moved here from a lost connection. */
        Pending(MemorySegment m, CompletableFuture<ReceivedMessage> future, boolean retry) {
            this.message = m;
            this.retry = retry;
            if (future != null) {
                this.future = future; // its latency event was begun by the first connection
                return;
            }
            this.future = new CompletableFuture<>();
            Events.Call event = new Events.Call();
            if (!event.isEnabled()) {
                return; // no recording: no completion hook, nothing kept per call
            }
            event.begin();
            this.future.whenComplete((r, t) -> {
                event.end();
                if (event.shouldCommit()) {
                    event.connection = name;
                    event.direction = own.name();
                    event.xid = xid;
                    event.outcome = t == null ? "reply" : t.getClass().getSimpleName();
                    event.commit();
                }
            });
        }

        void copyForLater() {
            synchronized (this) {
                MemorySegment copy = MemorySegment.ofArray(message.toArray(ValueLayout.JAVA_BYTE));
                message = copy;
            }
        }

        @Override
        public void run() {
            synchronized (creditWaiters) {
                creditWaiters.remove(this);
            }
            Events.CreditWait w = waitEvent;
            if (w != null && w.shouldCommit()) {
                w.connection = name;
                w.direction = own.name();
                w.window = credits.window();
                w.commit();
            }
            waitEvent = null;
            if (state != State.OPEN) {
                notSent();
                return;
            }
            // A receive for the reply must be posted before the call goes out (rnr_retry 0);
            // if none can be (the user holds received messages), wait for a release.
            if (!receives.ensurePosted(requiredReceives())) {
                synchronized (bufferWaiters) {
                    bufferWaiters.add(this);
                }
                stats.receiveBufferWaits.increment();
                if (state == State.LOST && removeBufferWaiter(this)) {
                    notSent(); // lost() drained the waiters before we were added
                    return;
                }
                retryBufferWaiters(); // a buffer may have come back in between
                return;
            }
            try {
                pending.put(xid, this);
            } catch (IllegalStateException e) {
                credits.release();
                future.completeExceptionally(new RpcRdmaException(e.getMessage()));
                return;
            }
            if (state == State.LOST && pending.remove(xid) == this) {
                notSent(); // lost() ran between the check and put() and did not see this call
                return;
            }
            MemorySegment m;
            synchronized (this) {
                m = message;
            }
            sendMsg(xid, requestCredits(), m);
            stats.callsSent.increment();
        }

        /** A call holding a credit that will not go out on this connection: to the owner, or failed. */
        private void notSent() {
            credits.release();
            if (!handOver(List.of(this))) {
                future.completeExceptionally(new ConnectionLostException(name + ": connection lost", lossCause));
            }
        }
    }

    private boolean removeBufferWaiter(Pending p) {
        synchronized (bufferWaiters) {
            return bufferWaiters.removeFirstOccurrence(p);
        }
    }

    /** A received message was released: its buffer may let a parked call go. */
    private void releaseReceive(int slot) {
        receives.release(slot);
        retryBufferWaiters();
    }

    private void retryBufferWaiters() {
        while (true) {
            Pending p;
            synchronized (bufferWaiters) {
                if (bufferWaiters.isEmpty() || state != State.OPEN && state != State.CLOSING) {
                    return;
                }
                try {
                    if (!receives.ensurePosted(requiredReceives())) {
                        return;
                    }
                } catch (RuntimeException e) {
                    lost(e);
                    return;
                }
                p = bufferWaiters.poll();
            }
            p.run(); // it still holds its credit
        }
    }

    /** The rdma_credit of a call is our request for credits (RFC 8166 §3.3.1). */
    private int requestCredits() {
        return credits.max();
    }

    private int requiredReceives() {
        return credits.outstanding() + params.grantToPeer();
    }

    /** One message waiting for a send context. */
    private record Outbound(int kind, int xid, int credit, MemorySegment rpc, int errVersOrChunk) {
        static final int MSG = 0;
        static final int ERROR = 1;

        static Outbound rdmaMsg(int xid, int credit, MemorySegment rpc) {
            return new Outbound(MSG, xid, credit, rpc, 0);
        }

        static Outbound error(int xid, int credit, int err) {
            return new Outbound(ERROR, xid, credit, null, err);
        }
    }

    /** An RDMA_MSG; allocates nothing unless it has to wait for a send context. */
    private void sendMsg(int xid, int credit, MemorySegment rpc) {
        synchronized (sendLock) {
            if (sendQueue.isEmpty()) {
                int slot = ring.tryAcquire();
                if (slot >= 0) {
                    postMsg(slot, xid, credit, rpc);
                    return;
                }
            }
            // the caller may reuse a native segment once we return: queue a copy
            sendQueue.add(Outbound.rdmaMsg(xid, credit,
                    rpc.isNative() ? MemorySegment.ofArray(rpc.toArray(ValueLayout.JAVA_BYTE)) : rpc));
        }
    }

    private void send(Outbound o) {
        synchronized (sendLock) {
            if (sendQueue.isEmpty()) {
                int slot = ring.tryAcquire();
                if (slot >= 0) {
                    fillAndPost(slot, o);
                    return;
                }
            }
            sendQueue.add(o.kind == Outbound.MSG && o.rpc.isNative()
                    ? Outbound.rdmaMsg(o.xid, o.credit, MemorySegment.ofArray(o.rpc.toArray(ValueLayout.JAVA_BYTE)))
                    : o);
        }
    }

    private void pumpSends() {
        synchronized (sendLock) {
            while (!sendQueue.isEmpty()) {
                int slot = ring.tryAcquire();
                if (slot < 0) {
                    return;
                }
                fillAndPost(slot, sendQueue.poll());
            }
        }
    }

    /** Caller holds sendLock, so slots are posted in ring order. */
    private void fillAndPost(int slot, Outbound o) {
        if (o.kind == Outbound.MSG) {
            postMsg(slot, o.xid, o.credit, o.rpc);
            return;
        }
        MemorySegment buf = sendBuffers[slot];
        int len;
        if (o.errVersOrChunk == RpcRdma.ERR_VERS) {
            len = RpcRdmaEncoder.encodeErrVers(buf, 0, o.xid, o.credit);
            stats.errVersSent.increment();
        } else {
            len = RpcRdmaEncoder.encodeErrChunk(buf, 0, o.xid, o.credit);
            stats.errChunkSent.increment();
        }
        post(slot, buf, len);
    }

    /** Caller holds sendLock. The RPC message is copied behind the header: one SGE (see bench). */
    private void postMsg(int slot, int xid, int credit, MemorySegment rpc) {
        MemorySegment buf = sendBuffers[slot];
        int h = RpcRdmaEncoder.encodeInlineMsg(buf, 0, xid, credit);
        MemorySegment.copy(rpc, 0, buf, h, rpc.byteSize());
        post(slot, buf, h + (int) rpc.byteSize());
    }

    private void post(int slot, MemorySegment buf, int len) {
        boolean signalled = ring.shouldSignal();
        if (signalled) {
            stats.sendsSignalled.increment();
        }
        try {
            link.postSend(slot, buf, len, signalled);
        } catch (RuntimeException e) {
            lost(e);
        }
    }

    /**
     * Sends {@code bytes} as one Send exactly as given: no encoding, no credit, no XID
     * table. Only for tests that play a misbehaving peer against a real server.
     */
    void postRaw(MemorySegment bytes) {
        synchronized (sendLock) {
            int slot = ring.tryAcquire();
            if (slot < 0) {
                throw new IllegalStateException("no free send context");
            }
            MemorySegment buf = sendBuffers[slot];
            MemorySegment.copy(bytes, 0, buf, 0, bytes.byteSize());
            post(slot, buf, (int) bytes.byteSize());
        }
    }

    // ---- completion path (one completion thread) ----

    /** A signalled Send completed: its context and all older ones are free. */
    public void onSendCompleted(int slot) {
        if (state == State.LOST) {
            return; // the ring was reset when the connection was lost
        }
        ring.completed(slot);
        pumpSends();
    }

    /** A receive completed with {@code length} bytes in pool buffer {@code slot}. */
    public void onReceive(int slot, int length) {
        if (state == State.LOST) {
            return; // buffers were reclaimed when the connection was lost
        }
        MemorySegment buf = receives.completed(slot);
        boolean keep = false;
        try {
            // ORDER: repost before handling, so that a reply we send (which lets the peer
            // send another message) never finds fewer receives posted than credits granted.
            receives.replenish(requiredReceives());
            keep = dispatch(slot, buf, length);
        } finally {
            if (!keep) {
                receives.release(slot);
            }
            if (state == State.CLOSING) {
                synchronized (drained) {
                    drained.notifyAll();
                }
            }
            if (state == State.OPEN || state == State.CLOSING) {
                try {
                    receives.replenish(requiredReceives());
                } catch (RuntimeException e) {
                    lost(e);
                }
            }
        }
    }

    /** A posted receive came back flushed (QP in error): the connection is gone. */
    public void onReceiveFlushed(int slot) {
        if (state != State.LOST) {
            receives.flushed(slot);
        }
        lost(new RpcRdmaException("receive flushed"));
    }

    /** Returns true if the buffer was handed on (released later). */
    private boolean dispatch(int slot, MemorySegment buf, int length) {
        RpcRdmaHeader h = rxHeader;
        try {
            RpcRdmaDecoder.decode(buf, 0, length, h);
        } catch (RpcRdmaProtocolException e) {
            stats.badHeaders.increment();
            switch (e.response()) {
                case ERR_VERS -> send(Outbound.error(e.xid(), params.grantToPeer(), RpcRdma.ERR_VERS));
                case ERR_CHUNK -> send(Outbound.error(e.xid(), params.grantToPeer(), RpcRdma.ERR_CHUNK));
                case DROP_CONNECTION -> {
                    LOG.log(Level.WARNING, "{0}: dropping connection: {1}", name, e.getMessage());
                    lost(new RpcRdmaException("peer sent a malformed header: " + e.getMessage(), e));
                }
            }
            return false;
        }
        switch (h.proc()) {
            case RpcRdma.RDMA_ERROR -> {
                stats.rdmaErrorsReceived.increment();
                Pending p = pending.match(h.xid());
                if (p != null) {
                    credits.release();
                    p.future.completeExceptionally(new RdmaErrorException(h.xid(), h.errorCode(), h.versLow(), h.versHigh()));
                }
                return false;
            }
            case RpcRdma.RDMA_MSG, RpcRdma.RDMA_MSGP -> {
                return dispatchInline(slot, buf, h);
            }
            case RpcRdma.RDMA_NOMSG -> {
                // No inline RPC header: the direction can't be told, so rdma_credit is not
                // used (RFC 8167 §4.1). We take no chunks yet: ERR_CHUNK.
                stats.creditsIgnored.increment();
                send(Outbound.error(h.xid(), params.grantToPeer(), RpcRdma.ERR_CHUNK));
                return false;
            }
            default -> {
                return false; // RDMA_DONE: nothing to do without Reply chunks
            }
        }
    }

    private boolean dispatchInline(int slot, MemorySegment buf, RpcRdmaHeader h) {
        long off = h.messageOffset();
        int len = h.messageLength();
        int type = h.rpcMsgType();
        if (type == RpcRdma.RPC_REPLY) {
            stats.repliesReceived.increment();
            // A Reply's rdma_credit is a grant for our direction (RFC 8166 §3.3.3).
            credits.grant(h.credit());
            Pending p = pending.match(h.rpcXid());
            if (p == null) {
                return false;
            }
            credits.release();
            if (!h.hasNoChunks()) {
                p.future.completeExceptionally(new RpcRdmaException("reply uses chunks we never offered"));
                return false;
            }
            p.future.complete(new ReceivedMessage(buf.asSlice(off, len), () -> releaseReceive(slot)));
            return true;
        }
        if (type != RpcRdma.RPC_CALL) {
            stats.badHeaders.increment();
            return false;
        }
        stats.callsReceived.increment();
        // A Call's rdma_credit is the peer's request, not a grant: it does not touch our account.
        if (!h.hasNoChunks()) {
            // Chunks are not supported here yet, in either direction (RFC 8166 §4.5.2).
            send(Outbound.error(h.xid(), params.grantToPeer(), RpcRdma.ERR_CHUNK));
            return false;
        }
        CallHandler hd = handler;
        if (params.client() && hd == null) {
            LOG.log(Level.WARNING, "{0}: backward call while backchannel disabled, dropped", name);
            stats.creditViolations.increment();
            return false;
        }
        int now = peerOutstanding.incrementAndGet();
        peerHighWater.accumulateAndGet(now, Math::max);
        if (now > params.grantToPeer()) {
            // The peer exceeded the credits we granted: a conforming peer never does.
            stats.creditViolations.increment();
            peerOutstanding.decrementAndGet();
            lost(new RpcRdmaException("peer exceeded its " + params.grantToPeer() + " credits"));
            return false;
        }
        if (!params.client() && len >= 16 && Xdr.getInt(buf, off + 12) == BACKCHANNEL_CONTROL_PROGRAM) {
            long instance = len >= 48 ? (long) Xdr.getInt(buf, off + 40) << 32 | (Xdr.getInt(buf, off + 44) & 0xffffffffL) : 0;
            backchannelReady = true;
            replyControl(h.rpcXid());
            BiConsumer<Connection, Long> l = backchannelListener;
            if (l != null && instance != 0) {
                try {
                    l.accept(this, instance);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, name + ": backchannel listener threw", e);
                }
            }
            return false;
        }
        if (hd == null) {
            peerOutstanding.decrementAndGet();
            return false;
        }
        Incoming in = new Incoming(h.rpcXid(), new ReceivedMessage(buf.asSlice(off, len), () -> releaseReceive(slot)));
        try {
            hd.handle(in);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, name + ": call handler threw", e);
        }
        return true;
    }

    private void replyControl(int xid) {
        MemorySegment r = MemorySegment.ofArray(new byte[24]);
        int[] w = {xid, OncRpc.REPLY, OncRpc.MSG_ACCEPTED, OncRpc.AUTH_NONE, 0, OncRpc.SUCCESS};
        for (int i = 0; i < w.length; i++) {
            Xdr.putInt(r, i * 4L, w[i]);
        }
        sendReply(xid, r);
    }

    private void sendReply(int xid, MemorySegment rpcReply) {
        if (RpcRdma.INLINE_MSG_HEADER_BYTES + rpcReply.byteSize() > params.sendInline()) {
            throw new RpcRdmaException("reply of " + rpcReply.byteSize() + " bytes exceeds the send inline threshold");
        }
        peerOutstanding.decrementAndGet();
        if (state == State.LOST) {
            return;
        }
        // A Reply's rdma_credit grants the peer credits for its direction (RFC 8166 §3.3.3).
        sendMsg(xid, params.grantToPeer(), rpcReply);
        stats.repliesSent.increment();
    }

    private final class Incoming implements IncomingCall {
        private final int xid;
        private final ReceivedMessage msg;
        private boolean replied;

        Incoming(int xid, ReceivedMessage msg) {
            this.xid = xid;
            this.msg = msg;
        }

        @Override
        public ReceivedMessage message() {
            return msg;
        }

        @Override
        public int xid() {
            return xid;
        }

        @Override
        public Connection connection() {
            return Connection.this;
        }

        @Override
        public void reply(MemorySegment rpcReply) {
            synchronized (this) {
                if (replied) {
                    throw new IllegalStateException("call 0x" + Integer.toHexString(xid) + " already answered");
                }
                replied = true;
            }
            try {
                if (rpcReply.byteSize() < 8 || Xdr.getInt(rpcReply, 0) != xid) {
                    throw new IllegalArgumentException("reply XID does not match call 0x" + Integer.toHexString(xid));
                }
                sendReply(xid, rpcReply);
            } finally {
                msg.release();
            }
        }
    }

    // ---- loss and close ----

    /** The link reports the connection gone (CM disconnect, async error, flushed completion). */
    public void onLinkLost(Throwable cause) {
        lost(cause);
    }

    private void lost(Throwable cause) {
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
        Link l = link;
        if (l != null) {
            l.disconnect();
        }
        // ORDER: buffers back in the pool before any caller learns of the loss, so what a
        // failed call observes is the final state.
        receives.shutdown();
        ring.reset();
        synchronized (sendLock) {
            sendQueue.clear();
        }
        failAll(new ConnectionLostException(name + ": connection lost"
                + (cause == null ? "" : ": " + cause.getMessage()), cause));
    }

    private void failAll(ConnectionLostException e) {
        List<Pending> ps = pending.removeAll();
        List<Pending> again = new java.util.ArrayList<>();
        for (Pending p : ps) {
            credits.release();
            if (p.retry) {
                again.add(p); // sent, maybe executed: only the caller may allow a resend
            } else {
                p.future.completeExceptionally(e);
            }
        }
        List<Pending> waiting;
        synchronized (creditWaiters) {
            waiting = List.copyOf(creditWaiters);
            creditWaiters.clear();
        }
        for (Pending p : waiting) {
            credits.cancel(p);
            again.add(p); // never sent: always safe to send on the next connection
        }
        synchronized (bufferWaiters) {
            for (Pending p : bufferWaiters) {
                credits.release();
                again.add(p); // never sent either
            }
            bufferWaiters.clear();
        }
        // The owner hears of every loss, even with nothing to carry over: a client with a
        // backchannel must reconnect anyway (RFC 8167 §5.4).
        if (!handOver(again)) {
            for (Pending p : again) {
                p.future.completeExceptionally(e);
            }
        }
    }

    /** Gives calls to the owner's orphan sink unless closed by the user; false if not taken. */
    private boolean handOver(List<Pending> ps) {
        Consumer<List<Orphan>> sink = orphanSink;
        if (sink == null || closedByUser) {
            return false;
        }
        List<Orphan> os = new java.util.ArrayList<>(ps.size());
        for (Pending p : ps) {
            MemorySegment m;
            synchronized (p) {
                m = p.message;
            }
            os.add(new Orphan(p.xid, m.isNative() ? heapCopy(m) : m, p.future, p.retry));
        }
        sink.accept(os);
        return true;
    }

    private int bufferWaiting() {
        synchronized (bufferWaiters) {
            return bufferWaiters.size();
        }
    }

    /** Outstanding calls of ours (waiting for a reply). */
    public int outstandingCalls() {
        return pending.size();
    }

    /**
     * Drains: refuses new calls, waits up to {@code timeout} for outstanding calls, then
     * fails what is left and disconnects.
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
            while (pending.size() + credits.waiting() + bufferWaiting() > 0 && state != State.LOST
                    && (left = deadline - System.nanoTime()) > 0) {
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
