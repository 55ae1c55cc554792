package org.rpcrdma.transport.chunk;

import java.util.Arrays;

/**
 * First-fit allocation of byte ranges in one registered region (the link's chunk memory):
 * chunk data is assembled and sent from here without a registration per message. Ranges
 * are rounded up to {@link #ALIGN} bytes; freed neighbours are merged. Thread-safe.
 *
 * <p>The free ranges are two sorted primitive arrays, so that allocating and freeing
 * allocate nothing on the hot path (a chunked call takes and gives back up to four
 * ranges; a map of boxed offsets cost about 700 bytes of garbage per call). They grow
 * only when the pool fragments into more ranges than ever before.
 */
public final class ChunkPool {
    /** Allocation granule: a cache line, so two buffers never share one. */
    public static final long ALIGN = 64;

    private final long capacity;
    /** Free ranges {@code [starts[i], +lengths[i])}, i < count: sorted, disjoint, never adjacent (merged on free). */
    private long[] starts = new long[8];
    private long[] lengths = new long[8];
    private int count;
    private long inUse;

    public ChunkPool(long capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity " + capacity);
        }
        this.capacity = capacity - capacity % ALIGN;
        if (this.capacity > 0) {
            starts[0] = 0;
            lengths[0] = this.capacity;
            count = 1;
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
        for (int i = 0; i < count; i++) {
            if (lengths[i] >= need) {
                long off = starts[i];
                if (lengths[i] == need) {
                    remove(i);
                } else {
                    starts[i] += need;
                    lengths[i] -= need;
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
        // the first free range starting after offset; the one before it is below
        int above = upperBound(offset);
        int below = above - 1;
        if (below >= 0 && starts[below] + lengths[below] > offset) {
            throw new IllegalStateException("range at " + offset + " freed twice");
        }
        if (above < count && starts[above] < offset + len) {
            throw new IllegalStateException("range at " + offset + " freed twice");
        }
        inUse -= len;
        boolean joinBelow = below >= 0 && starts[below] + lengths[below] == offset;
        boolean joinAbove = above < count && starts[above] == offset + len;
        if (joinBelow && joinAbove) {
            lengths[below] += len + lengths[above];
            remove(above);
        } else if (joinBelow) {
            lengths[below] += len;
        } else if (joinAbove) {
            starts[above] = offset;
            lengths[above] += len;
        } else {
            insert(above, offset, len);
        }
    }

    /** Index of the first range starting after {@code offset} ({@code count} if none). */
    private int upperBound(long offset) {
        int lo = 0;
        int hi = count;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (starts[mid] <= offset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private void remove(int i) {
        System.arraycopy(starts, i + 1, starts, i, count - i - 1);
        System.arraycopy(lengths, i + 1, lengths, i, count - i - 1);
        count--;
    }

    private void insert(int i, long start, long length) {
        if (count == starts.length) {
            starts = Arrays.copyOf(starts, count * 2);
            lengths = Arrays.copyOf(lengths, count * 2);
        }
        System.arraycopy(starts, i, starts, i + 1, count - i);
        System.arraycopy(lengths, i, lengths, i + 1, count - i);
        starts[i] = start;
        lengths[i] = length;
        count++;
    }
}
