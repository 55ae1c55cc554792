package org.rpcrdma.transport.core;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The receive buffers of one connection's QP, used by both directions (RFC 8167 §4;
 * ≈ Linux {@code rpcrdma_rep}). Every buffer is one
 * receive-inline-threshold sized slice of a single registered segment, made up front, so
 * the data path neither allocates nor registers.
 *
 * <p>Each buffer is FREE, POSTED (owned by the hardware) or HELD (its message is being
 * processed or was handed to a user who has not released it). {@link #replenish} posts
 * FREE buffers in batches until at least the required number is POSTED; the required
 * number is the caller's: on a client, outstanding forward calls + backward credits; on a
 * server, forward credits granted + outstanding backward calls. Every transition checks
 * its source state, so the posted count can never go negative and a buffer can never be
 * posted twice.
 *
 * <p>Threading: all methods are synchronized; {@link Poster#post} is called under the lock
 * (it only rings the doorbell).
 */
public final class ReceivePool implements ReceiveQueue {
    /** Posts receive work requests for the given slots (wr_id and address follow from the slot); counts them. */
    @FunctionalInterface
    public interface Poster {
        void post(int[] slots, int count);
    }

    private static final byte FREE = 0;
    private static final byte POSTED = 1;
    private static final byte HELD = 2;
    private static final VarHandle POSTED_COUNT;

    static {
        try {
            POSTED_COUNT = MethodHandles.lookup().findVarHandle(ReceivePool.class, "posted", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MemorySegment memory;
    private final MemorySegment[] buffers;
    /**
     * Per slot, the last message view handed out ({@link #view}): an RPC's message sits at
     * the same offset with the same length call after call (one header size, one procedure),
     * so its slice is made once, not per message. Completion thread only.
     */
    private final MemorySegment[] views;
    private final byte[] state;
    private final int bufferSize;
    private final int batch;
    private final int[] scratch;
    private final Poster poster;
    /** Written under the lock; read without it (opaque) where an old value is as good as a locked one. */
    private int posted;
    private int free;
    private int freeCursor;
    private boolean shutDown;

    /**
     * @param memory     backing memory, at least {@code count * bufferSize} bytes
     *                   (registered for local write by the caller)
     * @param bufferSize the receive inline threshold
     * @param batch      post at least this many at a time when replenishing (≥ 1)
     */
    public ReceivePool(MemorySegment memory, int count, int bufferSize, int batch, Poster poster) {
        if (count < 1 || bufferSize < 1 || batch < 1) {
            throw new IllegalArgumentException("count, bufferSize and batch must be >= 1");
        }
        if (count > WrId.MAX_SLOT + 1) {
            throw new IllegalArgumentException("too many receive buffers: " + count);
        }
        if (memory.byteSize() < (long) count * bufferSize) {
            throw new IllegalArgumentException("memory of " + memory.byteSize() + " bytes is smaller than "
                    + count + " x " + bufferSize);
        }
        this.memory = memory;
        this.bufferSize = bufferSize;
        this.batch = Math.min(batch, count);
        this.buffers = new MemorySegment[count];
        this.views = new MemorySegment[count];
        for (int i = 0; i < count; i++) {
            buffers[i] = memory.asSlice((long) i * bufferSize, bufferSize);
        }
        this.state = new byte[count];
        this.scratch = new int[count];
        this.poster = poster;
        this.free = count;
    }

    /**
     * Posts FREE buffers until at least {@code required} are POSTED. Posts nothing while the
     * deficit is zero; otherwise posts the deficit rounded up to the batch size (bounded by
     * what is free), in one call to the poster.
     *
     * @return how many were posted now
     */
    @Override
    public synchronized int replenish(int required) {
        if (shutDown) {
            return 0; // the QP is gone: a late caller must not post to it
        }
        int deficit = required - posted;
        if (deficit <= 0) {
            return 0;
        }
        int n = Math.min(free, Math.max(deficit, batch));
        int k = 0;
        for (int scanned = 0; k < n && scanned < state.length; scanned++) {
            int i = freeCursor;
            freeCursor = freeCursor + 1 == state.length ? 0 : freeCursor + 1;
            if (state[i] == FREE) {
                state[i] = POSTED;
                scratch[k++] = i;
            }
        }
        if (k == 0) {
            return 0;
        }
        free -= k;
        try {
            poster.post(scratch, k);
        } catch (RuntimeException e) {
            for (int j = 0; j < k; j++) {
                state[scratch[j]] = FREE;
            }
            free += k;
            throw e;
        }
        // ORDER: counted only now that ibv_post_recv returned: ensurePosted and
        // replenishAfterCompletion read the count without the lock, and a sender trusting a
        // receive not yet on the QP lost the connection to the reply (rnr_retry 0).
        posted += k;
        return k;
    }

    /**
     * {@link #replenish} for the completion thread, right after a receive completed: no lock
     * while {@code required} are still posted (most completions, with batched posting).
     * Only the completion thread makes {@code posted} smaller ({@link #completed},
     * {@link #flushed}) and it sees its own writes; other threads only make it larger, so
     * what it reads here without the lock is never more than the truth: it skips only when
     * the locked path would post nothing. (One exception, once the QP is gone:
     * {@link #shutdown} clears it; no receive is worth posting then.) A receive counts once
     * its post returned, never while it is being posted.
     */
    @Override
    public int replenishAfterCompletion(int required) {
        if (required <= (int) POSTED_COUNT.getOpaque(this)) {
            return 0;
        }
        return replenish(required);
    }

    /**
     * {@link #replenish}, then whether at least {@code required} are POSTED (false when too
     * few buffers are FREE: the holders have them), in one acquisition of the lock; no
     * lock when the count read without it is enough.
     */
    @Override
    public boolean ensurePosted(int required) {
        if (required <= (int) POSTED_COUNT.getOpaque(this)) {
            // Enough, as of a moment ago: the same answer the lock would have given then,
            // and receives completed since were for messages that no longer need one.
            return true;
        }
        synchronized (this) {
            replenish(required);
            return posted >= required;
        }
    }

    /** A receive completed successfully: POSTED → HELD. */
    @Override
    public synchronized MemorySegment completed(int slot) {
        transition(slot, POSTED, HELD);
        posted--;
        return buffers[slot];
    }

    /** A receive was flushed (QP in error): POSTED → FREE. */
    @Override
    public synchronized void flushed(int slot) {
        transition(slot, POSTED, FREE);
        posted--;
        free++;
    }

    /** The holder is done with the buffer: HELD → FREE. */
    @Override
    public synchronized void release(int slot) {
        transition(slot, HELD, FREE);
        free++;
    }

    /**
     * The QP is gone without flushing (destroyed): every POSTED buffer is FREE again, and
     * {@link #replenish} posts nothing from now on.
     */
    @Override
    public synchronized void shutdown() {
        shutDown = true;
        for (int i = 0; i < state.length; i++) {
            if (state[i] == POSTED) {
                state[i] = FREE;
                free++;
            }
        }
        posted = 0;
    }

    private void transition(int slot, byte from, byte to) {
        if (slot < 0 || slot >= state.length) {
            throw new IllegalArgumentException("no receive buffer " + slot);
        }
        if (state[slot] != from) {
            throw new IllegalStateException("receive buffer " + slot + " is " + name(state[slot])
                    + ", expected " + name(from));
        }
        state[slot] = to;
    }

    private static String name(byte s) {
        return switch (s) {
            case FREE -> "FREE";
            case POSTED -> "POSTED";
            default -> "HELD";
        };
    }

    @Override
    public MemorySegment buffer(int slot) {
        return buffers[slot];
    }

    /**
     * Bytes {@code [offset, offset + length)} of buffer {@code slot}: the slice made for
     * the previous message in that slot when it had the same place and length, else a new
     * one. Called by the completion thread that dispatches the slot.
     */
    @Override
    public MemorySegment view(int slot, long offset, long length) {
        MemorySegment v = views[slot];
        MemorySegment b = buffers[slot];
        if (v == null || v.address() != b.address() + offset || v.byteSize() != length) {
            v = b.asSlice(offset, length);
            views[slot] = v;
        }
        return v;
    }

    public long address(int slot) {
        return memory.address() + (long) slot * bufferSize;
    }

    public int bufferSize() {
        return bufferSize;
    }

    @Override
    public int capacity() {
        return buffers.length;
    }

    @Override
    public synchronized int posted() {
        return posted;
    }

    public synchronized int free() {
        return free;
    }

    @Override
    public synchronized int held() {
        return buffers.length - posted - free;
    }
}
