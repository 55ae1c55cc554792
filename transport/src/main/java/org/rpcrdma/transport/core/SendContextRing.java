package org.rpcrdma.transport.core;

import java.util.ArrayDeque;
import java.util.function.IntConsumer;

/**
 * A fixed ring of send contexts (≈ Linux {@code rpcrdma_sendctx}): each Send uses the
 * next context (its inline buffer and SGEs) in order. Most Sends are posted unsignalled;
 * every {@code signalEvery}-th is signalled, and because an RC send queue completes in
 * order, its completion frees it and every earlier context at once. An empty ring makes
 * the sender wait, so the send queue can never overflow.
 *
 * <p>Waiting is asynchronous, as in {@link CreditAccount}: {@link #acquire(IntConsumer)}
 * runs the continuation with a slot now or when one is freed. Thread-safe.
 */
public final class SendContextRing {
    private final int size;
    private final int signalEvery;
    private final ArrayDeque<IntConsumer> waiters = new ArrayDeque<>();
    private final RpcRdmaStats stats;
    private long head; // next to hand out
    private long tail; // oldest not yet completed
    private int sinceSignal;

    /**
     * @param size        number of contexts (the send queue depth this ring protects)
     * @param signalEvery signal one Send in this many (1 = every Send); at most size
     */
    public SendContextRing(int size, int signalEvery, RpcRdmaStats stats) {
        if (size < 1 || size > WrId.MAX_SLOT + 1) {
            throw new IllegalArgumentException("send context ring size out of range: " + size);
        }
        if (signalEvery < 1 || signalEvery > size) {
            throw new IllegalArgumentException("signalEvery must be in [1, " + size + "], got " + signalEvery);
        }
        this.size = size;
        this.signalEvery = signalEvery;
        this.stats = stats;
    }

    /** A free slot, or -1 if the ring is full. */
    public synchronized int tryAcquire() {
        if (!waiters.isEmpty() || head - tail >= size) {
            return -1;
        }
        return (int) (head++ % size);
    }

    /** Runs {@code withSlot} with a slot now, or later on the thread that frees one. */
    public boolean acquire(IntConsumer withSlot) {
        int slot;
        synchronized (this) {
            if (!waiters.isEmpty() || head - tail >= size) {
                waiters.addLast(withSlot);
                if (stats != null) {
                    stats.sendContextWaits.increment();
                }
                return false;
            }
            slot = (int) (head++ % size);
        }
        withSlot.accept(slot);
        return true;
    }

    /**
     * Whether the Send about to be posted from a slot must be signalled. Call once per
     * Send, in posting order. Forces a signal when the ring is full so its waiters are
     * always woken eventually.
     */
    public synchronized boolean shouldSignal() {
        if (++sinceSignal >= signalEvery || head - tail >= size) {
            sinceSignal = 0;
            return true;
        }
        return false;
    }

    /** A signalled Send from {@code slot} completed: it and every older context are free. */
    public void completed(int slot) {
        synchronized (this) {
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
        drain();
    }

    /** Everything outstanding is gone (QP flushed or destroyed). */
    public void reset() {
        synchronized (this) {
            tail = head;
            sinceSignal = 0;
        }
        drain();
    }

    private void drain() {
        while (true) {
            IntConsumer w;
            int slot;
            synchronized (this) {
                if (waiters.isEmpty() || head - tail >= size) {
                    return;
                }
                w = waiters.pollFirst();
                slot = (int) (head++ % size);
            }
            w.accept(slot);
        }
    }

    public synchronized int inUse() {
        return (int) (head - tail);
    }

    public synchronized int waiting() {
        return waiters.size();
    }

    public int size() {
        return size;
    }
}
