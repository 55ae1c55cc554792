package org.rpcrdma.transport.chunk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;
import org.rpcrdma.transport.ChunksUnavailableException;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.link.VerbsLink;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.verbs.Access;
import org.rpcrdma.transport.verbs.MemoryRegion;
import org.rpcrdma.transport.verbs.ProtectionDomain;

/**
 * The chunk memory of one {@link VerbsLink} (≈ Linux's {@code rpcrdma_regbuf}s and FRWR
 * MRs of one connection): a pool registered once for RDMA Read targets and RDMA Write
 * sources (LOCAL_WRITE, and MW_BIND when windows are used: its own rkey is never shown to
 * the peer), buffers registered for themselves when the pool is full, and the exposure of
 * such memory to the peer under an rkey of one RPC ({@link #expose}): a type-2 memory
 * window bound over it ({@link WindowPool}), or, when the device has none or none is free,
 * a registration of its own (ibv_reg_mr; the fallback behind the same interface).
 * {@link #withdraw} takes the rkeys back before anything reads or reuses the memory
 * (RFC 8166 §4.4): LOCAL_INV for windows (asynchronous), ibv_dereg_mr for registrations
 * (synchronous). Whatever is still registered when the link goes is closed by
 * {@link #closeAll}, after the QP, windows before the memory they were bound to.
 *
 * <p>The caller's {@link RegisteredMemory}s, and the entries of the endpoint's
 * {@link RegistrationCache} (the pages of other caller memory), are registered here once
 * each, in this link's PD ({@link #callerChunk}), and exposed in place; the registration
 * stays until the buffer is closed or the entry dropped ({@link #forget}) or the link goes
 * ({@link #closeAll}).
 *
 * <p>Not guarded itself: {@link VerbsLink} calls it under the read side of its gate (and
 * {@link #closeAll} under the write side), so nothing here runs on freed verbs objects.
 */
public final class ChunkMemory implements RegisteredMemory.Holder {
    /** Runs a release under the link's gate, or leaves it to {@link #closeAll} if the link is going. */
    public interface Guard {
        void run(Runnable r);
    }

    private final ProtectionDomain pd;
    private final MemoryRegion poolMr;
    private final ChunkPool pool;
    private final Guard guard;
    private final ConcurrentHashMap<MemoryRegion, Arena> own = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Integer, MemoryRegion> exposed = new ConcurrentHashMap<>();
    /** The endpoint's registered-buffer allocator, or null. */
    private final CallerBuffers callerBuffers;
    /** Its buffers registered in our PD (once each). */
    private final ConcurrentHashMap<RegisteredMemory, MemoryRegion> callerRegistrations = new ConcurrentHashMap<>();
    /** Windows for exposures, or null: a registration per RPC. */
    private final WindowPool windows;
    private final int ownAccess;
    private volatile StatsCounters stats;
    /** We set R: the peer may invalidate any rkey of ours, so each must be a window's. */
    private volatile boolean peerMayInvalidate;
    /** Gives a pool slice back (one instance: no capture, no boxed offset per buffer). */
    private final ChunkBuffer.Releaser poolRelease = this::freeToPool;

    /**
     * @param poolMr  registered pool memory (LOCAL_WRITE, plus MW_BIND if {@code windows}), or null for none
     * @param windows the link's memory windows, or null to register per RPC
     */
    public ChunkMemory(ProtectionDomain pd, MemoryRegion poolMr, WindowPool windows, CallerBuffers callerBuffers,
            Guard guard) {
        this.pd = pd;
        this.callerBuffers = callerBuffers;
        this.poolMr = poolMr;
        this.pool = new ChunkPool(poolMr == null ? 0 : poolMr.length());
        this.windows = windows;
        this.ownAccess = Access.LOCAL_WRITE | (windows == null ? 0 : Access.MW_BIND);
        this.guard = guard;
    }

    public void stats(StatsCounters s) {
        this.stats = s;
        if (windows != null) {
            windows.stats(s);
        }
    }

    /** Window binds may wait in {@code c} to go out with the next Send. */
    public void chainBinds(WindowPool.BindChain c) {
        if (windows != null) {
            windows.chain(c);
        }
    }

    /** Whether every exposure goes through a memory window, so R may be advertised ({@link InvalidationPromise}). */
    public boolean windowsOnly() {
        return windows != null;
    }

    /** We set R (or not) in our private data: from now no exposure may be a registration. */
    public void peerMayInvalidate(boolean advertised) {
        this.peerMayInvalidate = advertised;
    }

