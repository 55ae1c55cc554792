package org.rpcrdma.transport.chunk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.rpcrdma.transport.rpc.StatsCounters;

/**
 * The registration cache of one endpoint for ordinary caller memory (RFC 8166 §3.4: chunks
 * exist to move data without copies): a long call, DDP argument or receptacle
 * in a native segment of the caller's own arena is exposed in place, under the call's own
 * memory window, instead of being copied through chunk memory. Each entry is the pages of
 * such memory as a {@link RegisteredMemory}, so connections register it in their PD at
 * first use (ibv_reg_mr with LOCAL_WRITE | MW_BIND, no remote right), re-register it after
 * a reconnect and deregister it exactly as they do the allocator's buffers.
 *
 * <p><b>Key.</b> An entry is found by the segment's scope ({@code segment.scope()}, compared
 * by identity) and the page-rounded range it was made for, looked up by its first page: a
 * segment of another arena at the same address (memory freed and allocated again) never
 * meets an old entry, so the peer can never reach pages that a registration pinned before
 * the memory was reused. The scope is held WEAKLY: an {@code Arena.ofAuto()} segment stays
 * collectable (a call in flight holds its segment, so it is never freed under a call).
 *
 * <p><b>Memory the caller frees.</b> Closing an arena (or the GC freeing an automatic one)
 * does not deregister its entries at once: their pages stay pinned until the entry is
 * dropped, at the next lookup that meets it or the sweep that runs on every miss (and the
 * reference queue of collected scopes), or when the connection or endpoint closes; the
 * bound on pinned bytes holds meanwhile. Such an entry is never served again. Closing the
 * arena WHILE a call exposes its memory is the caller's error, as freeing an O_DIRECT
 * buffer during its I/O is: the registration keeps the pages pinned (the device never
 * touches pages given back to the system), but the process's allocator may hand the same
 * pages out again before the call ends, and the peer may read or write them until the
 * call's window is invalidated. The transport detects it when the call completes and fails
 * the call with {@link IllegalStateException} (the result is lost; an argument may have
 * reached the peer with other bytes).
 *
 * <p><b>Copied, not cached:</b> heap segments (the GC moves them: they cannot be
 * registered); read-only segments (a registration asks for LOCAL_WRITE); global-scope segments ({@code Arena.global()},
 * {@code MemorySegment.ofAddress(..).reinterpret(..)}, memory a native library returned),
 * whose lifetime we cannot observe: the same global scope covers memory someone may free
 * and reuse at the same address, where a cache would serve a stale registration; segments
 * smaller than {@link #MIN_BYTES} (a copy costs less than the lookup and the window of
 * registered memory it saves); and everything when the limit is 0.
 *
 * <p><b>Bound.</b> At most {@code limit} bytes of pages are kept in entries that a lookup
 * can find; a miss that would exceed it evicts the least recently used entries no call is
 * using (an entry in use is never deregistered under a call: its release waits for the
 * call's end), and copies if that does not make room. {@link #pinnedBytes()} counts every
 * entry not yet deregistered everywhere (evicted ones a call still uses included).
 * Thread-safe: one lock, never held while registering or deregistering.
 */
public final class RegistrationCache implements AutoCloseable {
    /**
     * Smaller caller memory is copied: on the host a hit saved nothing measurable up to
     * 16 KiB (a 16 KiB DDP WRITE 2.13 µs copied, 2.15 µs in place; 64 KiB 3.77 against
     * 2.93), and a miss (ibv_reg_mr) costs far more (RegistrationCacheBenchmark; README). The
     * system property {@code org.rpcrdma.registrationCacheMinBytes} overrides it, for
     * measuring the crossover.
     */
    public static final long MIN_BYTES = Long.getLong("org.rpcrdma.registrationCacheMinBytes", 16 * 1024);
    private static final long PAGE = 4096;
    private static final MemorySegment.Scope GLOBAL = Arena.global().scope();

