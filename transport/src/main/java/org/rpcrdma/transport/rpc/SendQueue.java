package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.LinkClosedException;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.link.LinkFailure;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;

/**
 * The send path of one connection (≈ Linux {@code rpcrdma_sendctx} and
 * {@code rpcrdma_post_sends}): each message is marshalled into the next send context's
 * registered buffer and posted as one Send; when every context is in flight, messages
 * wait here (as private copies) and go out as signalled completions free contexts.
 *
 * <p>One lock (this) keeps Sends posted in context order. A failed post stops the queue and
 * forces the connection's loss ({@link LinkFailure}), which runs when no lock is held.
 */
public final class SendQueue {
    /**
     * A message waiting for a send context: an inline RDMA_MSG; a message with its own
     * header ({@code header} set, {@code rpc} inline after it or null); or an RDMA_ERROR
     * when both are null. {@code invalidate}: the peer's rkey the Send invalidates, or 0.
     */
    private record Waiting(int xid, int credit, MemorySegment rpc, int error, RpcRdmaHeader header, int invalidate) {}

    private final SendContextRing ring;
    private final MemorySegment[] buffers;
    /** What each buffer holds of its last inline header (written XID-only when the rest is there). */
    private final InlineHeaders headers;
    private final Link link;
    private final StatsCounters stats;
    private final ArrayDeque<Waiting> queue = new ArrayDeque<>();
    private boolean shut;
    /** Sends wait in the queue until the QP can send (a server's, until rdma_accept returned). */
    private boolean held;
    private final LinkFailure failure;

    /**
     * @param memory registered memory for {@code contexts * sendInline} bytes
     */
    public SendQueue(Link link, int contexts, int signalEvery, int sendInline, MemorySegment memory, StatsCounters stats,
            LinkFailure failure) {
        this.link = link;
        this.failure = failure;
        this.stats = stats;
        this.ring = new SendContextRing(contexts, Math.min(signalEvery, contexts));
        this.buffers = new MemorySegment[contexts];
        this.headers = new InlineHeaders(contexts);
        for (int i = 0; i < contexts; i++) {
            buffers[i] = memory.asSlice((long) i * sendInline, sendInline);
        }
    }

    /** Sends an RDMA_MSG carrying {@code rpc} inline; allocates nothing unless it has to wait. */
    void sendMessage(int xid, int credit, MemorySegment rpc) {
        sendMessage(xid, credit, rpc, 0);
    }

    /**
     * As {@link #sendMessage(int, int, MemorySegment)}, by Send with Invalidate of the
     * peer's {@code invalidateRkey} unless it is 0 (RFC 8797 §7).
     */
    synchronized void sendMessage(int xid, int credit, MemorySegment rpc, int invalidateRkey) {
        if (shut) {
            return;
        }
        if (queue.isEmpty() && !held) {
            int slot = ring.tryAcquire();
            if (slot >= 0) {
                postMessage(slot, xid, credit, rpc, invalidateRkey);
                return;
            }
        }
        stats.sendContextWaits.increment();
        // the caller may reuse its segment once we return: keep a copy
        queue.addLast(new Waiting(xid, credit, Marshal.heapCopy(rpc), 0, null, invalidateRkey));
    }

    /**
     * Sends a message with chunk lists: {@code header} (encoded as it is, or copied if the
     * message must wait: the caller may reuse it once this returns) followed by {@code rpc} inline, or by nothing when {@code rpc} is
     * null (RDMA_NOMSG). The caller checked that it fits the send inline threshold.
     */
    public void sendWithHeader(RpcRdmaHeader header, MemorySegment rpc) {
        sendWithHeader(header, rpc, null, 0);
    }

    /** As {@link #sendWithHeader(RpcRdmaHeader, MemorySegment)}, invalidating {@code invalidateRkey} unless 0. */
    public void sendWithHeader(RpcRdmaHeader header, MemorySegment rpc, int invalidateRkey) {
        sendWithHeader(header, rpc, null, invalidateRkey);
    }

    /**
     * As {@link #sendWithHeader(RpcRdmaHeader, MemorySegment, int)}, the RPC message being
     * {@code rpc} with {@code gathered}'s data put in at its position (null: {@code rpc} alone).
     */
    public synchronized void sendWithHeader(RpcRdmaHeader header, MemorySegment rpc, DdpArgument gathered,
            int invalidateRkey) {
        if (shut) {
            return;
        }
        if (queue.isEmpty() && !held) {
            int slot = ring.tryAcquire();
            if (slot >= 0) {
                postWithHeader(slot, header, rpc, gathered, invalidateRkey);
                return;
            }
        }
        stats.sendContextWaits.increment();
        // the caller may reuse its header and segment once we return: keep copies
        RpcRdmaHeader copy = new RpcRdmaHeader(header.readList().segmentCount(), header.writeList().chunkCount(),
                header.writeList().segments().count(), header.replyChunk().count()).copyFrom(header);
        queue.addLast(new Waiting(header.xid(), header.credit(), rpc == null ? null : Marshal.heapCopy(rpc, gathered),
                0, copy, invalidateRkey));
    }