    public boolean peerMayInvalidate() {
        return peerMayInvalidate;
    }

    /** A slice of the pool, or memory registered for this buffer alone; both go back on release. */
    public ChunkBuffer allocate(long bytes) {
        long off = poolMr == null ? -1 : pool.allocate(bytes);
        if (off >= 0) {
            return new ChunkBuffer(poolMr.segment().asSlice(off, bytes), poolMr.lkey(), null, poolRelease);
        }
        Arena arena = Arena.ofShared();
        MemoryRegion mr;
        try {
            mr = pd.register(arena.allocate(Math.max(bytes, 1), 4096), ownAccess);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        own.put(mr, arena);
        return new ChunkBuffer(mr.segment().asSlice(0, bytes), mr.lkey(), mr, b -> guard.run(() -> closeOwn(mr)));
    }

    private void freeToPool(ChunkBuffer b) {
        pool.free(b.segment().address() - poolMr.address(), b.byteSize());
    }

    /**
     * Deregisters a buffer of its own and frees its memory; if the kernel refuses (a window
     * still bound over it: its LOCAL_INV never ran, the QP failed first), both stay for
     * {@link #closeAll}, which deallocates the windows first.
     */
    private void closeOwn(MemoryRegion mr) {
        Arena arena = own.get(mr);
        if (arena != null && released(mr)) {
            own.remove(mr);
            arena.close();
        }
    }

    /**
     * The endpoint's registered memory {@code m} lies in (an allocator's buffer or a
     * registration cache entry), with a use taken; null if {@code m} is copied.
     */
    public RegisteredMemory use(MemorySegment m) {
        return callerBuffers == null ? null : callerBuffers.use(m, stats);
    }

    /** {@code m}, inside {@code r} (the caller holds a use of it), as a chunk buffer in place. */
    public ChunkBuffer callerChunk(RegisteredMemory r, MemorySegment m) {
        MemoryRegion mr = register(r);
        return new ChunkBuffer(m, mr.lkey(), mr, true, b -> r.unuse());
    }

    /** {@code r}'s registration in our PD, made now if it has none (the caller holds a use of r). */
    public MemoryRegion register(RegisteredMemory r) {
        MemoryRegion mr = callerRegistrations.get(r);
        if (mr != null) {
            return mr;
        }
        synchronized (callerRegistrations) {
            mr = callerRegistrations.get(r);
            if (mr == null) {
                mr = pd.register(r.segment(), ownAccess); // LOCAL_WRITE (+ MW_BIND): no remote right of its own
                callerRegistrations.put(r, mr);
                r.registered(this);
                StatsCounters s = stats;
                if (s != null) {
                    s.registeredBufferRegistrations.increment();
                }
            }
            return mr;
        }
    }

    /**
     * The caller closed {@code r} and no call exposes it: deregister it, unless the link is
     * going. Its memory is freed only once no registration pins it: a deregistration the
     * kernel refuses (a window still bound over it) is left to {@link #closeAll}.
     */
    @Override
    public void forget(RegisteredMemory r) {
        guard.run(() -> {
            MemoryRegion mr = callerRegistrations.get(r);
            if (mr != null && deregister(mr)) {
                callerRegistrations.remove(r);
                r.unregistered(this);
            }
        });
    }

    /**
     * Exposes {@code local[offset, +length)} to the peer's Reads (or Writes) under a fresh
     * rkey: a window bound over it if one is free, else a registration of its own; but
     * never a registration while we set R (the peer could not invalidate it): then
     * an {@link RpcRdmaException} (its call fails with {@link ChunksUnavailableException}).
     */
    public int expose(ChunkBuffer local, long offset, long length, boolean writable) {
        return expose(local, offset, length, writable ? Access.REMOTE_WRITE : Access.REMOTE_READ);
    }

    /** As {@link #expose(ChunkBuffer, long, long, boolean)}, for the peer's Reads and Writes alike. */
    public int exposeReadWrite(ChunkBuffer local, long offset, long length) {
        return expose(local, offset, length, Access.REMOTE_READ | Access.REMOTE_WRITE);
    }

    private int expose(ChunkBuffer local, long offset, long length, int remote) {
        StatsCounters s = stats;
        if (s != null && local.callerMemory()) {
            s.zeroCopyExposures.increment();
        }
        if (windows != null && length > 0) {
            MemoryRegion under = local.handle() instanceof MemoryRegion own ? own : poolMr;
            int rkey = windows.bind(under, local.segment().address() + offset, length, remote);
            if (rkey != WindowPool.NO_WINDOW) {
                return rkey;
            }
        }
        if (!InvalidationPromise.mayRegister(peerMayInvalidate)) {
            throw new RpcRdmaException("no memory window is free (" + (windows == null ? 0 : windows.capacity())
                    + " per connection, every one bound for calls out or waiting for a credit), and with R set"
                    + " a registration, which the peer cannot invalidate by Send with Invalidate, must not stand in"
                    + " for one (RFC 8797 §3.2)");
        }
        MemoryRegion mr = pd.register(local.segment().asSlice(offset, length), Access.LOCAL_WRITE | remote);
        exposed.put(mr.rkey(), mr);
        if (s != null) {
            s.exposureRegistrations.increment();
        }
        return mr.rkey();
    }

    /**
     * Withdraws the rkeys {@code rkeys[0, n)} from {@link #expose} (unknown ones are
     * ignored: idempotent); {@code then} runs once none of them reaches memory any more,
     * now or on the LOCAL_INV's completion. Returns whether the caller runs {@code then}
     * now (true) or the link does later.
     */
    public boolean withdraw(int[] rkeys, int n, Runnable then) {
        for (int i = 0; i < n; i++) {
            MemoryRegion mr = exposed.remove(rkeys[i]);
            if (mr != null) {
                mr.close(); // synchronous: the rkey is dead once dereg returns
            }
        }
        return windows == null || windows.withdraw(rkeys, n, then);
    }

    /** Rkeys exposed now, windows and registrations (tests: none left after a call). */
    public int exposedNow() {
        return exposed.size() + (windows == null ? 0 : windows.boundCount());
    }

    /** Pool bytes handed out now (tests: chunk memory back after a call). */
    public long poolBytesInUse() {
        return pool.inUse();
    }

    /** A Send with Invalidate named {@code rkey}: see {@link WindowPool#remotelyInvalidated}. */
    public boolean remotelyInvalidated(int rkey) {
        return windows != null && windows.remotelyInvalidated(rkey);
    }

    /** A LOCAL_INV chain completed: what runs next, or null. */
    public Runnable invalidated(int token, boolean ok) {
        return windows == null ? null : windows.completed(token, ok);
    }

    /**
     * The link is freeing everything (its QP is closed already): every window and
     * registration goes. Returns the withdrawals that were still waiting for a LOCAL_INV,
     * for the caller to run once it holds no lock.
     */
    public Runnable[] closeAll() {
        Runnable[] left = windows == null ? new Runnable[0] : windows.closeAll(); // ORDER: before the MRs
        for (MemoryRegion mr : exposed.values()) {
            closeQuietly(mr);
        }
        exposed.clear();
        for (var e : own.entrySet()) {
            if (released(e.getKey())) {
                e.getValue().close();
            } else {
                kept(e.getKey());
            }
        }
        own.clear();
        for (var e : callerRegistrations.entrySet()) {
            if (deregister(e.getValue())) {
                e.getKey().unregistered(this); // the memory is freed once closed and no link holds it
            } else {
                kept(e.getValue());
            }
        }
        callerRegistrations.clear();
        closeQuietly(poolMr);
        return left;
    }

    /** ibv_dereg_mr of a caller registration, counted when done; false if the kernel refused. */
    private boolean deregister(MemoryRegion mr) {
        if (!released(mr)) {
            return false;
        }
        StatsCounters s = stats;
        if (s != null) {
            s.registeredBufferDeregistrations.increment();
        }
        return true;
    }

    /** Closes {@code mr}; false if the kernel refused (it stays open, and its memory must stay allocated). */
    private static boolean released(MemoryRegion mr) {
        closeQuietly(mr);
        return mr.isClosed();
    }

    /**
     * The link is gone and {@code mr} still cannot be deregistered: its memory is never
     * freed (the device may still reach the pages it pins); said once per region.
     */
    private static void kept(MemoryRegion mr) {
        System.getLogger(ChunkMemory.class.getName()).log(System.Logger.Level.WARNING,
                "ibv_dereg_mr refused at teardown: {0} bytes at 0x{1} stay allocated", mr.length(),
                Long.toHexString(mr.address()));
    }

    private static void closeQuietly(AutoCloseable a) {
        if (a == null) {
            return;
        }
        try {
            a.close();
        } catch (Exception e) {
            System.getLogger(ChunkMemory.class.getName()).log(System.Logger.Level.DEBUG, "close: {0}", e.toString());
        }
    }
}
