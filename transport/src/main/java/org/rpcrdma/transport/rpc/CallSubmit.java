package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.ChunksUnavailableException;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.LinkClosedException;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.ReplyCallback;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.chunk.ChunkMarshal;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/**
 * How our calls enter one {@link ConnectionEngine} (≈ Linux's {@code xprt_rdma_send_request}): a
 * call slot from the connection's pool, its deadline started, chunks exposed if it does
 * not fit this connection's negotiated inline thresholds (RFC 8797 §4, RFC 8166 §3.5.3),
 * then the {@link Requester} takes it, or, on a connection that can no longer send, the
 * endpoint's {@link CallHandOver} does. Calls handed over from an earlier connection come
 * in here too, with their XID, future and deadline (RFC 8167 §5.4).
 *
 * <p>Threading: any caller thread, and the thread that resubmits handed-over calls; it takes
 * no lock of its own (the requester's is taken inside {@link Requester#submit}).
 */
public final class CallSubmit {
    private final String name;
    private final ConnectionParams params;
    private final Link link;
    private final ConnectionLife life;
    private final Requester requester;
    private final CallHandOver handOver;
    private final BackchannelEnabling backchannel;
    private final StatsCounters stats;
    /** Call slots, used again (no allocation per call). */
    private final CallRequestPool slots = new CallRequestPool();

    public CallSubmit(String name, ConnectionParams params, Link link, ConnectionLife life, Requester requester,
            CallHandOver handOver, BackchannelEnabling backchannel, StatsCounters stats) {
        this.name = name;
        this.stats = stats;
        this.params = params;
        this.link = link;
        this.life = life;
        this.requester = requester;
        this.handOver = handOver;
        this.backchannel = backchannel;
    }

    /** A call slot started as call {@code xid} of {@code rpcCall}, ending through {@code how} (not retried). */
    public CallRequest pooled(int xid, MemorySegment rpcCall, CallOptions o, Completion how, ReplyCallback cb) {
        CallRequest c = slots.take();
        c.start(xid, rpcCall, false, cb);
        c.start(how);
        c.maxReplyBytes(o.maxReplyBytes());
        c.ddp(o.ddpArgument(), o.receptacle());
        return c;
    }

    /** Call slots now free. */
    public int free() {
        return slots.free();
    }

    /** A future-shaped call, submitted with its timeout in nanoseconds (0: none). */
    public CompletableFuture<ReceivedMessage> future(MemorySegment rpcCall, long timeoutNanos, boolean retry,
            int maxReplyBytes, DdpArgument payload, MemorySegment receptacle) {
        backchannel.checkReady();
        if (rpcCall.byteSize() < 8 || Xdr.getInt(rpcCall, 4) != OncRpc.CALL) {
            return CallRequest.issue(rpcCall, retry).future(); // failed already
        }
        CallRequest c = slots.take();
        c.start(Xdr.getInt(rpcCall, 0), rpcCall, retry, null);
        CallFuture f = CallFuture.startOn(c).pollOn(link, stats);
        c.maxReplyBytes(maxReplyBytes);
        c.ddp(payload, receptacle);
        submit(c, timeoutNanos);
        return f;
    }

    /**
     * Sends a call just issued, its deadline ({@code timeoutNanos}, 0: none) running from
     * now: every call shape, the reconnecting client's and a backchannel's calls come here.
     */
    public void submit(CallRequest c, long timeoutNanos) {
        backchannel.checkReady();
        c.deadline(name, timeoutNanos, false);
        submit(c);
    }

    /**
     * The one submit: sends {@code c} here, a call just issued or one handed over from an
     * earlier connection (same XID, same future and deadline), or hands it on if this
     * connection can no longer send.
     */
    public void submit(CallRequest c) {
        if (c.isDone()) {
            return; // abandoned while it was between connections
        }
        // ORDER: whether this connection can still send, before any chunk is prepared: a
        // lost one's link may be released already (its chunk memory and rkeys gone), and a
        // call not sent goes to the next connection, which marshals it under its own thresholds.
        if (!life.isOpen()) {
            handOver.notSent(List.of(c), life.isClosing());
            return;
        }
        // Checked here, not at issue: a call parked or handed over meets this connection's
        // negotiated thresholds only now.
        if (!ChunkMarshal.needsChunks(c, params.sendInline(), params.receiveInline())) {
            send(c);
            return;
        }
        // the chunks' window binds and, when a credit is free, the Send after them: one post
        boolean chained = link.openSendChain();
        try {
            ChunksUnavailableException refused = ChunkMarshal.expose(name, params, link, c, backchannel.backwardChunks());
            if (refused != null) {
                if (life.isOpen()) {
                    c.fail(refused);
                } else { // lost meanwhile: refused by a link released under us, not for want of chunks
                    handOver.notSent(List.of(c), life.isClosing());
                }
                return;
            }
            send(c);
        } finally {
            if (chained) {
                closeChain();
            }
        }
    }

    /** Ends this thread's chain; binds left in it when the link is going are dropped, and the call with the connection. */
    private void closeChain() {
        try {
            link.closeSendChain();
        } catch (LinkClosedException e) {
            // the connection's loss fails or hands over the call, whose Send never went out
        }
    }

    private void send(CallRequest c) {
        boolean taken;
        try {
            taken = life.isOpen() && requester.submit(c);
        } catch (RpcRdmaException e) {
            c.fail(e);
            return;
        }
        if (!taken) {
            handOver.notSent(List.of(c), life.isClosing());
        }
    }
}
