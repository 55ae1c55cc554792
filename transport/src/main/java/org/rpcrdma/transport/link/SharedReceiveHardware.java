package org.rpcrdma.transport.link;

import java.lang.foreign.Arena;
import org.rpcrdma.transport.rpc.SharedCredits;
import org.rpcrdma.transport.rpc.SharedReceivePool;
import org.rpcrdma.transport.verbs.Access;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.MemoryRegion;
import org.rpcrdma.transport.verbs.ProtectionDomain;
import org.rpcrdma.transport.verbs.RecvBatch;
import org.rpcrdma.transport.verbs.SharedReceiveQueue;

/**
 * A server's receive side on one device, shared by all its connections there: one PD
 * (every QP that takes receives from an SRQ must be in the SRQ's PD, and so must the
 * memory the receives land in), one SRQ ({@code ibv_create_srq}), one registered segment
 * of receive buffers and the {@link SharedReceivePool} that posts them
 * ({@code ibv_post_srq_recv}, under the pool's lock), and the {@link SharedCredits} the
 * connections' grants come from. The receive wr_ids carry this object's generation, not a
 * link's: a completion names a slot of the pool on whichever connection's CQ it arrives.
 *
 * <p>Owned by the server; {@link #close} once every QP on it is destroyed (the kernel
 * refuses to destroy an SRQ still in use): SRQ, MR, PD, then the memory.
 */
public final class SharedReceiveHardware implements AutoCloseable {
    private final ProtectionDomain pd;
    private final SharedReceiveQueue srq;
    private final MemoryRegion mr;
    private final RecvBatch batch;
    private final Arena arena = Arena.ofShared();
    private final SharedReceivePool pool;
    private final SharedCredits credits;
    private final int generation;

    /**
     * @param count      receive buffers (the SRQ's depth)
     * @param bufferSize the receive inline threshold
     * @param watermark  post again once this many buffers are free
     */
    public SharedReceiveHardware(Device dev, int count, int bufferSize, int watermark, SharedCredits credits,
            int generation) {
        this.credits = credits;
        this.generation = generation;
        ProtectionDomain p = null;
        SharedReceiveQueue q = null;
        MemoryRegion r = null;
        RecvBatch b = null;
        boolean ok = false;
        try {
            p = dev.allocateProtectionDomain();
            q = p.createSharedReceiveQueue(count, 1);
            r = p.register(arena.allocate((long) count * bufferSize, 4096), Access.LOCAL_WRITE);
            b = new RecvBatch(count);
            ok = true;
        } finally {
            if (!ok) {
                if (b != null) {
                    b.close();
                }
                LinkHardware.closeQuietly(q, r, p);
                LinkHardware.freeUnlessPinned(arena, r);
            }
        }
        this.pd = p;
        this.srq = q;
        this.mr = r;
        this.batch = b;
        long base = r.segment().address();
        int lkey = r.lkey();
        this.pool = new SharedReceivePool(r.segment(), count, bufferSize, watermark, (slots, n) -> {
            batch.clear();
            for (int i = 0; i < n; i++) {
                batch.add(WrId.pack(WrId.OP_RECV, slots[i], generation), lkey, base + (long) slots[i] * bufferSize,
                        bufferSize);
            }
            srq.postRecv(batch);
        });
        pool.postAll();
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    SharedReceiveQueue srq() {
        return srq;
    }

    public SharedReceivePool pool() {
        return pool;
    }

    public SharedCredits credits() {
        return credits;
    }

    /** The generation receive wr_ids carry. */
    int generation() {
        return generation;
    }

    /** Registered receive memory in bytes: the same however many connections there are. */
    public long registeredBytes() {
        return mr.segment().byteSize();
    }

    @Override
    public void close() {
        pool.close(); // ORDER: nothing is posted to the SRQ once it is going
        LinkHardware.closeQuietly(srq, mr, pd);
        batch.close();
        LinkHardware.freeUnlessPinned(arena, mr);
    }
}
