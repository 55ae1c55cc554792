package org.rpcrdma.transport.chunk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The memory behind a {@link RegisteredMemory} or a {@link RegistrationCache} entry, and its
 * registrations (≈ a Linux {@code rpcrdma_regbuf}, which outlives connections and is
 * re-mapped to each new one): each connection registers it once in its PD (ibv_reg_mr with
 * LOCAL_WRITE and MW_BIND, never a remote right: only a call's window, under a fresh rkey,
 * is shown to the peer) and keeps it until it is closed or the connection goes.
 *
 * <p>Ownership: closed exactly once (again does nothing). Closing while a call still exposes
 * the memory defers the release until that call's rkeys are withdrawn; the memory is freed
 * after every connection's registration of it is gone (pages stay pinned until
 * ibv_dereg_mr, so never the other way round). Thread-safe.
 */
public final class RegisteredMemory implements AutoCloseable {
    /** A connection that registered this buffer in its PD; forgets (deregisters) it when asked. */
    public interface Holder {
        /**
         * Deregisters {@code b} (now, or when the connection is freed) and then calls
         * {@link RegisteredMemory#unregistered}.
         */
        void forget(RegisteredMemory b);
    }

    /** Who hands buffers out; told once a buffer's memory is no longer registered anywhere. */
    public interface Owner {
        void freed(RegisteredMemory b);
    }

    private final Owner owner;
    /** The memory's own arena, closed when freed; null for a {@link RegistrationCache} entry (the caller's memory). */
    private final Arena arena;
    private final MemorySegment segment;
    private final Set<Holder> holders = new HashSet<>();
    /** Calls exposing this memory now. */
    private int uses;
    private boolean closed;
    /** Closed and unused: every holder was asked to forget it. */
    private boolean releasing;
    private boolean freed;

    public RegisteredMemory(Owner owner, long bytes) {
        this.owner = owner;
        this.arena = Arena.ofShared();
        this.segment = arena.allocate(bytes, 4096);
    }

    /**
     * Memory this buffer does not own (a {@link RegistrationCache} entry: the pages of the
     * caller's memory): registered per connection like any other, never freed here.
     */
    public RegisteredMemory(Owner owner, MemorySegment pages) {
        this.owner = owner;
        this.arena = null;
        this.segment = pages;
    }

    /** The memory: slice it freely; every slice is recognised as this buffer's. */
    public MemorySegment segment() {
        return segment;
    }

    public long byteSize() {
        return segment.byteSize();
    }

    /** Whether {@link #close()} was called (the memory may still be in use by a call). */
    public synchronized boolean isClosed() {
        return closed;
    }

    /** Whether {@code m} lies inside this buffer (same memory and lifetime). */
    public boolean contains(MemorySegment m) {
        long a = m.address();
        return m.isNative() && a >= segment.address() && a + m.byteSize() <= segment.address() + segment.byteSize()
                && m.scope().equals(segment.scope());
    }

    /**
     * A call starts exposing this memory: the release waits for {@link #unuse}.
     *
     * @throws IllegalStateException if the buffer is closed
     */
    public synchronized void use() {
        if (closed) {
            throw new IllegalStateException("registered buffer of " + segment.byteSize() + " bytes is closed");
        }
        uses++;
    }

    /** The call's rkeys over this memory are withdrawn. */
    public void unuse() {
        List<Holder> forget;
        synchronized (this) {
            uses--;
            forget = releaseIfDueLocked();
        }
        release(forget);
    }

    /** Whether a call exposes this memory now. */
    public synchronized boolean inUse() {
        return uses > 0;
    }

    /** {@code h} registered this buffer (while a use holds it open). */
    public synchronized void registered(Holder h) {
        holders.add(h);
    }

    /** {@code h} deregistered it: the memory is freed once no holder is left and it is closed. */
    public void unregistered(Holder h) {
        boolean free;
        synchronized (this) {
            holders.remove(h);
            free = releasing && holders.isEmpty() && !freed;
            freed |= free;
        }
        if (free) {
            free();
        }
    }

    /** Releases the memory once no call exposes it; idempotent. */
    @Override
    public void close() {
        List<Holder> forget;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            forget = releaseIfDueLocked();
        }
        release(forget);
    }

    /** Null if not due yet (or already begun); else the holders to ask (maybe none). */
    private List<Holder> releaseIfDueLocked() {
        if (!closed || uses > 0 || releasing) {
            return null;
        }
        releasing = true;
        return new ArrayList<>(holders);
    }

    private void release(List<Holder> forget) {
        if (forget == null) {
            return;
        }
        boolean free;
        synchronized (this) {
            free = holders.isEmpty() && !freed;
            freed |= free;
        }
        if (free) {
            free();
            return;
        }
        for (Holder h : forget) {
            h.forget(this);
        }
    }

    private void free() {
        owner.freed(this); // ORDER: no lookup finds it once its memory is gone
        if (arena != null) {
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "RegisteredMemory[" + segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address()) + "]";
    }
}
