package org.rpcrdma.transport.rpc;

import org.rpcrdma.transport.link.WrId;

/**
 * A fixed ring of send contexts (≈ Linux {@code rpcrdma_sendctx}): each Send uses the
 * next context (its inline buffer and SGEs) in order. Most Sends are posted unsignalled;
 * every {@code signalEvery}-th is signalled, and because an RC send queue completes in
 * order, its completion frees it and every earlier context at once. A full ring makes
 * the sender queue its message (the owner keeps that queue), so the send queue can never
 * overflow. Not thread-safe: the owning send queue's lock guards it (it is held across
 * acquire, signal and post anyway, so Sends go out in ring order).
 */
public final class SendContextRing {
    private final int size;
    private final int signalEvery;
    private long head; // next to hand out
    private long tail; // oldest not yet completed
    /** {@code head % size}, kept as it moves: no division per Send. */
    private int headSlot;
    private int sinceSignal;

    /**
     * @param size        number of contexts (the send queue depth this ring protects)
     * @param signalEvery signal one Send in this many (1 = every Send); at most size
     */
    public SendContextRing(int size, int signalEvery) {
        if (size < 1 || size > WrId.MAX_SLOT + 1) {
            throw new IllegalArgumentException("send context ring size out of range: " + size);
        }
        if (signalEvery < 1 || signalEvery > size) {
            throw new IllegalArgumentException("signalEvery must be in [1, " + size + "], got " + signalEvery);
        }
        this.size = size;
        this.signalEvery = signalEvery;
    }

    /** A free slot, or -1 if the ring is full. */
    public int tryAcquire() {
        if (head - tail >= size) {
            return -1;
        }
        head++;
        int s = headSlot;
        headSlot = s + 1 == size ? 0 : s + 1;
        return s;
    }

    /**
     * Whether the Send about to be posted from a slot must be signalled. Call once per
     * Send, in posting order. Forces a signal when the ring is full, so a completion
     * always comes to free it.
     */
    public boolean shouldSignal() {
        if (++sinceSignal >= signalEvery || head - tail >= size) {
            sinceSignal = 0;
            return true;
        }
        return false;
    }

    /** A signalled Send from {@code slot} completed: it and every older context are free. */
    public void completed(int slot) {
        if (head == tail) {
            throw new IllegalStateException("send completion for slot " + slot + " with no Send outstanding");
        }
        long oldest = tail % size;
        long n = ((slot - oldest + size) % size) + 1;
        if (n > head - tail) {
            throw new IllegalStateException("send completion for slot " + slot + " not outstanding");
        }
        tail += n;
    }

    /** Everything outstanding is gone (QP flushed or destroyed). */
    public void reset() {
        tail = head;
        sinceSignal = 0;
    }

    public int inUse() {
        return (int) (head - tail);
    }

    public int size() {
        return size;
    }
}
