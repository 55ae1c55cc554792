package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.chunk.RegisteredMemory;

/**
 * Native memory from an endpoint's {@link RegisteredBuffers} for zero-copy chunks (≈ a
 * Linux {@code rpcrdma_regbuf}, which outlives connections and is re-mapped to each new
 * one). A call whose long-call bytes, DDP argument or receptacle is a slice of
 * {@link #segment()} exposes that memory itself: a memory window of the call is bound
 * directly over it, so nothing is copied in or out (the peer's RDMA Read or Write reaches
 * the caller's bytes).
 *
 * <p>Registration belongs to a protection domain, and ours live per connection (a client's
 * reconnect brings a new PD). Each connection registers the buffer once (ibv_reg_mr with
 * LOCAL_WRITE and MW_BIND, never a remote right: only a call's window, under a fresh rkey,
 * is shown to the peer), at allocation on the client's current connection, else at its
 * first use on a connection, and keeps it until the buffer is closed or the connection
 * goes. After a reconnect the same segment goes on working, re-registered on the new
 * connection at its first use there.
 *
 * <p>Ownership: the caller's, released by {@link #close()} exactly once (again does
 * nothing; the endpoint's close closes what is left). Closing while a call still exposes
 * the memory defers the release until that call's rkeys are withdrawn; the memory is freed
 * after every connection's registration of it is gone (pages stay pinned until
 * ibv_dereg_mr, so never the other way round). A call that names a closed buffer's memory
 * fails with {@link IllegalStateException}; its segment is unusable once freed (FFM closes
 * its scope). Thread-safe.
 */
public final class RegisteredBuffer implements AutoCloseable {
    private final RegisteredMemory memory;

    RegisteredBuffer(RegisteredMemory memory) {
        this.memory = memory;
    }

    /** The memory and its registrations (the endpoint registers it on its connection). */
    RegisteredMemory memory() {
        return memory;
    }

    /** The memory: slice it freely; every slice is recognised as this buffer's. */
    public MemorySegment segment() {
        return memory.segment();
    }

    public long byteSize() {
        return memory.byteSize();
    }

    /** Whether {@link #close()} was called (the memory may still be in use by a call). */
    public boolean isClosed() {
        return memory.isClosed();
    }

    /** Releases the memory once no call exposes it; idempotent. */
    @Override
    public void close() {
        memory.close();
    }

    @Override
    public String toString() {
        return memory.toString().replace("RegisteredMemory", "RegisteredBuffer");
    }
}
