package org.rpcrdma.transport.core;

import java.util.Map;
import java.util.TreeMap;

/**
 * First-fit allocation of byte ranges in one registered region (the link's chunk memory):
 * chunk data is assembled and sent from here without a registration per message. Ranges
 * are rounded up to {@link #ALIGN} bytes; freed neighbours are merged. Thread-safe.
 */
public final class ChunkPool {
    /** Allocation granule: a cache line, so two buffers never share one. */
    public static final long ALIGN = 64;

    private final long capacity;
    /** Free ranges: offset -> length, disjoint and never adjacent (merged on free). */
    private final TreeMap<Long, Long> free = new TreeMap<>();
    private long inUse;

    public ChunkPool(long capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity " + capacity);
        }
        this.capacity = capacity - capacity % ALIGN;
        if (this.capacity > 0) {
            free.put(0L, this.capacity);
        }
    }

    public long capacity() {
        return capacity;
    }

    /** Bytes handed out now (rounded). */
    public synchronized long inUse() {
        return inUse;
    }

    /** Rounds a request the way {@link #allocate} does. */
    public static long rounded(long size) {
        return Math.max(ALIGN, (size + ALIGN - 1) & -ALIGN);
    }

    /** The offset of a free range of at least {@code size} bytes, now taken; -1 if none is free. */
    public synchronized long allocate(long size) {
        if (size < 0) {
            throw new IllegalArgumentException("size " + size);
        }
        long need = rounded(size);
        for (Map.Entry<Long, Long> e : free.entrySet()) {
            if (e.getValue() >= need) {
                long off = e.getKey();
                long left = e.getValue() - need;
                free.remove(off);
                if (left > 0) {
                    free.put(off + need, left);
                }
                inUse += need;
                return off;
            }
        }
        return -1;
    }

    /** Gives back the range {@link #allocate} returned for {@code size}. */
    public synchronized void free(long offset, long size) {
        long len = rounded(size);
        if (offset < 0 || offset + len > capacity) {
            throw new IllegalArgumentException("range [" + offset + ", +" + len + ") is not in the pool");
        }
        Map.Entry<Long, Long> below = free.floorEntry(offset);
        if (below != null && below.getKey() + below.getValue() > offset) {
            throw new IllegalStateException("range at " + offset + " freed twice");
        }
        Map.Entry<Long, Long> above = free.ceilingEntry(offset);
        if (above != null && above.getKey() < offset + len) {
            throw new IllegalStateException("range at " + offset + " freed twice");
        }
        inUse -= len;
        long start = offset;
        if (below != null && below.getKey() + below.getValue() == offset) {
            start = below.getKey();
            len += below.getValue();
            free.remove(below.getKey());
        }
        if (above != null && above.getKey() == offset + rounded(size)) {
            len += above.getValue();
            free.remove(above.getKey());
        }
        free.put(start, len);
    }
}