    /** Sends RDMA_ERROR ({@code RpcRdma.ERR_VERS} or {@code ERR_CHUNK}) for {@code xid}. */
    synchronized void sendError(int xid, int credit, int error) {
        if (shut) {
            return;
        }
        if (queue.isEmpty() && !held) {
            int slot = ring.tryAcquire();
            if (slot >= 0) {
                postError(slot, xid, credit, error);
                return;
            }
        }
        stats.sendContextWaits.increment();
        queue.addLast(new Waiting(xid, credit, null, error, null, 0));
    }

    /** A signalled Send completed: its context and all older ones are free; queued messages go. */
    synchronized void completed(int slot) {
        if (shut) {
            return; // the ring was reset when the connection was lost
        }
        ring.completed(slot);
        drain();
    }

    /** Holds Sends (queued, in order) until {@link #resume}: the QP cannot send yet. */
    public synchronized void hold() {
        held = true;
    }

    /** The QP can send now: what was held goes out. */
    public synchronized void resume() {
        held = false;
        if (!shut) {
            drain();
        }
    }

    /** Caller holds the lock: posts queued messages while contexts are free. */
    private void drain() {
        while (!queue.isEmpty() && !shut && !held) {
            int s = ring.tryAcquire();
            if (s < 0) {
                return;
            }
            Waiting w = queue.pollFirst();
            if (w.header() != null) {
                postWithHeader(s, w.header(), w.rpc(), null, w.invalidate());
            } else if (w.rpc() == null) {
                postError(s, w.xid(), w.credit(), w.error());
            } else {
                postMessage(s, w.xid(), w.credit(), w.rpc(), w.invalidate());
            }
        }
    }

    private void postMessage(int slot, int xid, int credit, MemorySegment rpc, int invalidateRkey) {
        int length;
        try {
            length = Marshal.inline(headers, slot, buffers[slot], xid, credit, rpc);
        } catch (IllegalStateException e) {
            linkGone(e); // the link was destroyed under us: FFM refused the write to its memory
            return;
        }
        post(slot, length, invalidateRkey);
    }

    private void postWithHeader(int slot, RpcRdmaHeader header, MemorySegment rpc, DdpArgument gathered,
            int invalidateRkey) {
        int length;
        headers.forget(slot);
        try {
            length = Marshal.withHeader(buffers[slot], header, rpc, gathered);
        } catch (IllegalStateException e) {
            linkGone(e);
            return;
        }
        post(slot, length, invalidateRkey);
    }

    private void postError(int slot, int xid, int credit, int error) {
        if (error == RpcRdma.ERR_VERS) {
            stats.errVersSent.increment();
        } else {
            stats.errChunkSent.increment();
        }
        int length;
        headers.forget(slot);
        try {
            length = Marshal.error(buffers[slot], xid, credit, error);
        } catch (IllegalStateException e) {
            linkGone(e);
            return;
        }
        post(slot, length, 0);
    }

    private void linkGone(IllegalStateException e) {
        failure.force(new LinkClosedException("send buffers released with the link; send refused", e));
        shut = true;
        queue.clear();
    }

    /** Caller holds the lock, so contexts are posted in ring order. */
    private void post(int slot, int length, int invalidateRkey) {
        boolean signalled = ring.shouldSignal();
        if (signalled) {
            stats.sendsSignalled.increment();
        }
        try {
            if (invalidateRkey == 0) {
                link.postSend(slot, buffers[slot], length, signalled);
            } else {
                // counted before the post: the peer may act on the Send before this thread returns
                stats.sendsWithInvalidate.increment();
                link.postSendWithInvalidate(slot, buffers[slot], length, signalled, invalidateRkey);
            }
        } catch (RuntimeException e) {
            failure.force(e);
            shut = true;
            queue.clear();
        }
    }

    /** The connection is gone: nothing more is posted and every context is free again. */
    synchronized void shutdown() {
        shut = true;
        queue.clear();
        ring.reset();
    }

    synchronized int contextsInUse() {
        return ring.inUse();
    }

    /** The send contexts' accounting (a raw peer's Sends take their context from it, under this queue's lock). */
    public SendContextRing ring() {
        return ring;
    }

    /**
     * Send context {@code slot}'s memory: the only memory the link's send lkey covers. The
     * caller writes it (under this queue's lock), so what it held is forgotten.
     */
    public MemorySegment context(int slot) {
        headers.forget(slot);
        return buffers[slot];
    }

    /** The connection's failure, forced by a failed post. */
    public LinkFailure failure() {
        return failure;
    }
}
