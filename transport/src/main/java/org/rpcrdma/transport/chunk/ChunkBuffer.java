package org.rpcrdma.transport.chunk;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.link.Link;

/**
 * Memory a {@link Link} can use as the local side of an RDMA Read or Write, or expose to
 * the peer as a chunk (≈ the registered pages behind a Linux {@code rpcrdma_mr}): a slice
 * of the link's registered chunk memory, or, when that is exhausted, memory registered
 * for this buffer alone; or the caller's own memory, registered for zero copy
 * ({@link #callerMemory()}: nothing is copied into or out of it). Released exactly once by
 * its user; a second release does nothing.
 */
public final class ChunkBuffer {
    private final MemorySegment segment;
    private final int lkey;
    /** The owner's handle for it (a pool offset, or a registration), given back on release. */
    private final Object handle;
    private final boolean callerMemory;
    private Releaser releaser;

    /** How a buffer goes back to where it came from. */
    @FunctionalInterface
    public interface Releaser {
        void release(ChunkBuffer b);
    }

    public ChunkBuffer(MemorySegment segment, int lkey, Object handle, Releaser releaser) {
        this(segment, lkey, handle, false, releaser);
    }

    /** @param callerMemory the caller's registered memory, used in place (see {@link #callerMemory()}) */
    public ChunkBuffer(MemorySegment segment, int lkey, Object handle, boolean callerMemory, Releaser releaser) {
        this.segment = segment;
        this.lkey = lkey;
        this.handle = handle;
        this.callerMemory = callerMemory;
        this.releaser = releaser;
    }

    /**
     * Whether this is the caller's own memory (from a registered-buffer allocator), exposed
     * in place: the bytes are already there, and what the peer places lands there.
     */
    public boolean callerMemory() {
        return callerMemory;
    }

    /** The memory; do not use after {@link #release()}. */
    public MemorySegment segment() {
        return segment;
    }

    /** The local key the link's work requests use for it. */
    public int lkey() {
        return lkey;
    }

    public Object handle() {
        return handle;
    }

    public long byteSize() {
        return segment.byteSize();
    }

    /** Gives the memory back; idempotent. */
    public void release() {
        Releaser r;
        synchronized (this) {
            r = releaser;
            releaser = null;
        }
        if (r != null) {
            r.release(this);
        }
    }
}
