package org.rpcrdma.transport.wire;

/**
 * A preallocated array of RDMA segments (HLOO: handle u32, length u32, offset u64;
 * RFC 8166 §3.4.3), stored as parallel primitive arrays so that decoding into it
 * allocates nothing. Lengths are unsigned 32-bit values held in an {@code int};
 * {@link #length(int)} returns them widened.
 *
 * <p>Caller-owned and reusable; not thread-safe.
 */
public final class SegmentList {
    private final int[] handles;
    private final int[] lengths;
    private final long[] offsets;
    private int count;

    /** Creates an empty list that can hold up to {@code capacity} segments. */
    public SegmentList(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity " + capacity);
        }
        handles = new int[capacity];
        lengths = new int[capacity];
        offsets = new long[capacity];
    }

    /** Maximum number of segments. */
    public int capacity() {
        return handles.length;
    }

    /** Number of segments. */
    public int count() {
        return count;
    }

    /** Removes all segments. */
    public void clear() {
        count = 0;
    }

    /**
     * Appends a segment.
     *
     * @param length unsigned 32-bit byte count (0 .. 2^32-1)
     * @throws IllegalStateException if the list is full
     */
    public SegmentList add(int handle, long length, long offset) {
        if (count == handles.length) {
            throw new IllegalStateException("segment list full (" + count + ")");
        }
        checkLength(length);
        handles[count] = handle;
        lengths[count] = (int) length;
        offsets[count] = offset;
        count++;
        return this;
    }

    /** Appends without checks; the decoder has already checked capacity. */
    void addUnchecked(int handle, int length, long offset) {
        handles[count] = handle;
        lengths[count] = length;
        offsets[count] = offset;
        count++;
    }

    /** rdma_handle (the rkey / STag) of segment {@code i}. */
    public int handle(int i) {
        checkIndex(i);
        return handles[i];
    }

    /** rdma_length of segment {@code i}, unsigned. */
    public long length(int i) {
        checkIndex(i);
        return Integer.toUnsignedLong(lengths[i]);
    }

    /** rdma_offset of segment {@code i}. */
    public long offset(int i) {
        checkIndex(i);
        return offsets[i];
    }

    /** Replaces the length of segment {@code i} (a responder reporting bytes written). */
    public void setLength(int i, long length) {
        checkIndex(i);
        checkLength(length);
        lengths[i] = (int) length;
    }

    /** Sum of the lengths of segments {@code [from, from + n)}. */
    public long totalLength(int from, int n) {
        java.util.Objects.checkFromIndexSize(from, n, count);
        long sum = 0;
        for (int i = from; i < from + n; i++) {
            sum += Integer.toUnsignedLong(lengths[i]);
        }
        return sum;
    }

    /** Sum of all segment lengths. */
    public long totalLength() {
        return totalLength(0, count);
    }

    /** Copies another list's segments into this one (which must be large enough). */
    public void copyFrom(SegmentList other) {
        if (other.count > capacity()) {
            throw new IllegalStateException("need " + other.count + " segments, capacity " + capacity());
        }
        System.arraycopy(other.handles, 0, handles, 0, other.count);
        System.arraycopy(other.lengths, 0, lengths, 0, other.count);
        System.arraycopy(other.offsets, 0, offsets, 0, other.count);
        count = other.count;
    }

    int rawLength(int i) {
        return lengths[i];
    }

    private void checkIndex(int i) {
        java.util.Objects.checkIndex(i, count);
    }

    private static void checkLength(long length) {
        if (length < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("segment length " + length + " is not a u32");
        }
    }

    /** Equal contents (handles, lengths, offsets, count). */
    boolean sameAs(SegmentList o) {
        if (count != o.count) {
            return false;
        }
        for (int i = 0; i < count; i++) {
            if (handles[i] != o.handles[i] || lengths[i] != o.lengths[i] || offsets[i] != o.offsets[i]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(String.format("%d@0x%x:0x%08x", Integer.toUnsignedLong(lengths[i]), offsets[i], handles[i]));
        }
        return sb.append(']').toString();
    }
}
