package org.rpcrdma.transport.verbs;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What every verbs object shares: one owner, idempotent close, IllegalStateException on use
 * after close, and a live count in {@link LiveResources}. Subclasses are final.
 */
abstract sealed class Resource implements AutoCloseable
        permits Device, ProtectionDomain, MemoryRegion, MemoryWindow, CompletionChannel, CompletionQueue,
        QueuePair, SharedReceiveQueue, EventChannel, CmId, WorkCompletions {
    private final AtomicBoolean closed = new AtomicBoolean();
    private final String type = getClass().getSimpleName();

    /** Called by the constructor once the native object exists. */
    final void opened() {
        LiveResources.opened(type);
    }

    /** @throws IllegalStateException if closed */
    final void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(type + " is closed");
        }
    }

    /** True once {@link #close()} has started. */
    public final boolean isClosed() {
        return closed.get();
    }

    /** Releases the native object; later calls do nothing. */
    @Override
    public final void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                release();
            } finally {
                LiveResources.closed(type);
            }
        }
    }

    /** Frees the native object; called exactly once. */
    abstract void release();
}
