package org.rpcrdma.transport;

import java.lang.foreign.Arena;
import java.util.concurrent.ConcurrentHashMap;
import org.rpcrdma.transport.core.ChunkBuffer;
import org.rpcrdma.transport.core.ChunkPool;
import org.rpcrdma.transport.verbs.Access;
import org.rpcrdma.transport.verbs.MemoryRegion;
import org.rpcrdma.transport.verbs.ProtectionDomain;

/**
 * The chunk memory of one {@link VerbsLink} (≈ Linux's {@code rpcrdma_regbuf}s and FRWR
 * MRs of one connection): a pool registered once for RDMA Read targets and RDMA Write
 * sources (LOCAL_WRITE only: its own rkey is never shown to the peer), buffers registered
 * for themselves when the pool is full, and per-RPC registrations that expose memory to
 * the peer under an rkey of their own ({@link #expose}, withdrawn by {@link #invalidate}:
 * ibv_dereg_mr, synchronous, so the peer can no longer reach the memory once it returns,
 * RFC 8166 §4.4). Whatever is still registered when the link goes is closed by
 * {@link #closeAll}, after the QP.
 *
 * <p>Not guarded itself: {@link VerbsLink} calls it under the read side of its gate (and
 * {@link #closeAll} under the write side), so nothing here runs on freed verbs objects.
 */
final class ChunkMemory {
    /** Runs a release under the link's gate, or leaves it to {@link #closeAll} if the link is going. */
    interface Guard {
        void run(Runnable r);
    }

    private final ProtectionDomain pd;
    private final MemoryRegion poolMr;
    private final ChunkPool pool;
    private final Guard guard;
    private final ConcurrentHashMap<MemoryRegion, Arena> own = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Integer, MemoryRegion> exposed = new ConcurrentHashMap<>();

    /** @param poolMr registered pool memory (LOCAL_WRITE), or null for none */
    ChunkMemory(ProtectionDomain pd, MemoryRegion poolMr, Guard guard) {
        this.pd = pd;
        this.poolMr = poolMr;
        this.pool = new ChunkPool(poolMr == null ? 0 : poolMr.length());
        this.guard = guard;
    }

    /** A slice of the pool, or memory registered for this buffer alone; both go back on release. */
    ChunkBuffer allocate(long bytes) {
        long off = poolMr == null ? -1 : pool.allocate(bytes);
        if (off >= 0) {
            return new ChunkBuffer(poolMr.segment().asSlice(off, bytes), poolMr.lkey(), off,
                    b -> pool.free((Long) b.handle(), b.byteSize()));
        }
        Arena arena = Arena.ofShared();
        MemoryRegion mr;
        try {
            mr = pd.register(arena.allocate(Math.max(bytes, 1), 4096), Access.LOCAL_WRITE);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        own.put(mr, arena);
        return new ChunkBuffer(mr.segment().asSlice(0, bytes), mr.lkey(), mr, b -> guard.run(() -> closeOwn(mr)));
    }

    private void closeOwn(MemoryRegion mr) {
        Arena arena = own.remove(mr);
        if (arena != null) {
            mr.close();
            arena.close();
        }
    }

    /** Registers {@code local[offset, +length)} for the peer's Reads (or Writes) under a fresh rkey. */
    int expose(ChunkBuffer local, long offset, long length, boolean writable) {
        MemoryRegion mr = pd.register(local.segment().asSlice(offset, length),
                Access.LOCAL_WRITE | (writable ? Access.REMOTE_WRITE : Access.REMOTE_READ));
        exposed.put(mr.rkey(), mr);
        return mr.rkey();
    }

    /** Deregisters an rkey from {@link #expose}; idempotent. */
    void invalidate(int rkey) {
        MemoryRegion mr = exposed.remove(rkey);
        if (mr != null) {
            mr.close();
        }
    }

    /** The link is freeing everything (its QP is closed already): every registration goes. */
    void closeAll() {
        for (MemoryRegion mr : exposed.values()) {
            closeQuietly(mr);
        }
        exposed.clear();
        for (var e : own.entrySet()) {
            closeQuietly(e.getKey());
            closeQuietly(e.getValue());
        }
        own.clear();
        closeQuietly(poolMr);
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
