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

    /** True once {@link #close()} has started (and, for a retryable release, not failed). */
    public final boolean isClosed() {
        return closed.get();
    }

    /**
     * Releases the native object; later calls do nothing. If a {@link #retryable()} release
     * is refused (it throws), the object stays open and counted: its owner may try again
     * once the cause is gone, and must not free memory the object still pins.
     */
    @Override
    public final void close() {
        if (closed.compareAndSet(false, true)) {
            boolean released = false;
            try {
                release();
                released = true;
            } finally {
                if (released || !retryable()) {
                    LiveResources.closed(type);
                } else {
                    closed.set(false);
                }
            }
        }
    }

    /**
     * Whether a release that threw left the native object exactly as it was, so that
     * {@link #close()} may be called again (one native call, nothing freed before it).
     */
    boolean retryable() {
        return false;
    }

    /** Frees the native object; called once (again only after a {@link #retryable()} failure). */
    abstract void release();
}