    /** One cached registration: the scope it belongs to (weakly) and its pages. */
    private static final class Entry extends WeakReference<MemorySegment.Scope> {
        final long start;
        final long end;
        final RegisteredMemory pages;
        long lastUse;
        /** In the index (a lookup can find it); cleared, under the cache's lock, when it is dropped. */
        boolean indexed;

        Entry(MemorySegment.Scope scope, ReferenceQueue<MemorySegment.Scope> q, long start, long end,
                RegisteredMemory pages) {
            super(scope, q);
            this.start = start;
            this.end = end;
            this.pages = pages;
        }

        boolean dead() {
            MemorySegment.Scope s = get();
            return s == null || !s.isAlive();
        }
    }

    private final long limit;
    private final ReferenceQueue<MemorySegment.Scope> collected = new ReferenceQueue<>();
    /** Entries by first page (ascending; several may share one); guarded by this. */
    private Entry[] index = new Entry[16];
    private int count;
    private long indexedBytes;
    private long tick;
    private boolean closed;
    private final AtomicLong pinned = new AtomicLong();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder evictions = new LongAdder();

    /** @param limit bytes of pages kept registered at most (0: no cache) */
    public RegistrationCache(long limit) {
        this.limit = limit;
    }

    /** Whether {@code m} can be cached at all (native, an observable lifetime, large enough). */
    boolean cacheable(MemorySegment m) {
        return limit > 0 && m.isNative() && !m.isReadOnly() && m.byteSize() >= MIN_BYTES && m.scope() != GLOBAL
                && pageEnd(m) - pageStart(m) <= limit;
    }

    /**
     * The entry for {@code m} with a use taken (the caller exposes it, and its chunk's
     * release gives the use back), made now on a miss; null if {@code m} is not cached (the
     * caller copies it). Hits, misses and evictions are counted in {@code stats} (if not null).
     */
    public RegisteredMemory acquire(MemorySegment m, StatsCounters stats) {
        if (!cacheable(m)) {
            return null;
        }
        MemorySegment.Scope scope = m.scope();
        if (!scope.isAlive()) {
            return null; // a closed arena: the copy fails with the usual error
        }
        long start = pageStart(m);
        long end = pageEnd(m);
        List<Entry> drop = null;
        RegisteredMemory found = null;
        boolean hit = false;
        int evicted = 0;
        synchronized (this) {
            if (closed) {
                return null;
            }
            drop = sweepCollected(drop);
            int i = first(start);
            while (i < count && index[i].start == start) {
                Entry e = index[i];
                if (e.dead()) {
                    drop = drop(drop, e); // found dead: dropped, never served (the index shifted left)
                } else if (e.get() == scope && e.end >= end) {
                    e.pages.use(); // not closed: closed entries leave the index first
                    e.lastUse = ++tick;
                    found = e.pages;
                    hit = true;
                    break;
                } else {
                    i++;
                }
            }
            if (found == null) {
                drop = sweepDead(drop); // a miss pays a registration anyway: drop what died
                int before = drop == null ? 0 : drop.size();
                drop = makeRoom(end - start, drop);
                evicted = (drop == null ? 0 : drop.size()) - before;
                if (indexedBytes + (end - start) <= limit) {
                    RegisteredMemory pages = new RegisteredMemory(this::freed,
                            MemorySegment.ofAddress(start).reinterpret(end - start));
                    pages.use();
                    Entry e = new Entry(scope, collected, start, end, pages);
                    e.lastUse = ++tick;
                    insert(e);
                    pinned.addAndGet(end - start);
                    found = pages;
                }
            }
        }
        close(drop); // ORDER: outside the lock (a deregistration takes the link's gate)
        count(stats, found, hit, evicted);
        return found;
    }

    private void count(StatsCounters stats, RegisteredMemory found, boolean hit, int evicted) {
        evictions.add(evicted);
        if (stats != null) {
            stats.registrationCacheEvictions.add(evicted);
        }
        if (found == null) {
            return;
        }
        (hit ? hits : misses).increment();
        if (stats != null) {
            (hit ? stats.registrationCacheHits : stats.registrationCacheMisses).increment();
        }
    }

