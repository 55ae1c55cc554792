package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_recv_wr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_sge;

/**
 * A preallocated chain of {@code ibv_recv_wr} with one SGE each, posted by
 * {@link QueuePair#postRecv} or {@link SharedReceiveQueue#postRecv}. Reuse it: clear, add,
 * post. No allocation after construction; not thread-safe.
 *
 * <p>Each request's {@code sg_list} and {@code num_sge} (its own one SGE) are written once;
 * a receive then costs four stores (its wr_id, next, and the SGE's address and its length
 * with the lkey as one 64-bit word), each a chain of checks under C1.
 */
public final class RecvBatch implements AutoCloseable {
    private static final long WR_SIZE = ibv_recv_wr.layout().byteSize();
    private static final long SGE_SIZE = ibv_sge.layout().byteSize();
    private static final long WR_ID = ibv_recv_wr.wr_id$offset();
    private static final long NEXT = ibv_recv_wr.next$offset();
    private static final long SGE_ADDR = ibv_sge.addr$offset();
    private static final long SGE_LENGTH = ibv_sge.length$offset();
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    static {
        // verbs.h fixes it: an SGE's length and lkey share a 64-bit word
        if (SGE_LENGTH % 8 != 0 || ibv_sge.lkey$offset() != SGE_LENGTH + 4) {
            throw new ExceptionInInitializerError("unexpected ibv_sge layout");
        }
    }

    /** Its memory's arena; null if that is its owner's, who closes it. */
    private final Arena own;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final long wrsAddress;
    private final long sgesAddress;
    private final int maxWr;
    private int count;

    public RecvBatch(int maxWr) {
        this(maxWr, Arena.ofShared(), true);
    }

    /** As above, in {@code arena}, which its owner closes after this batch's last use (see {@link SendBatch}). */
    public RecvBatch(int maxWr, Arena arena) {
        this(maxWr, arena, false);
    }

    private RecvBatch(int maxWr, Arena arena, boolean owned) {
        if (maxWr <= 0) {
            if (owned) {
                arena.close();
            }
            throw new IllegalArgumentException("maxWr " + maxWr);
        }
        this.own = owned ? arena : null;
        this.maxWr = maxWr;
        this.wrs = arena.allocate(WR_SIZE * maxWr, 8);
        this.sges = arena.allocate(SGE_SIZE * maxWr, 8);
        this.wrsAddress = wrs.address();
        this.sgesAddress = sges.address();
        for (int i = 0; i < maxWr; i++) {
            wrs.set(ValueLayout.JAVA_LONG, WR_SIZE * i + ibv_recv_wr.sg_list$offset(), sgesAddress + SGE_SIZE * i);
            wrs.set(ValueLayout.JAVA_INT, WR_SIZE * i + ibv_recv_wr.num_sge$offset(), 1);
        }
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
        sges.set(ValueLayout.JAVA_LONG, sge + SGE_ADDR, address);
        sges.set(ValueLayout.JAVA_LONG, sge + SGE_LENGTH, LITTLE_ENDIAN
                ? (long) lkey << 32 | length & 0xffff_ffffL : (long) length << 32 | lkey & 0xffff_ffffL);
        wrs.set(ValueLayout.JAVA_LONG, base + WR_ID, wrId);
        wrs.set(ValueLayout.JAVA_LONG, base + NEXT, 0L);
        if (count > 0) {
            wrs.set(ValueLayout.JAVA_LONG, base - WR_SIZE + NEXT, wrsAddress + base);
        }
        return count++;
    }

    @Override
    public void close() {
        if (own != null) {
            own.close();
        }
    }
}
