package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.IntToLongFunction;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_send_wr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_sge;

/**
 * One IBV_WR_SEND request with one SGE per send context, built once (≈ Linux's
 * {@code rpcrdma_sendctx}, whose {@code ib_send_wr} and SGE are set up with the context):
 * a context's Send always carries the same wr_id and lkey and, call after call, the same
 * buffer, so a post stores only what changed since that context's last Send (its length,
 * whether it is signalled, its address: usually nothing, or the length). Under C1 each
 * store into a segment is a chain of checks; {@link SendBatch} fills six per Send.
 * Posted by {@link QueuePair#postSend(PreparedSends, int, long, int, int)}.
 *
 * <p>Not thread-safe: a context is posted by one thread at a time (the send queue's lock).
 * No allocation after construction; the memory is freed by {@link #close()}.
 */
public final class PreparedSends implements AutoCloseable {
    private static final long WR_SIZE = ibv_send_wr.layout().byteSize();
    private static final long SGE_SIZE = ibv_sge.layout().byteSize();

    /** The arena it made for itself, or null (its owner's: {@link #close} leaves it). */
    private final Arena own;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final long wrsAddress;
    private final int contexts;
    /** What each context's request holds now: its SGE's address and length and its send_flags. */
    private final long[] address;
    private final int[] length;
    private final int[] flags;

    /**
     * @param contexts send contexts, one request each
     * @param lkey     the lkey of the registered memory every context's buffer lies in
     * @param wrId     the wr_id of context {@code slot}'s Send
     */
    public PreparedSends(int contexts, int lkey, IntToLongFunction wrId) {
        this(contexts, lkey, wrId, Arena.ofShared(), true);
    }

    /**
     * As above, in {@code arena}, which its owner closes after this one's last use: closing
     * a shared arena is a handshake with every thread of the JVM, so an owner of several
     * structures closes one.
     */
    public PreparedSends(int contexts, int lkey, IntToLongFunction wrId, Arena arena) {
        this(contexts, lkey, wrId, arena, false);
    }

    private PreparedSends(int contexts, int lkey, IntToLongFunction wrId, Arena arena, boolean owned) {
        if (contexts <= 0) {
            if (owned) {
                arena.close();
            }
            throw new IllegalArgumentException("contexts " + contexts);
        }
        this.own = owned ? arena : null;
        this.contexts = contexts;
        this.wrs = arena.allocate(WR_SIZE * contexts, 8); // zeroed: no union field set, next NULL
        this.sges = arena.allocate(SGE_SIZE * contexts, 8);
        this.wrsAddress = wrs.address();
        this.address = new long[contexts];
        this.length = new int[contexts];
        this.flags = new int[contexts];
        for (int i = 0; i < contexts; i++) {
            long wr = WR_SIZE * i;
            wrs.set(ValueLayout.JAVA_LONG, wr + ibv_send_wr.wr_id$offset(), wrId.applyAsLong(i));
            wrs.set(ValueLayout.JAVA_LONG, wr + ibv_send_wr.sg_list$offset(), sges.address() + SGE_SIZE * i);
            wrs.set(ValueLayout.JAVA_INT, wr + ibv_send_wr.num_sge$offset(), 1);
            wrs.set(ValueLayout.JAVA_INT, wr + ibv_send_wr.opcode$offset(), IbVerbs.IBV_WR_SEND());
            sges.set(ValueLayout.JAVA_INT, SGE_SIZE * i + ibv_sge.lkey$offset(), lkey);
        }
    }

    /** Whether context {@code slot} has a request here for a Send of {@code length} bytes (an SGE needs some). */
    public boolean covers(int slot, int length) {
        return slot >= 0 && slot < contexts && length > 0;
    }

    /**
     * Sets context {@code slot}'s request to send {@code [address, address + length)} with
     * {@code sendFlags}, storing only what differs from its last Send; its native address.
     */
    long prepare(int slot, long address, int length, int sendFlags) {
        long sge = SGE_SIZE * slot;
        if (this.address[slot] != address) {
            sges.set(ValueLayout.JAVA_LONG, sge + ibv_sge.addr$offset(), address);
            this.address[slot] = address;
        }
        if (this.length[slot] != length) {
            sges.set(ValueLayout.JAVA_INT, sge + ibv_sge.length$offset(), length);
            this.length[slot] = length;
        }
        long wr = WR_SIZE * slot;
        if (flags[slot] != sendFlags) {
            wrs.set(ValueLayout.JAVA_INT, wr + ibv_send_wr.send_flags$offset(), sendFlags);
            flags[slot] = sendFlags;
        }
        return wrsAddress + wr;
    }

    /** Context {@code slot}'s request (tests read its bytes). */
    MemorySegment request(int slot) {
        return wrs.asSlice(WR_SIZE * slot, WR_SIZE);
    }

    /** Context {@code slot}'s SGE (tests read its bytes). */
    MemorySegment sge(int slot) {
        return sges.asSlice(SGE_SIZE * slot, SGE_SIZE);
    }

    @Override
    public void close() {
        if (own != null) {
            own.close();
        }
    }
}
