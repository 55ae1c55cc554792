package org.rpcrdma.transport.wire;

/**
 * A Write list (RFC 8166 §4.3.2): a list of Write chunks, each a counted array of RDMA
 * segments. Segments of all chunks live in one flat {@link SegmentList}.
 *
 * <p>Wire shape (HLOO = handle, length, offset; N = segment count of the chunk):
 * {@code 1 - N - HLOO - ... - HLOO - 1 - N - HLOO ... - 0}.
 *
 * <p>In a Reply the responder returns each Write chunk with its segment count
 * unchanged and each segment's length set to the bytes it wrote there; unused segments
 * and unused chunks have length 0 (RFC 8166 §4.3.2). {@link #fillChunk} computes that.
 *
 * <p>Preallocated and caller-owned; not thread-safe.
 */
public final class WriteList {
    private final SegmentList segments;
    private final int[] chunkStart;
    private int chunkCount;

    /**
     * Creates an empty Write list.
     *
     * @param maxChunks   most Write chunks it can hold
     * @param maxSegments most segments over all chunks
     */
    public WriteList(int maxChunks, int maxSegments) {
        segments = new SegmentList(maxSegments);
        chunkStart = new int[maxChunks];
    }

    /** Maximum number of chunks. */
    public int chunkCapacity() {
        return chunkStart.length;
    }

    /** Maximum number of segments over all chunks. */
    public int segmentCapacity() {
        return segments.capacity();
    }

    /** Removes all chunks. */
    public void clear() {
        segments.clear();
        chunkCount = 0;
    }

    /** Whether the list is empty (encoded as a single 0). */
    public boolean isEmpty() {
        return chunkCount == 0;
    }

    /**
     * Starts a new, empty Write chunk; follow with {@link #addSegment}.
     *
     * @return the new chunk's index
     */
    public int beginChunk() {
        if (chunkCount == chunkStart.length) {
            throw new IllegalStateException("write list full (" + chunkCount + " chunks)");
        }
        chunkStart[chunkCount] = segments.count();
        return chunkCount++;
    }

    /** Appends a segment to the last chunk. */
    public WriteList addSegment(int handle, long length, long offset) {
        if (chunkCount == 0) {
            throw new IllegalStateException("beginChunk() first");
        }
        segments.add(handle, length, offset);
        return this;
    }

    void beginChunkUnchecked() {
        chunkStart[chunkCount++] = segments.count();
    }

    void addSegmentUnchecked(int handle, int length, long offset) {
        segments.addUnchecked(handle, length, offset);
    }

    /** Number of Write chunks. */
    public int chunkCount() {
        return chunkCount;
    }

    /** All segments, chunk after chunk. */
    public SegmentList segments() {
        return segments;
    }

    /** Index in {@link #segments()} of chunk {@code c}'s first segment. */
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

    /** Sum of chunk {@code c}'s segment lengths. */
    public long chunkLength(int c) {
        return segments.totalLength(chunkFirstSegment(c), chunkSegmentCount(c));
    }

    /** rdma_handle of segment {@code j} of chunk {@code c}. */
    public int handle(int c, int j) {
        return segments.handle(segmentIndex(c, j));
    }

    /** rdma_length of segment {@code j} of chunk {@code c}. */
    public long length(int c, int j) {
        return segments.length(segmentIndex(c, j));
    }

    /** rdma_offset of segment {@code j} of chunk {@code c}. */
    public long offset(int c, int j) {
        return segments.offset(segmentIndex(c, j));
    }

    private int segmentIndex(int c, int j) {
        java.util.Objects.checkIndex(j, chunkSegmentCount(c));
        return chunkStart[c] + j;
    }

    /**
     * Rewrites chunk {@code c}'s segment lengths to describe {@code bytesWritten} bytes
     * written into it from the start: segments fill in order, the segment count stays,
     * and segments past the data get length 0 (RFC 8166 §4.3.2). {@code bytesWritten}
     * is the data item's length without XDR roundup: a responder never writes pad into
     * a Write chunk (RFC 8166 §3.4.6).
     *
     * @throws IllegalArgumentException if the chunk can't hold {@code bytesWritten}
     */
    public void fillChunk(int c, long bytesWritten) {
        long capacity = chunkLength(c);
        if (bytesWritten < 0 || bytesWritten > capacity) {
            throw new IllegalArgumentException("write chunk " + c + " holds " + capacity
                    + " bytes, asked to report " + bytesWritten);
        }
        int first = chunkFirstSegment(c);
        int n = chunkSegmentCount(c);
        long left = bytesWritten;
        for (int i = first; i < first + n; i++) {
            long used = Math.min(left, segments.length(i));
            segments.setLength(i, used);
            left -= used;
        }
    }

    /** Copies another list into this one. */
    public void copyFrom(WriteList other) {
        if (other.chunkCount > chunkCapacity()) {
            throw new IllegalStateException("need " + other.chunkCount + " chunks, capacity " + chunkCapacity());
        }
        segments.copyFrom(other.segments);
        System.arraycopy(other.chunkStart, 0, chunkStart, 0, other.chunkCount);
        chunkCount = other.chunkCount;
    }

    boolean sameAs(WriteList o) {
        if (chunkCount != o.chunkCount || !segments.sameAs(o.segments)) {
            return false;
        }
        for (int c = 0; c < chunkCount; c++) {
            if (chunkStart[c] != o.chunkStart[c]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("WriteList[");
        for (int c = 0; c < chunkCount; c++) {
            if (c > 0) {
                sb.append(", ");
            }
            sb.append(chunkSegmentCount(c)).append(" seg, ").append(chunkLength(c)).append(" B");
        }
        return sb.append(']').toString();
    }
}
