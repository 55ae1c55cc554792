package org.rpcrdma.transport.link;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import org.rpcrdma.transport.chunk.CallerBuffers;
import org.rpcrdma.transport.chunk.ChunkMemory;
import org.rpcrdma.transport.chunk.WindowPool;
import org.rpcrdma.transport.verbs.Access;
import org.rpcrdma.transport.verbs.CmId;
import org.rpcrdma.transport.verbs.CompletionChannel;
import org.rpcrdma.transport.verbs.CompletionQueue;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.MemoryRegion;
import org.rpcrdma.transport.verbs.ProtectionDomain;
import org.rpcrdma.transport.verbs.QueuePair;
import org.rpcrdma.transport.verbs.QueuePairCapabilities;

/**
 * The verbs objects of one {@link VerbsLink} (≈ Linux's {@code rpcrdma_ep_create} and
 * {@code rpcrdma_ep_destroy}): PD, one CQ (with a completion channel in event mode; or a
 * place on a server's {@link CompletionGroup}'s CQ), the RC
 * QP, registered send and receive memory, and the chunk memory with its memory windows.
 * Made at once, with the queues sized for everything that can be outstanding on them; a
 * constructor that fails partway releases what it got first. {@link #close} frees in the
 * kernel's order: QP, CQ, channel, MRs, chunk memory (windows before the memory they were
 * bound to), PD, then the arena the memory came from, only if every registration over it
 * was released. The id is the endpoint's.
 *
 * <p>Apart from {@link VerbsLink} because it is set-up and teardown only: the link decides
 * when (under its gate's write side, after the poller stopped), this class what and in
 * which order.
 */
public final class LinkHardware {
    private static final System.Logger LOG = System.getLogger(LinkHardware.class.getName());

    final ProtectionDomain pd;
    /** Null in busy-poll mode, and on a completion group's CQ. */
    final CompletionChannel channel;
    /** The link's own CQ, or its place on the server's completion group's. */
    final CompletionQueue cq;
    /** The link's place on a completion group's CQ; null: the CQ (and channel) are the link's own. */
    final CompletionGroup.Slot slot;
    final QueuePair qp;
    final MemoryRegion sendMr;
    /** Null when receives come from the server's shared receive queue. */
    final MemoryRegion recvMr;
    /** The server's shared receive side (its PD, SRQ and buffers), or null: receives of our own. */
    final SharedReceiveHardware shared;
    /** Chunk data and what is exposed to the peer; used under the link's gate like everything native. */
    final ChunkMemory chunks;
    /** The chunk pool's registration (in {@link #chunks}), or null: its memory is {@link #arena}'s. */
    private final MemoryRegion chunkMr;
    private final Arena arena = Arena.ofShared();

