package org.rpcrdma.transport.link;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.util.function.BooleanSupplier;
import org.rpcrdma.transport.LinkClosedException;
import org.rpcrdma.transport.chunk.CallerBuffers;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.chunk.ChunkMemory;
import org.rpcrdma.transport.chunk.RegisteredMemory;
import org.rpcrdma.transport.verbs.CmId;

/**
 * The hardware of one connection (≈ Linux {@code rpcrdma_ep}) as the connection's engine
 * sees it: a {@link Link} over PD, one CQ (with a completion channel in event mode), the RC
 * QP, registered send and receive memory, and the poller thread that feeds completions to
 * its {@link CompletionSink}; or, on a server with a {@link CompletionGroup}, a place on one
 * of the group's shared CQs, whose thread feeds them. Built after address resolution (client) or on CONNECT_REQUEST
 * (server); destroyed in the kernel's order: disconnect, stop the poller, QP, CQ, channel,
 * MRs, PD (the id is the endpoint's).
 *
 * <p>Threading: posts come from any thread (callers, handlers, the poller); completions are
 * polled by one thread at a time, as {@link CompletionDriver} decides: the poller thread, or
 * a caller waiting in callAndWait for its reply. Everything that touches native memory (posts, CQ polls,
 * the channel wait) holds the read side of the {@link LinkGate}; {@link #destroy} frees under its
 * write side, so nothing native is used after free however late a thread comes, and a post
 * after destroy gets {@link LinkClosedException}. Completions are copied out of the native
 * {@code ibv_wc} array under the gate and dispatched from Java arrays after releasing it:
 * dispatch runs user code, which may post (a read lock held there would block behind a
 * waiting destroy's write lock) or block for as long as it likes.
 *
 * <p>This class holds the life cycle (start, disconnect, destroy) and the Link's entry
 * points; the rest is one class per concern: the gate in {@link LinkGate}, the verbs objects'
 * set-up and teardown in {@link LinkHardware}, the posting of work requests in
 * {@link WorkRequests}, the polling of a CQ in {@link CompletionPoller}, the classification
 * of completions in {@link LinkCompletions}, who takes them off which CQ in {@link LinkPolling}
 * (who polls in {@link CompletionDriver}), chunk memory in {@link ChunkMemory}.
 */
public final class VerbsLink implements Link {
    private static final System.Logger LOG = System.getLogger(VerbsLink.class.getName());

    private final CmId id;
    private final LinkGate gate = new LinkGate(this::refused);
    private final LinkHardware hw;
    /** Chunk memory, caller registrations and exposures, each under the gate. */
    private final LinkMemory memory;
    private final WorkRequests posts;
    private final LinkCompletions completions;
    /** Who takes the completions: the link's own poller and driver, or its group's thread. */
    private final LinkPolling polling;
    /** Set at construction (it sizes the queues), lowered once to what the peer granted ({@link #limitRdmaDepth}). */
    private volatile int rdmaDepth;
    private volatile CompletionSink conn;
    private volatile boolean disconnected;
    /** Serializes destroy: a second caller returns only once the first has freed everything. */
    private final Object destroyLock = new Object();
    private boolean destroyed;

    /**
     * @param chunkMemory bytes of registered chunk memory (0: none, no chunks at all)
     * @param rdmaDepth   RDMA Reads/Writes outstanding at once (the negotiated initiator
     *                    depth; 0: this side does none)
     * @param memoryWindows expose chunk memory through memory windows if the device has them
     *                    (else, or false: a registration per RPC)
     * @param callerBuffers the endpoint's registered buffers, exposed in place (null: none)
     */
    public VerbsLink(CmId id, int sendContexts, int sendInline, int receiveBuffers, int recvInline, boolean busyPoll,
            int generation, long chunkMemory, int rdmaDepth, boolean memoryWindows, CallerBuffers callerBuffers) {
        this(id, sendContexts, sendInline, receiveBuffers, recvInline, busyPoll, generation, chunkMemory, rdmaDepth,
                memoryWindows, callerBuffers, null, null);
    }

