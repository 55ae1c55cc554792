package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;

/**
 * An RPC message (call or reply, starting at its XID) as it sits in a registered receive
 * buffer. Valid until {@link #release()}; after that the buffer is reused by the next
 * receive. Release exactly once (close() does it); further calls do nothing.
 */
public final class ReceivedMessage implements AutoCloseable {
    private final MemorySegment bytes;
    private Runnable releaser;

    ReceivedMessage(MemorySegment bytes, Runnable releaser) {
        this.bytes = bytes;
        this.releaser = releaser;
    }

    /** The RPC message bytes; do not use after {@link #release()}. */
    public MemorySegment bytes() {
        if (releaser == null) {
            throw new IllegalStateException("message already released");
        }
        return bytes;
    }

    /** Copies the bytes to the heap (so they survive release). */
    public byte[] toByteArray() {
        return bytes().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }

    public synchronized void release() {
        Runnable r = releaser;
        releaser = null;
        if (r != null) {
            r.run();
        }
    }

    @Override
    public void close() {
        release();
    }
}
