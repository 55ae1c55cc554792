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
 * through chunk memory ({@link RpcRdmaStats#zeroCopyExposures} counts such chunks).
 *
 * <p>Ordinary caller memory is copied, not registered: this transport keeps no
 * registration cache for it. A cache keyed by address serves a stale registration when
 * freed memory is reused at the same address (ibv_reg_mr pinned the old pages: the peer
 * would read or write pages the caller no longer has), and detecting frees needs the
 * segment's scope kept alive (for {@code Arena.ofAuto()} memory that keeps the memory
 * itself alive: a leak) or polled; heap segments cannot be registered at all (the GC moves
 * them). Callers who want zero copy allocate here and own the lifetime explicitly.
 */
public final class RegisteredBuffers implements AutoCloseable {
    /** Live buffers by base address (disjoint ranges, so a floor lookup finds the only candidate). */
    private final ConcurrentSkipListMap<Long, RegisteredBuffer> byAddress = new ConcurrentSkipListMap<>();
    private final LongAdder allocated = new LongAdder();
    private final LongAdder freed = new LongAdder();

    RegisteredBuffers() {
    }

    /**
     * Allocates {@code bytes} of native memory (page-aligned, zeroed) for zero-copy chunks.
     * Close it when done.
     */
    public RegisteredBuffer allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("registered buffer of " + bytes + " bytes");
        }
        RegisteredBuffer b = new RegisteredBuffer(this, bytes);
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

    /** Closes every buffer still open (the endpoint is closing). */
    @Override
    public void close() {
        for (RegisteredBuffer b : byAddress.values()) {
            b.close();
        }
    }
}