    /**
     * As above, the QP taking its receives from {@code shared} (a server's shared receive
     * queue, in whose PD everything of this link is made) when not null; receives are then
     * posted by its pool, never through {@link #postReceives}; and completing on one of
     * {@code group}'s CQs (the server's completion threads take its completions) when not
     * null, else on a CQ of its own with its own poller thread.
     */
    public VerbsLink(CmId id, int sendContexts, int sendInline, int receiveBuffers, int recvInline, boolean busyPoll,
            int generation, long chunkMemory, int rdmaDepth, boolean memoryWindows, CallerBuffers callerBuffers,
            SharedReceiveHardware shared, CompletionGroup group) {
        this.id = id;
        this.rdmaDepth = rdmaDepth;
        this.hw = new LinkHardware(id, sendContexts, sendInline, receiveBuffers, recvInline, busyPoll, generation,
                chunkMemory, rdmaDepth, memoryWindows, callerBuffers, this::underGateUnlessGoing, shared, group);
        this.memory = new LinkMemory(gate, hw.chunks);
        this.completions = new LinkCompletions(hw.chunks, generation, shared == null ? generation : shared.generation());
        WorkRequests w = null;
        LinkPolling p = null;
        boolean ok = false;
        try {
            w = new WorkRequests(gate, hw, generation, sendContexts, shared == null ? receiveBuffers : 1, recvInline,
                    rdmaDepth);
            p = new LinkPolling(gate, hw, completions, shared, busyPoll);
            ok = true;
        } finally {
            if (!ok) {
                hw.close(() -> { });
                if (hw.slot != null) {
                    hw.slot.release();
                }
                if (w != null) {
                    w.close();
                }
            }
        }
        this.posts = w;
        this.polling = p;
        hw.chunks.chainBinds(w);
    }

    public MemorySegment sendMemory() {
        return hw.sendMr.segment();
    }

    /** This link's own receive memory; null when its receives come from a shared receive queue. */
    public MemorySegment receiveMemory() {
        return hw.recvMr == null ? null : hw.recvMr.segment();
    }

    /** Event mode: the poller spins this long after each completion before it arms the channel and sleeps. */
    public void adaptiveSpin(long nanos) {
        polling.adaptiveSpin(nanos);
    }

    /**
     * Binds the connection and starts taking its completions: its own poller thread, or its
     * QP registered with its completion group's CQ. Receives may have been posted before
     * (their completions wait in the CQ until now).
     */
    public void start(CompletionSink c, String threadName) {
        deliverTo(c);
        hw.chunks.stats(c.counters());
        posts.stats(c.counters());
        polling.start(c, threadName);
    }

    /**
     * Where completions go from now on (set by {@link #start}); one already being dispatched
     * may still reach the previous sink. A sink that wraps the engine's may observe or
     * replace what it is given.
     */
    public void deliverTo(CompletionSink c) {
        this.conn = c;
        completions.bind(c);
    }

    // ---- Link: called under ConnectionEngine's send lock / ReceivePool lock respectively ----

    /**
     * Posts one Send of {@code buffer[0, length)} (a slice of {@link #sendMemory()}).
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    @Override
    public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {
        posts.send(slot, buffer, length, signalled, 0);
    }

    /** As {@link #postSend}, as IBV_WR_SEND_WITH_INV of the peer's {@code rkey} unless it is 0. */
    @Override
    public void postSendWithInvalidate(int slot, MemorySegment buffer, int length, boolean signalled, int rkey) {
        posts.send(slot, buffer, length, signalled, rkey);
    }

    /**
     * Posts receive buffers {@code slots[0, count)} of {@link #receiveMemory()}: buffer
     * {@code slot} is {@code [slot * recvInline, (slot + 1) * recvInline)}. Needs no
     * ConnectionEngine, so receives can be posted before connect.
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    @Override
    public void postReceives(int[] slots, int count) {
        posts.receives(slots, count);
    }

    @Override
    public boolean exposesMemory() {
        return true;
    }

    /** Whether every rkey this link exposes is a memory window's, one the peer may invalidate (R may go out). */
    public boolean windowsOnly() {
        return hw.chunks.windowsOnly();
    }

    /**
     * Whether our private data set R: while it did, no exposure falls back to a
     * registration, whatever the peer set (a Linux nfsd clears R yet sends Send with
     * Invalidate to a client that set it).
     */
    public void rkeysInvalidatableByPeer(boolean advertised) {
        hw.chunks.peerMayInvalidate(advertised);
    }

    @Override
    public boolean rkeysInvalidatableByPeer() {
        return hw.chunks.peerMayInvalidate();
    }

    @Override
    public int rdmaDepth() {
        return rdmaDepth;
    }

    /**
     * The peer granted {@code granted} RDMA Reads of ours at once (its responder resources,
     * from the connection's establishment): the depth never exceeds it. Linux's nfsd grants 0.
     */
    public void limitRdmaDepth(int granted) {
        rdmaDepth = Math.min(rdmaDepth, Math.max(0, granted));
    }

    /** Rkeys this side exposes now (tests: none left after a call). */
    public int exposedNow() {
        return memory.exposedNow();
    }

