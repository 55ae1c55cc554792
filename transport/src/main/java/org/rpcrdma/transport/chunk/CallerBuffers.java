package org.rpcrdma.transport.chunk;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;
import org.rpcrdma.transport.rpc.StatsCounters;

/**
 * The registered memory of one endpoint's callers (RFC 8166 §3.4: chunks exist to move large
 * data without copies), behind its {@link org.rpcrdma.transport.RegisteredBuffers}: the
 * buffers it allocated, found by address when a call names their memory, and the
 * {@link RegistrationCache} for other caller memory. The endpoint's connections bind a
 * call's memory windows directly over what either returns instead of copying it through
 * chunk memory.
 */
public final class CallerBuffers implements AutoCloseable {
    /** Live buffers by base address (disjoint ranges, so a floor lookup finds the only candidate). */
    private final ConcurrentSkipListMap<Long, RegisteredMemory> byAddress = new ConcurrentSkipListMap<>();
    private final LongAdder allocated = new LongAdder();
    private final LongAdder freed = new LongAdder();
    private final RegistrationCache cache;

    /** @param cacheBytes the limit of the registration cache for other caller memory (0: none) */
    public CallerBuffers(long cacheBytes) {
        this.cache = new RegistrationCache(cacheBytes);
    }

    /**
     * Allocates {@code bytes} of native memory (page-aligned, zeroed) for zero-copy chunks.
     * Close it when done.
     */
    public RegisteredMemory allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("registered buffer of " + bytes + " bytes");
        }
        RegisteredMemory b = new RegisteredMemory(this::freed, bytes);
        byAddress.put(b.segment().address(), b);
        allocated.increment();
        return b;
    }

    /** The buffer {@code m} lies in (a slice of its segment), or null for other memory. */
    public RegisteredMemory find(MemorySegment m) {
        if (!m.isNative() || byAddress.isEmpty()) {
            return null;
        }
        Map.Entry<Long, RegisteredMemory> e = byAddress.floorEntry(m.address());
        return e != null && e.getValue().contains(m) ? e.getValue() : null;
    }

    /**
     * The registered memory a call exposes {@code m} in, with a use taken (given back by the
     * chunk's release): the allocator's buffer {@code m} lies in, else the cache's entry for
     * it (made now on a miss); null if {@code m} is copied.
     *
     * @throws IllegalStateException if {@code m} lies in a registered buffer that was closed
     */
    public RegisteredMemory use(MemorySegment m, StatsCounters stats) {
        RegisteredMemory r = find(m);
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

    public void freed(RegisteredMemory b) {
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
    public List<RegisteredMemory> liveBuffers() {
        return List.copyOf(byAddress.values());
    }

    /** Closes every buffer still open and drops the cache's entries (the endpoint is closing). */
    @Override
    public void close() {
        cache.close();
        for (RegisteredMemory b : byAddress.values()) {
            b.close();
        }
    }
}
