package org.rpcrdma.transport.rpc;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.ReplyRefusedException;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.chunk.CallChunks;
import org.rpcrdma.transport.chunk.ChunkRules;
import org.rpcrdma.transport.chunk.ReadChunkPuller;
import org.rpcrdma.transport.chunk.ReplyWriter;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * The peer's calls on one connection (the responder role; ≈ Linux
 * {@code svc_rdma_recvfrom} / {@code svc_rdma_sendto}): the count of calls the peer has
 * outstanding against the credits we granted, handing calls to the handler, and their
 * replies. It is the one place that sends RDMA_ERROR (only a responder does, and only in
 * answer to a call: RFC 8166 §4.5). Calls with chunks are served too: read chunks are
 * pulled first ({@link ReadChunkPuller}; the handler gets one message), and the reply goes
 * inline or through the offered chunks ({@link ReplyWriter}); a reply that needs a Reply
 * chunk the call did not offer, or chunk lists beyond our limits ({@link ChunkRules}), are
 * answered RDMA_ERROR / ERR_CHUNK. A client's backward calls with chunks (RFC 8167 §5.3;
 * Linux never sends them) are served like forward ones when it takes them
 * ({@link BackchannelEnabling#backwardChunks()}), else answered ERR_CHUNK.
 *
 * <p>The call object it hands out ({@link PeerCall}, reused for immediate handlers) answers
 * through this class's counting and refusals, so the peer's credits are exact by
 * construction (RFC 8166 §3.3.1: every call the peer sends holds one until answered).
 *
 * <p>Every call counted here is answered exactly once (a reply, an RDMA_ERROR, or the
 * connection's loss), so the peer's credits never drift. Holds no lock of its own across
 * calls into the send queue; the handler runs with no transport lock held.
 */
public final class Responder {
    private static final System.Logger LOG = System.getLogger(Responder.class.getName());
    private static final VarHandle IMMEDIATE_THREAD;
    private static final VarHandle IMMEDIATE_OUTSTANDING;

    static {
        try {
            var l = MethodHandles.lookup();
            IMMEDIATE_THREAD = l.findVarHandle(Responder.class, "immediateThread", Thread.class);
            IMMEDIATE_OUTSTANDING = l.findVarHandle(Responder.class, "immediateOutstanding", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ConnectionEngine conn;
    /** The receive buffers a peer call is read from in place. */
    private final ReceiveQueue receives;
    /** Whether the backward direction is on, and with chunks (RFC 8167 §4.1). */
    private final BackchannelEnabling backchannel;
    private final boolean client;
    private final int grantToPeer;
    private final int sendInline;
    private final SendQueue sends;
    private final StatsCounters stats;
    private final ReplyWriter writer;
    private final ReadChunkPuller puller;
    private final int maxChunkBytes;
    private final int maxChunkSegments;
    private final boolean canRdma;
    /** Peer calls received and not yet answered, but for the immediate handler's. */
    private final AtomicInteger outstanding = new AtomicInteger();
    /**
     * 1 while the immediate handler's call is unanswered: that call is answered before its
     * dispatch returns, on the dispatching thread, so it is counted here by that thread
     * alone (release stores; an atomic increment and decrement per call otherwise).
     */
    private volatile int immediateOutstanding;
    private final AtomicInteger highWater = new AtomicInteger();
    private volatile CallHandler handler;
    /**
     * The call object of immediate handlers ({@link #handleImmediate}), and whether it is in
     * use: dispatch is one completion thread at a time, whose hand-over orders its fields.
     */
    private final PeerCall immediate;
    private boolean immediateBusy;
    /**
     * The thread an immediate handler runs on now, or null: the one that may use
     * {@link #immediate}. Read as a volatile, written with release stores (a full fence
     * each, four per call, bought nothing): a thread checking whether it is the one never
     * sees itself unless it is, since its own last store here was its null at the end of
     * its handler, and only later stores follow it.
     */
    private volatile Thread immediateThread;

    public Responder(ConnectionEngine conn, ReceiveQueue receives, BackchannelEnabling backchannel, boolean client, int grantToPeer,
            int sendInline, SendQueue sends, StatsCounters stats, ReplyWriter writer, ReadChunkPuller puller, int maxChunkBytes,
            int maxChunkSegments, boolean canRdma) {
        this.conn = conn;
        this.receives = receives;
        this.backchannel = backchannel;
        this.writer = writer;
        this.puller = puller;
        this.maxChunkBytes = maxChunkBytes;
        this.maxChunkSegments = maxChunkSegments;
        this.canRdma = canRdma;
        this.client = client;
        this.grantToPeer = grantToPeer;
        this.sendInline = sendInline;
        this.sends = sends;
        this.stats = stats;
        this.immediate = new PeerCall(this, 0, ApiBridge.access().reusableMessage(conn), CallChunks.NONE);
    }

    public void handler(CallHandler h) {
        this.handler = h;
    }

    public CallHandler handler() {
        return handler;
    }

    /** Whether this side serves calls now: a server always; a client once it serves backward calls. */
    boolean canRespond() {
        return !client || handler != null;
    }

    /**
     * Answers a call we will not serve with RDMA_ERROR ({@code RpcRdma.ERR_VERS} or
     * {@code ERR_CHUNK}); the one place RDMA_ERROR is sent. Only for calls.
     */
    void sendError(int xid, int error) {
        sends.sendError(xid, receives.grantToPeer(grantToPeer), error);
    }

    /**
     * A call arrived (decoded header {@code h}, bytes in receive buffer {@code slot}): inline
     * RDMA_MSG, possibly with chunks, or RDMA_NOMSG with a Position-Zero Read chunk.
     *
     * @return true if the buffer was handed on (released with the reply or by the user)
     */
    boolean onCall(RpcRdmaHeader h, int slot, MemorySegment buf) {
        stats.callsReceived.increment();
        // A Call's rdma_credit is the peer's request, not a grant: it touches no account here.
        boolean chunked = !h.hasNoChunks();
        if (chunked && client && !backchannel.backwardChunks()) {
            // Backward calls with chunks (RFC 8167 §5.3): the user turned them off (RFC 8166 §4.5.2).
            stats.chunkListsRefused.increment();
            sendError(h.xid(), RpcRdma.ERR_CHUNK);
            return false;
        }
        CallHandler hd = handler;
        if (client && hd == null) {
            // RFC 8167 §6: a backward call before we said we serve them. Linux drops it too.
            LOG.log(Level.WARNING, "{0}: backward call 0x{1} while the backchannel is not served, dropped", conn,
                    Integer.toHexString(h.xid()));
            stats.creditViolations.increment();
            return false;
        }
        long off = h.messageOffset();
        int len = h.messageLength();
        boolean imm = !chunked && hd instanceof ImmediateHandler && !immediateBusy
                && (client || !BackchannelControl.isControlCall(buf, off, len));
        receives.peerCallArrived();
        int now = imm ? outstanding.get() + 1 : outstanding.incrementAndGet();
        if (now > highWater.get()) {
            highWater.accumulateAndGet(now, Math::max); // rarely: no compare-and-set per call
        }
        int limit = receives.peerLimit(grantToPeer);
        if (now > limit) {
            // The peer exceeded the credits we granted: a conforming peer never does.
            stats.creditViolations.increment();
            if (!imm) {
                outstanding.decrementAndGet();
            }
            conn.onLinkLost(new RpcRdmaException("peer exceeded its " + limit + " credits"));
            return false;
        }
        if (chunked) {
            return onChunkedCall(h, slot, buf, hd);
        }
        int xid = h.rpcXid();
        if (imm) {
            handleImmediate((ImmediateHandler) hd, xid, receives.view(slot, off, len), slot);
            return true;
        }
        if (!client && BackchannelControl.isControlCall(buf, off, len)) {
            long instance = BackchannelControl.clientInstance(buf, off, len);
            backchannel.backwardChunks(BackchannelControl.takesChunks(buf, off, len));
            conn.markBackchannelReady(); // ORDER: before the reply, which lets the client's caller go on
            sendReply(null, xid, BackchannelControl.acceptedReply(xid), 0);
            backchannel.enabled(conn, instance);
            return false;
        }
        if (hd == null) {
            outstanding.decrementAndGet();
            return false;
        }
        handle(hd, new PeerCall(this, xid, ApiBridge.access().message(receives.view(slot, off, len), conn, slot, -1),
                CallChunks.NONE));
        return true;
    }

    /**
     * An inline call to an immediate handler ({@link CallHandler#immediate}): the one
     * {@link PeerCall} and message object of this responder, made this call's, no allocation.
     * Confined to this thread until the handler returns, answered by then (SYSTEM_ERR for it
     * if it did not: its contract was to answer first). Dispatch is one thread at a time, so
     * one object serves; a call arriving while it is in use (a handler whose own call made
     * the peer call us back) gets an ordinary one.
     */
    private void handleImmediate(ImmediateHandler imm, int xid, MemorySegment view, int slot) {
        immediateBusy = true;
        IMMEDIATE_OUTSTANDING.setRelease(this, 1);
        PeerCall c = immediate;
        IMMEDIATE_THREAD.setRelease(this, Thread.currentThread()); // ORDER: before reuse makes the call unanswered
        c.reuse(xid, view, slot);
        try {
            imm.handler().handle(c);
        } catch (Throwable e) { // user code: whatever it throws must not reach the completion thread's caller
            c.handlerFailed(e);
        } finally {
            if (!c.isAnswered()) {
                if (conn.isOpen()) { // else a VirtualMachineError failed the connection: nothing to answer
                    stats.handlerFailures.increment();
                    LOG.log(Level.WARNING, "{0}: immediate handler returned without answering call 0x{1};"
                            + " answered SYSTEM_ERR", conn, Integer.toHexString(xid));
                }
                c.answerIfUnanswered(PeerCall.systemError(xid)); // on a lost connection: only the buffer goes back
            }
            IMMEDIATE_THREAD.setRelease(this, (Thread) null); // ORDER: after the call was answered
            immediateBusy = false;
        }
    }

    /**
     * A call with chunks, counted already: checked against our limits, its read chunks
     * pulled (the receive buffer is copied out and goes back at once), then handed to the
     * handler with what it offered for the reply.
     */
    private boolean onChunkedCall(RpcRdmaHeader h, int slot, MemorySegment buf, CallHandler hd) {
        int xid = h.xid();
        String why = ChunkRules.refusal(h, maxChunkBytes, maxChunkSegments, canRdma);
        if (why != null) {
            LOG.log(Level.DEBUG, "{0}: call 0x{1} refused with ERR_CHUNK: {2}", conn, Integer.toHexString(xid), why);
            refuseChunks(xid);
            return false;
        }
        stats.chunkedCallsReceived.increment();
        CallChunks chunks = CallChunks.of(h, conn.remoteInvalidation());
        if (h.readList().isEmpty()) {
            // nothing to pull: the call is inline, only its reply may use chunks
            return handleInlineChunked(h, slot, buf, hd, chunks);
        }
        if (hd == null) {
            outstanding.decrementAndGet();
            return false;
        }
        puller.pull(h, buf, msg -> {
            MemorySegment m = msg.bytes();
            if (m.byteSize() < 8 || Xdr.getInt(m, 0) != xid || Xdr.getInt(m, 4) != OncRpc.CALL) {
                // RFC 8166 §4.2.1: the message must be the call rdma_xid names
                msg.release();
                LOG.log(Level.DEBUG, "{0}: call 0x{1} pulled from read chunks is not an RPC CALL with that XID",
                        conn, Integer.toHexString(xid));
                refuseChunks(xid);
                return;
            }
            handle(hd, new PeerCall(this, xid, msg, chunks));
        });
        return false;
    }

    private boolean handleInlineChunked(RpcRdmaHeader h, int slot, MemorySegment buf, CallHandler hd,
            CallChunks chunks) {
        if (hd == null) {
            outstanding.decrementAndGet();
            return false;
        }
        int xid = h.rpcXid();
        long off = h.messageOffset();
        int len = h.messageLength();
        handle(hd, new PeerCall(this, xid, ApiBridge.access().message(receives.view(slot, off, len), conn, slot, -1), chunks));
        return true;
    }

    private void handle(CallHandler hd, PeerCall in) {
        try {
            hd.handle(in);
        } catch (Throwable e) { // user code: an Error too, or the completion thread would die with it
            in.handlerFailed(e);
        }
    }

    /** Answers ERR_CHUNK for a call whose chunks we will not use; the call is answered. */
    private void refuseChunks(int xid) {
        outstanding.decrementAndGet();
        stats.chunkListsRefused.increment();
        sendError(xid, RpcRdma.ERR_CHUNK);
    }

    /**
     * Sends a reply that was checked to fit, by Send with Invalidate of {@code invalidateRkey}
     * unless it is 0; the call ({@code c}, or null for one with no call object) is answered.
     */
    private void sendReply(PeerCall c, int xid, MemorySegment rpcReply, int invalidateRkey) {
        answered(c); // ORDER: before the Send that lets the peer call again
        // A Reply's rdma_credit grants the peer credits for its direction (RFC 8166 §3.3.3).
        stats.repliesSent.increment(); // before the Send: the peer may act on it before this thread returns
        sends.sendMessage(xid, receives.grantToPeer(grantToPeer), rpcReply, invalidateRkey);
    }

    /** Answers the call with ERR_CHUNK instead of a reply that cannot be sent; the call is answered. */
    private void refuse(PeerCall c, int xid) {
        answered(c);
        stats.repliesRefused.increment();
        sendError(xid, RpcRdma.ERR_CHUNK);
    }

    /** {@code c} (null: a call with no call object) no longer counts against the peer's credits. */
    private void answered(PeerCall c) {
        if (c == immediate) {
            IMMEDIATE_OUTSTANDING.setRelease(this, 0);
        } else {
            outstanding.decrementAndGet();
        }
    }

    /**
     * Sends the answer of call {@code c} (answered now, by its own account) to the peer:
     * inline, by Send with Invalidate when the peer takes it (RFC 8797 §3.2), or
     * through the chunks it offered ({@link ReplyWriter}); refused with ERR_CHUNK when it is
     * not the reply to that call or cannot be sent (RFC 8166 §4.5).
     *
     * @throws ReplyRefusedException if it was refused (the requester was answered RDMA_ERROR)
     */
    void send(PeerCall c, int xid, MemorySegment rpcReply, CallChunks chunks, List<MemorySegment> payloads) {
        // xid and msg_type in one 64-bit read
        if (rpcReply.byteSize() < 8 || Xdr.getLong(rpcReply, 0) != ((long) xid << 32 | OncRpc.REPLY)) {
            refuse(c, xid);
            throw new ReplyRefusedException(conn + ": the reply to call 0x" + Integer.toHexString(xid)
                    + " is not an RPC REPLY with that XID; the requester was answered RDMA_ERROR/ERR_CHUNK");
        }
        if (chunks.isEmpty()) {
            if (!payloads.isEmpty()) {
                refuse(c, xid);
                throw new ReplyRefusedException(conn + ": call 0x" + Integer.toHexString(xid)
                        + " offered no write chunk for a DDP result; the requester was answered RDMA_ERROR/ERR_CHUNK");
            }
            if (!Marshal.fitsInline(rpcReply.byteSize(), sendInline)) {
                refuse(c, xid);
                throw new ReplyRefusedException(conn + ": the reply to call 0x" + Integer.toHexString(xid)
                        + " is " + rpcReply.byteSize() + " bytes, over the " + Marshal.inlineLimit(sendInline)
                        + " bytes that fit the negotiated inline threshold of " + sendInline + ", and the call"
                        + " offered no Reply chunk; the requester was answered RDMA_ERROR/ERR_CHUNK");
            }
            sendReply(c, xid, rpcReply, chunks.invalidateRkey);
            return;
        }
        outstanding.decrementAndGet(); // ORDER: before the Send that lets the peer call again
        String why = writer.send(xid, receives.grantToPeer(grantToPeer), rpcReply, chunks, payloads);
        if (why != null) {
            outstanding.incrementAndGet(); // nothing was sent: refuse() answers it
            refuse(c, xid);
            throw new ReplyRefusedException(conn + ": the reply to call 0x" + Integer.toHexString(xid)
                    + " cannot be sent: " + why + "; the requester was answered RDMA_ERROR/ERR_CHUNK");
        }
        stats.repliesSent.increment();
    }

    ConnectionEngine connection() {
        return conn;
    }

    /** Whether {@code c} is the immediate handlers' reused call object. */
    boolean isImmediate(PeerCall c) {
        return c == immediate;
    }

    /** Peer calls outstanding now (received, not yet answered). */
    public int outstanding() {
        return outstanding.get() + immediateOutstanding;
    }

    public int highWater() {
        return highWater.get();
    }

    /** Whether {@code t} runs an immediate handler of this responder now (it may read that call's message). */
    public boolean isImmediateDispatcher(Thread t) {
        return immediateThread == t;
    }
}
