package org.rpcrdma.transport.chunk;

import java.util.Arrays;

/**
 * The windows of a {@link WindowPool} bound now, by rkey (rkey -> window index): an
 * open-addressed table of ints made once, so that a bind, a withdrawal and a peer's Send
 * with Invalidate look an rkey up without boxing it (one each per exposed chunk, on the
 * call path). Linear probing, deletion by backward shift; twice as many slots as windows,
 * so it never fills. Rkey 0 marks an empty slot: no window rkey is 0
 * ({@link WindowPool#NO_WINDOW}). Not thread-safe: its pool calls it under its lock.
 */
final class BoundRkeys {
    private final int[] keys;
    private final int[] values;
    private final int mask;
    private int size;

    BoundRkeys(int windows) {
        int slots = Integer.highestOneBit(Math.max(2, windows) * 2 - 1) << 1; // a power of two >= 2 * windows
        this.keys = new int[slots];
        this.values = new int[slots];
        this.mask = slots - 1;
    }

    /** Records {@code rkey} as window {@code w}'s (an rkey already there is rebound). */
    void put(int rkey, int w) {
        if (rkey == 0) {
            throw new IllegalArgumentException("rkey 0 is no window's");
        }
        int i = slot(rkey);
        while (keys[i] != 0 && keys[i] != rkey) {
            i = i + 1 & mask;
        }
        if (keys[i] == 0) {
            if (size == keys.length / 2) {
                throw new IllegalStateException("more rkeys bound than windows");
            }
            size++;
        }
        keys[i] = rkey;
        values[i] = w;
    }

    /** The window bound with {@code rkey}, or -1. */
    int get(int rkey) {
        if (rkey == 0) {
            return -1;
        }
        for (int i = slot(rkey); keys[i] != 0; i = i + 1 & mask) {
            if (keys[i] == rkey) {
                return values[i];
            }
        }
        return -1;
    }

    /** Forgets {@code rkey}; returns its window, or -1 if it was not bound. */
    int remove(int rkey) {
        if (rkey == 0) {
            return -1;
        }
        int i = slot(rkey);
        while (keys[i] != rkey) {
            if (keys[i] == 0) {
                return -1;
            }
            i = i + 1 & mask;
        }
        int w = values[i];
        // Backward shift: move later entries of the probe run into the hole when their home slot allows it.
        int hole = i;
        for (int j = hole + 1 & mask; keys[j] != 0; j = j + 1 & mask) {
            int home = slot(keys[j]);
            if ((j - home & mask) >= (j - hole & mask)) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                hole = j;
            }
        }
        keys[hole] = 0;
        size--;
        return w;
    }

    int size() {
        return size;
    }

    void clear() {
        Arrays.fill(keys, 0);
        size = 0;
    }

    /** Home slot: the rkey's bits mixed, since rxe's differ mostly in the upper 24 (the index) and the tag. */
    private int slot(int rkey) {
        int h = rkey * 0x9E3779B9;
        return (h ^ h >>> 16) & mask;
    }
}
