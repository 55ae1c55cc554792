package org.rpcrdma.transport.link;

import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.chunk.ChunkMemory;
import org.rpcrdma.transport.chunk.RegisteredMemory;

/**
 * A verbs link's memory operations: chunk memory, callers' registered buffers and the
 * exposures (windows or registrations) a peer reaches them by, each made under the link's
 * gate so that none races the teardown that frees the PD and the QP.
 */
final class LinkMemory {
    private final LinkGate gate;
    private final ChunkMemory chunks;

    LinkMemory(LinkGate gate, ChunkMemory chunks) {
        this.gate = gate;
        this.chunks = chunks;
    }

    int exposedNow() {
        return chunks.exposedNow();
    }

    long bytesInUse() {
        return chunks.poolBytesInUse();
    }

    /** Chunk memory: a slice of the registered pool, or memory registered for this buffer alone. */
    ChunkBuffer allocate(long bytes) {
        long stamp = gate.enter("chunk allocation");
        try {
            return chunks.allocate(bytes);
        } finally {
            gate.exit(stamp);
        }
    }

    /**
     * The caller's registered memory (an allocator's buffer, or a registration cache entry
     * made or found now), exposed in place (registered in our PD on first use); else null.
     * The buffer's use is taken outside the gate and, on failure, given back outside it:
     * its release, or an eviction, may deregister through the gate.
     */
    ChunkBuffer callerChunk(MemorySegment memory) {
        RegisteredMemory r = chunks.use(memory);
        if (r == null) {
            return null;
        }
        boolean ok = false;
        try {
            ChunkBuffer b = underGate("chunk allocation", () -> chunks.callerChunk(r, memory));
            ok = true;
            return b;
        } finally {
            if (!ok) {
                r.unuse();
            }
        }
    }

    /**
     * Registers {@code b} in this link's PD now (a client's allocation, so that its first
     * call does not pay for it).
     */
    void register(RegisteredMemory b) {
        b.use();
        try {
            underGate("registration", () -> chunks.register(b));
        } finally {
            b.unuse(); // ORDER: outside the gate (a closed buffer's release deregisters through it)
        }
    }

    int expose(ChunkBuffer local, long offset, long length, boolean writable) {
        long stamp = gate.enter("memory exposure");
        try {
            return chunks.expose(local, offset, length, writable);
        } finally {
            gate.exit(stamp);
        }
    }

    int exposeReadWrite(ChunkBuffer local, long offset, long length) {
        long stamp = gate.enter("memory exposure");
        try {
            return chunks.exposeReadWrite(local, offset, length);
        } finally {
            gate.exit(stamp);
        }
    }

    /** LOCAL_INV for windows (then runs on its completion), dereg for registrations (then runs now). */
    void withdraw(int[] rkeys, int count, Runnable then) {
        boolean now = true;
        long stamp = gate.enterUnlessFreed();
        if (stamp != 0) {
            try {
                now = chunks.withdraw(rkeys, count, then);
            } finally {
                gate.exit(stamp);
            }
        }
        if (now) {
            then.run(); // freed: the QP and every window went with it
        }
    }

    private <T> T underGate(String what, Supplier<T> action) {
        long stamp = gate.enter(what);
        try {
            return action.get();
        } finally {
            gate.exit(stamp);
        }
    }
}
