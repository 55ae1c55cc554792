package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The registered-buffer allocator of one endpoint, for zero-copy users (RFC 8166 §3.4:
 * chunks exist to move large data without copies). It hands out {@link RegisteredBuffer}s
 * and recognises their memory when a call names it: the endpoint's connections then bind
 * the call's memory windows directly over the caller's bytes instead of copying them
 * through chunk memory ({@link RpcRdmaStats#zeroCopyExposures()} counts such chunks).
 *
 * <p>Other caller memory goes through the endpoint's {@link RegistrationCache} ({@link #cache()}):
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
    /** Live buffers by base address (disjoint ranges, so a floor lookup finds the only candidate). */
    private final ConcurrentSkipListMap<Long, RegisteredBuffer> byAddress = new ConcurrentSkipListMap<>();
    private final LongAdder allocated = new LongAdder();
    private final LongAdder freed = new LongAdder();
    private final RegistrationCache cache;

    /** @param cacheBytes the limit of the registration cache for other caller memory (0: none) */
    RegisteredBuffers(long cacheBytes) {
        this.cache = new RegistrationCache(cacheBytes);
    }

    /**
     * Allocates {@code bytes} of native memory (page-aligned, zeroed) for zero-copy chunks.
     * Close it when done.
     */
    public RegisteredBuffer allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("registered buffer of " + bytes + " bytes");
        }
        RegisteredBuffer b = new RegisteredBuffer(this::freed, bytes);
        byAddress.put(b.segment().address(), b);
        allocated.increment();
        return b;
    }

    /** The buffer {@code m} lies in (a slice of its segment), or null for other memory. */
    RegisteredBuffer find(MemorySegment m) {
        if (!m.isNative() || byAddress.isEmpty()) {
            return null;
        }
        Map.Entry<Long, RegisteredBuffer> e = byAddress.floorEntry(m.address());
        return e != null && e.getValue().contains(m) ? e.getValue() : null;
    }

    /**
     * The registered memory a call exposes {@code m} in, with a use taken (given back by the
     * chunk's release): the allocator's buffer {@code m} lies in, else the cache's entry for
     * it (made now on a miss); null if {@code m} is copied.
     *
     * @throws IllegalStateException if {@code m} lies in a registered buffer that was closed
     */
    RegisteredBuffer use(MemorySegment m, StatsCounters stats) {
        RegisteredBuffer r = find(m);
        if (r != null) {
            r.use();
            return r;
        }
        return cache.acquire(m, stats);
    }

    /** The registration cache for caller memory that is not from {@link #allocate}. */
    public RegistrationCache cache() {
        return cache;
    }

    void freed(RegisteredBuffer b) {
        if (byAddress.remove(b.segment().address(), b)) {
            freed.increment();
        }
    }

    /** Buffers allocated and not yet freed (a closed one still exposed by a call counts). */
    public int live() {
        return byAddress.size();
    }

    /** Buffers allocated so far. */
    public long allocated() {
        return allocated.sum();
    }

    /** Buffers whose memory was freed (each exactly once). */
    public long freed() {
        return freed.sum();
    }

    /** Buffers not yet freed, for the endpoint's connections to register. */
    List<RegisteredBuffer> liveBuffers() {
        return List.copyOf(byAddress.values());
    }

    /** Closes every buffer still open and drops the cache's entries (the endpoint is closing). */
    @Override
    public void close() {
        cache.close();
        for (RegisteredBuffer b : byAddress.values()) {
            b.close();
        }
    }
}
