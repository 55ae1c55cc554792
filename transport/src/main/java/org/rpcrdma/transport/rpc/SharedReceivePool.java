package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.transport.link.WrId;

/**
 * The receive buffers of a server's shared receive queue: one registered segment cut into
 * receive-inline-threshold buffers, drawn on by every connection of the server (each
 * through its {@link SharedReceives}), so registered receive memory does not grow with
 * the number of clients (≈ the SRQ of libevpl or UCX; the kernel's svcrdma keeps a
 * receive queue per transport instead).
 *
 * <p>Each buffer is FREE, POSTED (on the SRQ) or HELD (its message is being processed).
 * Every FREE buffer is posted again as soon as {@code batch} of them are FREE (the
 * watermark: at most {@code batch - 1} are FREE and not posted at any time), on the
 * thread that freed the last of them. Unlike a per-QP {@link ReceivePool}, completions
 * of one pool come from many connections and therefore from many completion threads:
 * every transition is a compare-and-set, the posted count an atomic, and the free list
 * and the post itself are under the pool's lock.
 */
public final class SharedReceivePool {
    private static final byte FREE = 0;
    private static final byte POSTED = 1;
    private static final byte HELD = 2;
    private static final VarHandle STATE = MethodHandles.arrayElementVarHandle(byte[].class);

    private final MemorySegment[] buffers;
    /** Per slot the last message view (see {@link ReceivePool#view}); written by the thread that took the slot. */
    private final MemorySegment[] views;
    private final byte[] state;
    private final int batch;
    /** FREE buffers not posted: a stack, under the lock (the last freed is posted first, warm in the cache). */
    private final int[] free;
    private int freeTop;
    private final int[] scratch;
    private final ReceivePool.Poster poster;
    private final AtomicInteger posted = new AtomicInteger();
    private final AtomicInteger held = new AtomicInteger();
    private boolean closed;

    /**
     * @param memory at least {@code count * bufferSize} bytes, registered for local write
     *               in the PD of the shared receive queue {@code poster} posts to
     * @param batch  the watermark: post once this many are FREE (≥ 1)
     */
    public SharedReceivePool(MemorySegment memory, int count, int bufferSize, int batch, ReceivePool.Poster poster) {
        ReceivePool.checkLayout(memory, count, bufferSize, batch);
        this.batch = Math.min(batch, count);
        this.buffers = new MemorySegment[count];
        this.views = new MemorySegment[count];
        this.state = new byte[count];
        this.free = new int[count];
        this.scratch = new int[count];
        this.poster = poster;
        for (int i = 0; i < count; i++) {
            buffers[i] = memory.asSlice((long) i * bufferSize, bufferSize);
            free[freeTop++] = count - 1 - i; // slot 0 on top
        }
    }

    /** Posts every FREE buffer (at start: the whole pool). */
    public synchronized int postAll() {
        return postFree(1);
    }

    /** Posts the FREE buffers if at least {@code atLeast} are (the caller holds the lock). */
    private int postFree(int atLeast) {
        if (closed || freeTop < atLeast) {
            return 0;
        }
        int k = freeTop;
        for (int j = 0; j < k; j++) {
            int slot = free[freeTop - 1 - j];
            scratch[j] = slot;
            STATE.setRelease(state, slot, POSTED);
        }
        freeTop = 0;
        try {
            poster.post(scratch, k);
        } catch (RuntimeException e) {
            for (int j = k - 1; j >= 0; j--) {
                STATE.setRelease(state, scratch[j], FREE);
                free[freeTop++] = scratch[j];
            }
            throw e;
        }
        posted.addAndGet(k); // ORDER: only once ibv_post_srq_recv returned
        return k;
    }

    /** Posts the FREE buffers if the watermark is reached. */
    public synchronized int replenish() {
        return postFree(batch);
    }

    /** A receive completed (on any connection's completion thread): POSTED → HELD. */
    public MemorySegment completed(int slot) {
        move(slot, POSTED, HELD);
        posted.decrementAndGet();
        held.incrementAndGet();
        return buffers[slot];
    }

    /**
     * A receive came back without a message for anyone (flushed, or completed on a
     * connection already lost, or left in a destroyed link's CQ): POSTED → FREE.
     */
    public void reclaim(int slot) {
        move(slot, POSTED, FREE);
        posted.decrementAndGet();
        pushFree(slot);
    }

    /** The holder is done with the buffer: HELD → FREE, posted again at the watermark. */
    public void release(int slot) {
        move(slot, HELD, FREE); // ORDER: after the holder's last read of the buffer
        held.decrementAndGet();
        pushFree(slot);
    }

    private synchronized void pushFree(int slot) {
        free[freeTop++] = slot;
        postFree(batch);
    }

    private void move(int slot, byte from, byte to) {
        if (slot < 0 || slot >= state.length) {
            throw new IllegalArgumentException("no receive buffer " + slot);
        }
        if (!STATE.compareAndSet(state, slot, from, to)) {
            throw new IllegalStateException("receive buffer " + slot + " is " + name((byte) STATE.getVolatile(state, slot))
                    + ", expected " + name(from));
        }
    }

    private static String name(byte s) {
        return switch (s) {
            case FREE -> "FREE";
            case POSTED -> "POSTED";
            default -> "HELD";
        };
    }

    /** Nothing is posted from now on (the shared receive queue is about to be destroyed). */
    public synchronized void close() {
        closed = true;
    }

    public MemorySegment buffer(int slot) {
        return buffers[slot];
    }

    /** As {@link ReceivePool#view}: called by the thread that took {@code slot}, which owns it until release. */
    public MemorySegment view(int slot, long offset, long length) {
        MemorySegment v = views[slot];
        MemorySegment b = buffers[slot];
        if (v == null || v.address() != b.address() + offset || v.byteSize() != length) {
            v = b.asSlice(offset, length);
            views[slot] = v;
        }
        return v;
    }

    public int posted() {
        return posted.get();
    }

    public int held() {
        return held.get();
    }

    /** FREE buffers not yet posted (fewer than the watermark once a release or reclaim returned). */
    public synchronized int free() {
        return freeTop;
    }

    public int capacity() {
        return buffers.length;
    }

    public int batch() {
        return batch;
    }
}
