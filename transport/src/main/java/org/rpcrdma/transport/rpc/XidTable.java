package org.rpcrdma.transport.rpc;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * Outstanding calls of one direction, keyed by XID. A connection has two instances, one
 * per {@link Direction}, because the same XID may be in flight in both directions at once
 * (RFC 8167 §2.4.1). A reply that matches nothing is dropped and counted, never delivered to
 * another caller (cf. Linux {@code rpcrdma_reply_handler}: "reply for unknown xid").
 *
 * <p>Open addressing with linear probing over a power-of-two array sized at construction,
 * so insert and remove allocate nothing. Not thread-safe: the owning requester's lock
 * guards it (every use is under that lock already; a lock of its own cost two atomic
 * operations per put, contains and remove on the call path).
 *
 * @param <T> the per-call state
 */
public final class XidTable<T> {
    private final Direction direction;
    private final int[] keys;
    private final Object[] values;
    private final int mask;
    private final int capacity;
    private final LongConsumer onUnmatched;
    private int size;

    /**
     * @param capacity    most calls that can be outstanding at once (the credit maximum)
     * @param onUnmatched called with 1 for each reply that matched nothing
     */
    public XidTable(Direction direction, int capacity, LongConsumer onUnmatched) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1");
        }
        this.direction = direction;
        this.capacity = capacity;
        int n = Integer.highestOneBit(Math.max(2, capacity * 2 - 1)) << 1;
        keys = new int[n];
        values = new Object[n];
        mask = n - 1;
        this.onUnmatched = onUnmatched;
    }

    public Direction direction() {
        return direction;
    }

    private static int hash(int xid) {
        int h = xid * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    /**
     * Records an outstanding call.
     *
     * @throws IllegalStateException if the XID is already outstanding in this direction or
     *         the table is full (a credit-accounting bug)
     */
    public void put(int xid, T call) {
        if (call == null) {
            throw new NullPointerException("call");
        }
        if (size >= capacity) {
            throw new IllegalStateException(direction + " XID table full (" + capacity + ")");
        }
        int i = hash(xid) & mask;
        while (values[i] != null) {
            if (keys[i] == xid) {
                throw new IllegalStateException(direction + " XID 0x" + Integer.toHexString(xid)
                        + " already outstanding");
            }
            i = (i + 1) & mask;
        }
        keys[i] = xid;
        values[i] = call;
        size++;
    }

    /** Removes and returns the call for a received reply, or null (counted) if none. */
    public T match(int xid) {
        T t = remove(xid);
        if (t == null) {
            onUnmatched.accept(1);
        }
        return t;
    }

    /** Removes the call if present (abandon/timeout); no counting. */
    @SuppressWarnings("unchecked")
    public T remove(int xid) {
        int i = hash(xid) & mask;
        while (values[i] != null) {
            if (keys[i] == xid) {
                T t = (T) values[i];
                deleteAt(i);
                size--;
                return t;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    /** Backward-shift deletion keeps probe chains intact without tombstones. */
    private void deleteAt(int hole) {
        values[hole] = null;
        int j = hole;
        while (true) {
            j = (j + 1) & mask;
            if (values[j] == null) {
                return;
            }
            int home = hash(keys[j]) & mask;
            // Move j into the hole unless its home lies cyclically in (hole, j].
            boolean stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
            if (!stays) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                values[j] = null;
                hole = j;
            }
        }
    }

    public boolean contains(int xid) {
        int i = hash(xid) & mask;
        while (values[i] != null) {
            if (keys[i] == xid) {
                return true;
            }
            i = (i + 1) & mask;
        }
        return false;
    }

    public int size() {
        return size;
    }

    /** Calls {@code action} with every outstanding call (caller keeps the table unchanged meanwhile). */
    @SuppressWarnings("unchecked")
    public void forEach(java.util.function.Consumer<? super T> action) {
        for (Object v : values) {
            if (v != null) {
                action.accept((T) v);
            }
        }
    }

    /** Empties the table and returns every outstanding call (connection lost or closed). */
    @SuppressWarnings("unchecked")
    public List<T> removeAll() {
        List<T> out = new ArrayList<>(size);
        for (int i = 0; i < values.length; i++) {
            if (values[i] != null) {
                out.add((T) values[i]);
                values[i] = null;
            }
        }
        size = 0;
        return out;
    }
}