    /** Registered chunk-pool bytes in use now (tests: back to none after a call). */
    public long chunkBytesInUse() {
        return memory.bytesInUse();
    }

    @Override
    public ChunkBuffer allocateChunk(long bytes) {
        return memory.allocate(bytes);
    }

    @Override
    public ChunkBuffer callerChunk(MemorySegment m) {
        return memory.callerChunk(m);
    }

    /** See {@link LinkMemory#register}. */
    public void register(RegisteredMemory b) {
        memory.register(b);
    }

    /** A release of chunk memory: under the gate, or left to destroy once the link is going (after the QP). */
    private void underGateUnlessGoing(Runnable r) {
        if (!disconnected) {
            gate.runUnlessFreed(r);
        }
    }

    @Override
    public void postRead(int token, ChunkBuffer local, long localOffset, int length, int rkey, long remoteOffset) {
        posts.rdma(false, token, local, localOffset, length, rkey, remoteOffset);
    }

    @Override
    public boolean openSendChain() {
        return posts.openChain();
    }

    @Override
    public void closeSendChain() {
        posts.closeChain();
    }

    @Override
    public void postWrite(int token, ChunkBuffer local, long localOffset, int length, int rkey, long remoteOffset) {
        posts.rdma(true, token, local, localOffset, length, rkey, remoteOffset);
    }

    @Override
    public int expose(ChunkBuffer local, long offset, long length, boolean writable) {
        return memory.expose(local, offset, length, writable);
    }

    @Override
    public int exposeReadWrite(ChunkBuffer local, long offset, long length) {
        return memory.exposeReadWrite(local, offset, length);
    }

    @Override
    public void withdraw(int[] rkeys, int count, Runnable then) {
        memory.withdraw(rkeys, count, then);
    }

    private LinkClosedException refused(String what) {
        CompletionSink c = conn;
        return new LinkClosedException("link " + (c == null ? "(no connection yet)" : c.toString())
                + " destroyed; " + what + " post refused");
    }

    @Override
    public void disconnect() {
        synchronized (this) {
            if (disconnected) {
                return;
            }
            disconnected = true;
        }
        try {
            id.disconnect();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "rdma_disconnect: {0}", e.getMessage());
        }
    }

    /**
     * A caller leads on the link's own CQ only. On a completion group's CQ it does not: it
     * would dispatch other connections' completions on its thread (their handlers, in the
     * middle of this one's call) while the group's thread waits for the CQ; it waits for
     * its reply from the group's thread instead.
     */
    @Override
    public boolean pollOnCaller(BooleanSupplier done, long deadlineNanos) {
        return polling.pollOnCaller(done, deadlineNanos);
    }

    @Override
    public void blockingCallStarts() {
        polling.blockingCallStarts();
    }

    @Override
    public void blockingCallEnds() {
        polling.blockingCallEnds();
    }

    @Override
    public void unsolicitedMessages(boolean expected) {
        polling.unsolicitedMessages(expected);
    }

    /**
     * Completion pollers that did not stop within {@link LinkPolling#POLLER_JOIN_MILLIS} of their link's
     * destroy (or a completion group's thread of its close), in this JVM.
     */
    public static long pollersFreedPast() {
        return CompletionDriver.freedPast();
    }

    /**
     * Releases everything (after the connection is lost or closed). Idempotent; a concurrent
     * second call returns once the first has freed everything (the endpoint then closes the id).
     *
     * <p>ORDER: disconnect; set {@code stopping} (the poller and callers stop polling, new
     * posts are refused) and wake a channel waiter; wait up to {@link LinkPolling#POLLER_JOIN_MILLIS} for
     * the poller; take the gate's write side, which waits out every post, poll and channel
     * wait in progress; then free QP, CQ, channel, MRs, PD and the
     * native arrays. A poller stuck in a handler past the join is warned about and freed
     * past: it holds no gate there, and finds {@code stopping} when it comes back.
     */
    public void destroy() {
        Runnable[] withdrawn = {};
        synchronized (destroyLock) {
            if (destroyed) {
                return;
            }
            destroyed = true;
            disconnect();
            gate.stop();
            hw.stopWaiters();
            polling.stop(); // the group's thread dispatches nothing more here, or the own poller is gone or freed past
            withdrawn = gate.free(() -> {
                Runnable[] w = hw.close(polling::afterQp);
                posts.close();
                polling.close();
                return w;
            });
        }
        // withdrawals that waited for a LOCAL_INV: the QP is gone, so the rkeys are dead; go on
        for (Runnable r : withdrawn) {
            r.run();
        }
    }
}
