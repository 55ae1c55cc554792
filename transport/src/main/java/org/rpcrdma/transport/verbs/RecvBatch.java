package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_recv_wr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_sge;

/**
 * A preallocated chain of {@code ibv_recv_wr} with one SGE each, posted by
 * {@link QueuePair#postRecv} or {@link SharedReceiveQueue#postRecv}. Reuse it: clear, add,
 * post. No allocation after construction; not thread-safe.
 */
public final class RecvBatch implements AutoCloseable {
    private static final long WR_SIZE = ibv_recv_wr.layout().byteSize();
    private static final long SGE_SIZE = ibv_sge.layout().byteSize();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final long wrsAddress;
    private final long sgesAddress;
    private final int maxWr;
    private int count;

    public RecvBatch(int maxWr) {
        if (maxWr <= 0) {
            throw new IllegalArgumentException("maxWr " + maxWr);
        }
        this.maxWr = maxWr;
        this.wrs = arena.allocate(WR_SIZE * maxWr, 8);
        this.sges = arena.allocate(SGE_SIZE * maxWr, 8);
        this.wrsAddress = wrs.address();
        this.sgesAddress = sges.address();
    }

    public void clear() {
        count = 0;
    }

    public int size() {
        return count;
    }

    MemorySegment first() {
        return wrs;
    }

    /** The native address of the first request (the chain ibv_post_recv takes). */
    long firstAddress() {
        return wrsAddress;
    }

    /** Adds a receive of up to {@code length} bytes into [address, ...) registered under {@code lkey}. */
    public int add(long wrId, int lkey, long address, int length) {
        if (count == maxWr) {
            throw new IllegalStateException("batch full (" + maxWr + " requests)");
        }
        long base = WR_SIZE * count;
        long sge = SGE_SIZE * count;
        sges.set(ValueLayout.JAVA_LONG, sge + ibv_sge.addr$offset(), address);
        sges.set(ValueLayout.JAVA_INT, sge + ibv_sge.length$offset(), length);
        sges.set(ValueLayout.JAVA_INT, sge + ibv_sge.lkey$offset(), lkey);
        wrs.set(ValueLayout.JAVA_LONG, base + ibv_recv_wr.wr_id$offset(), wrId);
        wrs.set(ValueLayout.JAVA_LONG, base + ibv_recv_wr.next$offset(), 0L);
        wrs.set(ValueLayout.JAVA_LONG, base + ibv_recv_wr.sg_list$offset(), sgesAddress + sge);
        wrs.set(ValueLayout.JAVA_INT, base + ibv_recv_wr.num_sge$offset(), 1);
        if (count > 0) {
            wrs.set(ValueLayout.JAVA_LONG, base - WR_SIZE + ibv_recv_wr.next$offset(), wrsAddress + base);
        }
        return count++;
    }

    @Override
    public void close() {
        arena.close();
    }
}
