package org.rpcrdma.transport;

import org.rpcrdma.transport.chunk.CallerBuffers;
import org.rpcrdma.transport.chunk.RegistrationCache;

/**
 * The registered-buffer allocator of one endpoint, for zero-copy users (RFC 8166 §3.4:
 * chunks exist to move large data without copies). It hands out {@link RegisteredBuffer}s
 * and recognises their memory when a call names it: the endpoint's connections then bind
 * the call's memory windows directly over the caller's bytes instead of copying them
 * through chunk memory ({@link RpcRdmaStats#zeroCopyExposures()} counts such chunks).
 *
 * <p>Other caller memory goes through the endpoint's registration cache:
 * native memory of an arena with an observable lifetime is registered on first use and
 * kept, looked up by scope and address range (never by address alone: freed memory reused
 * at the same address would meet a stale registration, whose pinned pages the caller no
 * longer has), within {@link RpcRdmaOptions#registrationCacheBytes()}; heap segments (the
 * GC moves them, they cannot be registered), global-scope memory (no lifetime to observe),
 * small segments, and everything when that limit is 0 are copied through chunk memory.
 * The allocator remains the way to zero copy with an explicit lifetime: its buffers are
 * never evicted, and closing one while a call exposes it is safe (the release waits).
 */
public final class RegisteredBuffers implements AutoCloseable {
    private final CallerBuffers buffers;

    /** @param cacheBytes the limit of the registration cache for other caller memory (0: none) */
    RegisteredBuffers(long cacheBytes) {
        this.buffers = new CallerBuffers(cacheBytes);
    }

    /**
     * Allocates {@code bytes} of native memory (page-aligned, zeroed) for zero-copy chunks.
     * Close it when done.
     */
    public RegisteredBuffer allocate(long bytes) {
        return new RegisteredBuffer(buffers.allocate(bytes));
    }

    /** What the endpoint's connections register and look calls' memory up in. */
    CallerBuffers buffers() {
        return buffers;
    }

    /** The registration cache for caller memory that is not from {@link #allocate}. */
    RegistrationCache cache() {
        return buffers.cache();
    }

    /** Buffers allocated and not yet freed (a closed one still exposed by a call counts). */
    public int live() {
        return buffers.live();
    }

    /** Buffers allocated so far. */
    public long allocated() {
        return buffers.allocated();
    }

    /** Buffers whose memory was freed (each exactly once). */
    public long freed() {
        return buffers.freed();
    }

    /** Closes every buffer still open and drops the cache's entries (the endpoint is closing). */
    @Override
    public void close() {
        buffers.close();
    }
}