    private static long pageStart(MemorySegment m) {
        return m.address() & -PAGE;
    }

    private static long pageEnd(MemorySegment m) {
        return (m.address() + m.byteSize() + PAGE - 1) & -PAGE;
    }

    /** Entries whose scope the GC collected (an automatic arena's memory is gone). */
    private List<Entry> sweepCollected(List<Entry> drop) {
        for (var r = collected.poll(); r != null; r = collected.poll()) {
            Entry e = (Entry) r;
            if (e.indexed) {
                drop = drop(drop, e);
            }
        }
        return drop;
    }

    /** Entries whose arena was closed. */
    private List<Entry> sweepDead(List<Entry> drop) {
        int i = 0;
        while (i < count) {
            if (index[i].dead()) {
                drop = drop(drop, index[i]);
            } else {
                i++;
            }
        }
        return drop;
    }

    /** Drops least recently used entries no call uses until {@code bytes} more fit the limit. */
    private List<Entry> makeRoom(long bytes, List<Entry> drop) {
        while (indexedBytes + bytes > limit) {
            Entry lru = null;
            for (int i = 0; i < count; i++) {
                Entry e = index[i];
                if ((lru == null || e.lastUse < lru.lastUse) && !e.pages.inUse()) {
                    lru = e;
                }
            }
            if (lru == null) {
                break; // everything left is in use: the caller copies
            }
            drop = drop(drop, lru);
        }
        return drop;
    }

    /** Takes {@code e} off the index (no lookup finds it again) and into {@code drop}, to close outside the lock. */
    private List<Entry> drop(List<Entry> drop, Entry e) {
        unindex(e);
        List<Entry> d = drop == null ? new ArrayList<>(2) : drop;
        d.add(e);
        return d;
    }

    /** The first index position whose entry starts at or after {@code start}. */
    private int first(long start) {
        int lo = 0;
        int hi = count;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (index[mid].start < start) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private void insert(Entry e) {
        if (count == index.length) {
            index = Arrays.copyOf(index, count * 2);
        }
        int i = first(e.start);
        System.arraycopy(index, i, index, i + 1, count - i);
        index[i] = e;
        count++;
        indexedBytes += e.end - e.start;
        e.indexed = true;
    }

    private void unindex(Entry e) {
        if (!e.indexed) {
            return;
        }
        for (int i = first(e.start); i < count && index[i].start == e.start; i++) {
            if (index[i] == e) {
                System.arraycopy(index, i + 1, index, i, count - i - 1);
                index[--count] = null;
                indexedBytes -= e.end - e.start;
                e.indexed = false;
                return;
            }
        }
    }

    /** Deregisters dropped entries (each connection's registration; a use defers it). Outside the lock. */
    private static void close(List<Entry> drop) {
        if (drop != null) {
            for (Entry e : drop) {
                e.pages.close();
            }
        }
    }

    /** An entry is registered nowhere any more: its pages are no longer pinned. */
    private void freed(RegisteredMemory b) {
        pinned.addAndGet(-b.byteSize());
    }

    /** Bytes of caller memory registered now (every entry not yet deregistered everywhere). */
    public long pinnedBytes() {
        return pinned.get();
    }

    /** Entries a lookup can find now. */
    public synchronized int entries() {
        return count;
    }

    public long hits() {
        return hits.sum();
    }

    public long misses() {
        return misses.sum();
    }

    /** Entries evicted to keep within the limit (dead ones dropped are not counted). */
    public long evictions() {
        return evictions.sum();
    }

    /** The limit on cached pages (0: off). */
    public long limit() {
        return limit;
    }

    /** Drops every entry (the endpoint is closing); entries a call still uses go when it ends. */
    @Override
    public void close() {
        List<Entry> drop = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (int i = 0; i < count; i++) {
                drop.add(index[i]);
                index[i].indexed = false;
                index[i] = null;
            }
            count = 0;
            indexedBytes = 0;
        }
        close(drop);
    }
}
