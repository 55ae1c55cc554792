package org.rpcrdma.transport.wire;

import org.rpcrdma.xdr.Xdr;

/**
 * A Read list (RFC 8166 §4.3.1): read segments, each a position plus an RDMA segment
 * (PHLOO). A <em>read chunk</em> is one or more read segments with the same position
 * (RFC 8166 §3.4.5); segments of one chunk are adjacent because positions never go
 * down, so chunks are runs of equal position. A chunk at position 0 (the
 * Position-Zero Read chunk) carries a whole RPC Call (RFC 8166 §3.5.3).
 *
 * <p>Wire shape, N read segments (HLOO = handle, length, offset; P = position):
 * {@code 1 - PHLOO - 1 - PHLOO - ... - 1 - PHLOO - 0}.
 *
 * <p>Preallocated and caller-owned; not thread-safe.
 */
public final class ReadList {
    private final SegmentList segments;
    private final int[] positions;
    /** First segment of each chunk; chunk c spans [chunkStart[c], chunkStart[c+1]). */
    private final int[] chunkStart;
    private int chunkCount;

    /** Creates an empty Read list that can hold {@code capacity} read segments. */
    public ReadList(int capacity) {
        segments = new SegmentList(capacity);
        positions = new int[capacity];
        chunkStart = new int[capacity];
    }

    /** Maximum number of read segments. */
    public int capacity() {
        return positions.length;
    }

    /** Removes all segments. */
    public void clear() {
        segments.clear();
        chunkCount = 0;
    }

    /** Whether the list is empty (encoded as a single 0). */
    public boolean isEmpty() {
        return segments.count() == 0;
    }

    /**
     * Appends a read segment. A segment at the previous segment's position extends that
     * chunk; a higher position starts a new chunk.
     *
     * @throws IllegalArgumentException if the position is not 4-byte aligned or lower
     *         than the previous one (RFC 8166 §3.4.5)
     * @throws IllegalStateException if the list is full
     */
    public ReadList add(int position, int handle, long length, long offset) {
        long pos = Integer.toUnsignedLong(position);
        if (!Xdr.isAligned(pos)) {
            throw new IllegalArgumentException("read position " + pos + " is not 4-byte aligned");
        }
        int n = segments.count();
        if (n > 0 && pos < Integer.toUnsignedLong(positions[n - 1])) {
            throw new IllegalArgumentException("read position " + pos + " below previous "
                    + Integer.toUnsignedLong(positions[n - 1]));
        }
        segments.add(handle, length, offset);
        record(n, position);
        return this;
    }

    /** Appends after the decoder has validated alignment, order and capacity. */
    void addUnchecked(int position, int handle, int length, long offset) {
        int n = segments.count();
        segments.addUnchecked(handle, length, offset);
        record(n, position);
    }

    private void record(int n, int position) {
        positions[n] = position;
        if (n == 0 || positions[n - 1] != position) {
            chunkStart[chunkCount++] = n;
        }
    }

    /** Number of read segments. */
    public int segmentCount() {
        return segments.count();
    }

    /** The segments (handles, lengths, offsets) in wire order. */
    public SegmentList segments() {
        return segments;
    }

    /** rdma_position of segment {@code i}, unsigned. */
    public long position(int i) {
        java.util.Objects.checkIndex(i, segments.count());
        return Integer.toUnsignedLong(positions[i]);
    }

    /** Number of read chunks (runs of equal position). */
    public int chunkCount() {
        return chunkCount;
    }

    /** Index of chunk {@code c}'s first segment. */
    public int chunkFirstSegment(int c) {
        java.util.Objects.checkIndex(c, chunkCount);
        return chunkStart[c];
    }

    /** Number of segments in chunk {@code c}. */
    public int chunkSegmentCount(int c) {
        java.util.Objects.checkIndex(c, chunkCount);
        int end = c + 1 < chunkCount ? chunkStart[c + 1] : segments.count();
        return end - chunkStart[c];
    }

    /** XDR stream position of chunk {@code c}, measured from the first byte of the RPC XID. */
    public long chunkPosition(int c) {
        return position(chunkFirstSegment(c));
    }

    /** Bytes carried by chunk {@code c}: the sum of its segment lengths. */
    public long chunkLength(int c) {
        return segments.totalLength(chunkFirstSegment(c), chunkSegmentCount(c));
    }

    /** Whether the first chunk is a Position-Zero Read chunk (RFC 8166 §3.5.3). */
    public boolean hasPositionZeroChunk() {
        return chunkCount > 0 && positions[0] == 0;
    }

    /** Copies another list into this one. */
    public void copyFrom(ReadList other) {
        segments.copyFrom(other.segments);
        System.arraycopy(other.positions, 0, positions, 0, other.segments.count());
        System.arraycopy(other.chunkStart, 0, chunkStart, 0, other.chunkCount);
        chunkCount = other.chunkCount;
    }

    boolean sameAs(ReadList o) {
        if (!segments.sameAs(o.segments)) {
            return false;
        }
        for (int i = 0; i < segments.count(); i++) {
            if (positions[i] != o.positions[i]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("ReadList[");
        for (int c = 0; c < chunkCount; c++) {
            if (c > 0) {
                sb.append(", ");
            }
            sb.append("pos ").append(chunkPosition(c)).append(": ").append(chunkSegmentCount(c))
                    .append(" seg, ").append(chunkLength(c)).append(" B");
        }
        return sb.append(']').toString();
    }
}
