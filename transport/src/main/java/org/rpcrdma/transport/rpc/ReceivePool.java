package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.rpcrdma.transport.link.WrId;

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
 * <p>Threading: only FREE → POSTED ({@link #replenish}) and {@link #shutdown} take the
 * lock ({@link Poster#post} is called under it: it only rings the doorbell). Every other
 * transition has one owner and needs none (four lock acquisitions per call fewer than a
 * lock per transition): POSTED → HELD and POSTED → FREE ({@link #completed}, {@link #flushed}) belong to
 * the completion thread (one at a time), HELD → FREE ({@link #release}) to the one holder
 * of the buffer. A buffer's state is published with release stores after the effect it
 * names (a FREE after its holder's last read, a POSTED count after ibv_post_recv
 * returned), so a thread that reads it without the lock never acts on a state that is not
 * yet true. The posted count is two monotonic counters, one per writer: receives posted
 * (under the lock) and receives taken (by the completion thread).
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
    private static final VarHandle POSTED_TOTAL;
    private static final VarHandle TAKEN_TOTAL;
    private static final VarHandle STATE = MethodHandles.arrayElementVarHandle(byte[].class);

    static {
        try {
            var l = MethodHandles.lookup();
            POSTED_TOTAL = l.findVarHandle(ReceivePool.class, "postedTotal", int.class);
            TAKEN_TOTAL = l.findVarHandle(ReceivePool.class, "takenTotal", int.class);
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
    /** Per slot FREE, POSTED or HELD; written with release stores, read with acquire loads outside the lock. */
    private final byte[] state;
    private final int bufferSize;
    private final int batch;
    private final int[] scratch;
    private final Poster poster;
    /**
     * Receives ever posted: raised under the lock only once ibv_post_recv returned (release
     * store), read without it. Wraps harmlessly: only {@code postedTotal - takenTotal} is used.
     */
    private int postedTotal;
    /** Receives ever taken off the QP (completed or flushed): written by the completion thread only (opaque). */
    private int takenTotal;
    /** The QP is gone: nothing is posted any more and no receive counts as posted. */
    private volatile boolean shutDown;

    /**
     * @param memory     backing memory, at least {@code count * bufferSize} bytes
     *                   (registered for local write by the caller)
     * @param bufferSize the receive inline threshold
     * @param batch      post at least this many at a time when replenishing (≥ 1)
     */
    public ReceivePool(MemorySegment memory, int count, int bufferSize, int batch, Poster poster) {
        checkLayout(memory, count, bufferSize, batch);
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
    }

    /**
     * Receives POSTED now, as this thread can tell without the lock. The completion thread
     * reads its own taken count exactly and a posted count that can only be behind (it only
     * rises): never more than the truth. Another thread may miss receives taken a moment
     * ago: receives that were for messages which no longer need one (the
     * {@link ReceiveQueue#ensurePosted} contract). Under the lock the posted count is exact.
     */
    private int postedNow() {
        if (shutDown) {
            return 0;
        }
        int taken = (int) TAKEN_TOTAL.getOpaque(this);
        return (int) POSTED_TOTAL.getAcquire(this) - taken;
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
        int deficit = required - postedNow();
        if (deficit <= 0) {
            return 0;
        }
        int n = Math.max(deficit, batch);
        int k = 0;
        // Lowest-numbered FREE buffers first, not round robin: the buffers released last are
        // posted again while their lines are still in the cache (with a round robin, every
        // receive landed in a cold buffer; the first read of the header stalled on it:
        // 20% of an in-memory callback call's CPU on the host).
        for (int i = 0; k < n && i < state.length; i++) {
            // acquire: a holder's release store of FREE follows its last read of the buffer
            if ((byte) STATE.getAcquire(state, i) == FREE) {
                // release: the completion thread that finds it POSTED sees it made so before the post
                STATE.setRelease(state, i, POSTED);
                scratch[k++] = i;
            }
        }
        if (k == 0) {
            return 0;
        }
        try {
            poster.post(scratch, k);
        } catch (RuntimeException e) {
            for (int j = 0; j < k; j++) {
                STATE.setRelease(state, scratch[j], FREE);
            }
            throw e;
        }
        // ORDER: counted only now that ibv_post_recv returned: ensurePosted and
        // replenishAfterCompletion read the count without the lock, and a sender trusting a
        // receive not yet on the QP lost the connection to the reply (rnr_retry 0).
        POSTED_TOTAL.setRelease(this, postedTotal + k);
        return k;
    }

    /**
     * {@link #replenish} for the completion thread, right after a receive completed: no lock
     * while {@code required} are still posted (most completions, with batched posting).
     * Only the completion thread takes POSTED buffers away and it sees its own count; other
     * threads only post more, so what it reads here without the lock is never more than
     * the truth: it skips only when the locked path would post nothing. A receive counts
     * once its post returned, never while it is being posted.
     */
    @Override
    public int replenishAfterCompletion(int required) {
        if (required <= postedNow()) {
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
        if (required <= postedNow()) {
            // Enough, as of a moment ago: the same answer the lock would have given then,
            // and receives completed since were for messages that no longer need one.
            return true;
        }
        synchronized (this) {
            replenish(required);
            return postedNow() >= required;
        }
    }

    /** A receive completed successfully: POSTED → HELD (completion thread). */
    @Override
    public MemorySegment completed(int slot) {
        take(slot, HELD);
        return buffers[slot];
    }

    /** A receive was flushed (QP in error): POSTED → FREE (completion thread). */
    @Override
    public void flushed(int slot) {
        take(slot, FREE);
    }

    /** The completion thread takes a POSTED buffer off the QP. */
    private void take(int slot, byte to) {
        checkSlot(slot);
        if (shutDown) {
            // the QP is gone and its receives with it (a late completion is the caller's race to lose)
            throw new IllegalStateException("receive buffer " + slot + " completed after the QP was shut down");
        }
        expect(slot, POSTED);
        STATE.setRelease(state, slot, to);
        TAKEN_TOTAL.setOpaque(this, takenTotal + 1);
    }

    /** The holder is done with the buffer: HELD → FREE (no lock: the holder is its only writer). */
    @Override
    public void release(int slot) {
        checkSlot(slot);
        expect(slot, HELD);
        STATE.setRelease(state, slot, FREE); // ORDER: after the holder's last read of the buffer
    }

    /**
     * The QP is gone without flushing (destroyed): every POSTED buffer counts as FREE from
     * now on, and {@link #replenish} posts nothing. Their states stay POSTED (the completion
     * thread is their only writer); nothing posts them again.
     */
    @Override
    public synchronized void shutdown() {
        shutDown = true;
    }

    private void checkSlot(int slot) {
        if (slot < 0 || slot >= state.length) {
            throw new IllegalArgumentException("no receive buffer " + slot);
        }
    }

    private void expect(int slot, byte from) {
        byte s = (byte) STATE.getAcquire(state, slot);
        if (s != from) {
            throw new IllegalStateException("receive buffer " + slot + " is " + name(s) + ", expected " + name(from));
        }
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

    /** Receives posted now (a moment stale from a thread other than the completion thread's). */
    @Override
    public int posted() {
        return postedNow();
    }

    /** Buffers FREE now (after {@link #shutdown}, POSTED ones too): a racy snapshot while receives move. */
    public int free() {
        return count(FREE) + (shutDown ? count(POSTED) : 0);
    }

    /** Buffers HELD now: a racy snapshot while receives move. */
    @Override
    public int held() {
        return count(HELD);
    }

    private int count(byte s) {
        int n = 0;
        for (int i = 0; i < state.length; i++) {
            if ((byte) STATE.getAcquire(state, i) == s) {
                n++;
            }
        }
        return n;
    }

    /** The rules a pool's buffers follow, for this pool and the shared one: one slot per buffer in a work-request id. */
    static void checkLayout(MemorySegment memory, int count, int bufferSize, int batch) {
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
    }
}