    /**
     * @param chunkMemory bytes of registered chunk memory (0: none, no chunks at all)
     * @param rdmaDepth   RDMA Reads/Writes outstanding at once (0: this side does none)
     * @param memoryWindows expose chunk memory through memory windows if the device has them
     *                    (else, or false: a registration per RPC)
     * @param callerBuffers the endpoint's registered buffers, exposed in place (null: none)
     * @param guard       runs a release of chunk memory under the link's gate
     * @param shared      the server's shared receive side: its PD and SRQ are used (not
     *                    owned), no receive memory of our own; null: our own PD and receives
     * @param group       the server's completion group: the QP completes on one of its CQs
     *                    (entries reserved there); null: a CQ of our own
     */
    LinkHardware(CmId id, int sendContexts, int sendInline, int receiveBuffers, int recvInline, boolean busyPoll,
            int generation, long chunkMemory, int rdmaDepth, boolean memoryWindows, CallerBuffers callerBuffers,
            ChunkMemory.Guard guard, SharedReceiveHardware shared, CompletionGroup group) {
        this.shared = shared;
        Device dev = id.device();
        // Every RPC exposes at most three chunks; most one or two: two windows per send context.
        int windowCount = memoryWindows && chunkMemory > 0 && dev.queryLimits().maxMw() > 0 ? 2 * sendContexts : 0;
        ProtectionDomain p = null;
        CompletionChannel ch = null;
        CompletionQueue q = null;
        QueuePair qp0 = null;
        MemoryRegion s = null;
        MemoryRegion r = null;
        MemoryRegion cm = null;
        CompletionGroup.Slot place = null;
        // A window has at most one bind and one LOCAL_INV on the send queue; when the QP
        // fails, every one of them completes (flushed), signalled or not: the CQ holds them all.
        int sendDepth = sendContexts + rdmaDepth + 2 * windowCount + 4;
        int recvDepth = receiveBuffers + 4;
        boolean ok = false;
        try {
            p = shared != null ? shared.protectionDomain() : dev.allocateProtectionDomain();
            if (group != null) {
                // shared receives complete on the group's CQs within the room each keeps for them
                place = group.assign(sendDepth + (shared == null ? recvDepth : 0));
                q = place.cq();
            } else {
                ch = busyPoll ? null : dev.createCompletionChannel();
                q = dev.createCompletionQueue(sendDepth + recvDepth, ch);
            }
            qp0 = id.createQueuePair(p, q, q, shared == null ? null : shared.srq(), new QueuePairCapabilities(
                    sendDepth, recvDepth, 1, 1, 0));
            s = p.register(arena.allocate((long) sendContexts * sendInline, 4096), Access.LOCAL_WRITE);
            if (shared == null) {
                r = p.register(arena.allocate((long) receiveBuffers * recvInline, 4096), Access.LOCAL_WRITE);
            }
            if (chunkMemory > 0) {
                cm = p.register(arena.allocate(chunkMemory, 4096),
                        Access.LOCAL_WRITE | (windowCount > 0 ? Access.MW_BIND : 0));
            }
            ok = true;
        } finally {
            if (!ok) {
                closeQuietly(qp0, cm, r, s, place == null ? q : null, ch, shared == null ? p : null);
                if (place != null) {
                    place.release();
                }
                freeUnlessPinned(arena, cm, r, s);
            }
        }
        this.slot = place;
        this.pd = p;
        this.channel = ch;
        this.cq = q;
        this.qp = qp0;
        this.sendMr = s;
        this.recvMr = r;
        this.chunkMr = cm;
        WindowPool windows = windowCount > 0 ? new WindowPool(p, qp0, generation, windowCount) : null;
        if (windows != null && !windows.probe()) {
            windows.closeAll(); // the device refused a window: a registration per RPC, and no R
            windows = null;
        }
        this.chunks = new ChunkMemory(p, cm, windows, callerBuffers, guard);
    }

    /**
     * Destroy has begun: a thread asleep on the link's own completion channel (its poller,
     * or a blocking caller leading) returns at once, and none sleeps on it again, so the
     * destroy's wait for the gate is not a wait for a timeout.
     */
    void stopWaiters() {
        if (channel != null) {
            channel.stopWaiting();
        }
    }

    /**
     * Frees everything (caller holds the gate's write side, the poller has stopped or is
     * freed past): QP, CQ, channel, send and receive MRs, chunk memory, PD, arena.
     *
     * @param afterQp runs once the QP is destroyed and before the CQ is: the shared receives
     *                still in the CQ go back to their pool there (a group's CQ is not
     *                freed here: the group drops what is left of the QP's completions)
     * @return the withdrawals that waited for a LOCAL_INV: the QP is gone, so their rkeys
     *         are dead; the caller runs them once outside the gate
     */
    Runnable[] close(Runnable afterQp) {
        closeQuietly(qp);
        try {
            afterQp.run();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "after the QP: {0}", e.toString());
        }
        if (slot == null) {
            closeQuietly(cq, channel);
        }
        closeQuietly(sendMr, recvMr);
        Runnable[] withdrawn = chunks.closeAll();
        if (shared == null) {
            closeQuietly(pd); // a shared PD is the server's
        }
        freeUnlessPinned(arena, sendMr, recvMr, chunkMr);
        return withdrawn;
    }

    /**
     * Frees {@code arena} unless a registration over its memory is still open (the kernel
     * refused ibv_dereg_mr): then the memory stays allocated for good, as the device may
     * still reach the pages the registration pins; said once, with the bytes kept.
     */
    static void freeUnlessPinned(Arena arena, MemoryRegion... over) {
        long pinned = 0;
        for (MemoryRegion mr : over) {
            if (mr != null && !mr.isClosed()) {
                pinned += mr.length();
            }
        }
        if (pinned == 0) {
            arena.close();
        } else {
            LOG.log(Level.WARNING, "ibv_dereg_mr refused at teardown: {0} registered bytes stay allocated", pinned);
        }
    }

    static void closeQuietly(AutoCloseable... all) {
        for (AutoCloseable a : all) {
            if (a != null) {
                try {
                    a.close();
                } catch (Exception e) {
                    LOG.log(Level.DEBUG, "close: {0}", e.toString());
                }
            }
        }
    }
}
