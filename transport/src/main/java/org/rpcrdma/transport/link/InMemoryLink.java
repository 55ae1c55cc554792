package org.rpcrdma.transport.link;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.rpcrdma.transport.LinkClosedException;
import org.rpcrdma.transport.chunk.CallerBuffers;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.chunk.ChunkPool;
import org.rpcrdma.transport.chunk.RegisteredMemory;

/**
 * One side of an in-memory pair as a link: its "QP" (its end of the {@link InMemoryWire}) and
 * the memory it exposes. RDMA Read and Write copy between exposed regions; an access outside
 * one, or to an rkey the peer does not expose, is a remote access error that takes both sides
 * down, as on an RNIC.
 */
public final class InMemoryLink implements Link, RegisteredMemory.Holder {
/** The connection this side serves (its counters, its remote-invalidation setting). */
private CompletionSink conn;
private final InMemoryWire wire;
private final InMemoryWire.Port port;
private InMemoryLink peer;
private volatile boolean down;
/** Released as a verbs link's destroy leaves it: chunk memory and exposures are refused ({@link #release}). */
private volatile boolean released;
private final int depth;
private final Arena arena;
private final long chunkMemoryBytes;
private final CallerBuffers registered;
private final ConcurrentHashMap<Integer, Exposed> exposed;

/** A region one side exposes under an rkey. */
public record Exposed(InMemoryLink owner, MemorySegment memory, boolean writable) {}

/**
 * One side over {@code port} of {@code wire}: chunk memory from {@code arena} (up to
 * {@code chunkMemoryBytes}), callers' buffers from {@code registered}, both sides' exposures
 * in the shared {@code exposed} (rkey to region).
 */
public InMemoryLink(InMemoryWire wire, InMemoryWire.Port port, int depth, Arena arena, long chunkMemoryBytes,
        CallerBuffers registered, ConcurrentHashMap<Integer, Exposed> exposed) {
    this.wire = wire;
    this.port = port;
    this.depth = depth;
    this.arena = arena;
    this.chunkMemoryBytes = chunkMemoryBytes;
    this.registered = registered;
    this.exposed = exposed;
}

/** Joins two sides of one wire. */
public static void join(InMemoryLink a, InMemoryLink b) {
    a.peer = b;
    b.peer = a;
}

/** Where this side's completions go, and whose counters it counts in. */
public void bind(CompletionSink sink) {
    conn = sink;
    port.conn = sink;
}

/** Where this side's completions go from now on (tests: a raw peer), as {@link VerbsLink#deliverTo}. */
public void deliverTo(CompletionSink sink) {
    port.conn = sink;
}

public InMemoryWire wire() {
    return wire;
}

/** Chunk-pool bytes in use now. */
public synchronized long chunkBytesInUse() {
    return chunkPool == null ? 0 : chunkPool.inUse();
}

    @Override
    public boolean exposesMemory() {
        return true;
    }

    @Override
    public int rdmaDepth() {
        return depth;
    }

    @Override
    public boolean rkeysInvalidatableByPeer() {
        return conn.remoteInvalidation(); // both sides set R when the options ask for it
    }

    /** Chunk memory, as a link registers it once: allocated on first need, from the pair's arena. */
    private MemorySegment chunkMemory;
    private ChunkPool chunkPool;
    private final ChunkBuffer.Releaser poolRelease = b -> chunkPool.free(b.segment().address()
            - chunkMemory.address(), b.byteSize());

    @Override
    public ChunkBuffer allocateChunk(long bytes) {
        refuseIfReleased("chunk allocation");
        long off;
        synchronized (this) {
            if (chunkPool == null) {
                chunkMemory = arena.allocate(chunkMemoryBytes, 64);
                chunkPool = new ChunkPool(chunkMemoryBytes);
            }
            off = chunkPool.allocate(bytes);
        }
        if (off >= 0) {
            return new ChunkBuffer(chunkMemory.asSlice(off, bytes), 0, null, poolRelease);
        }
        Arena a = Arena.ofShared(); // the pool is full: memory of its own, as a link registers it
        return new ChunkBuffer(a.allocate(Math.max(bytes, 1), 64).asSlice(0, bytes), 0, a, b -> a.close());
    }

    @Override
    public void postRead(int token, ChunkBuffer local, long localOffset, int length, int rkey, long remoteOffset) {
        rdma(false, token, local, localOffset, length, rkey, remoteOffset);
    }

    @Override
    public void postWrite(int token, ChunkBuffer local, long localOffset, int length, int rkey, long remoteOffset) {
        rdma(true, token, local, localOffset, length, rkey, remoteOffset);
    }

    private void rdma(boolean write, int token, ChunkBuffer local, long localOffset, int length, int rkey,
            long remoteOffset) {
        if (down) {
            return;
        }
        Exposed x = exposed.get(rkey);
        long base = x == null ? 0 : x.memory().address();
        if (x == null || x.owner() != peer || (write && !x.writable()) || remoteOffset < base
                || remoteOffset + length > base + x.memory().byteSize() || length < 0) {
            // a remote access error: both QPs go to error
            disconnect();
            return;
        }
        if (!x.memory().scope().isAlive()) {
            // the caller freed exposed memory: on verbs the registration keeps its pages
            // pinned (the device reaches them, the caller no longer sees them): a Write
            // goes nowhere the caller can see, a Read brings what is left (zeros here)
            if (!write) {
                local.segment().asSlice(localOffset, length).fill((byte) 0);
            }
        } else if (write) {
            MemorySegment.copy(local.segment(), localOffset, x.memory(), remoteOffset - base, length);
        } else {
            MemorySegment.copy(x.memory(), remoteOffset - base, local.segment(), localOffset, length);
        }
        wire.transmit(InMemoryWire.RDMA_DONE, port, token, 0);
    }

    /** Registered buffers this side "registered" (as a PD would hold them). */
    private final java.util.Set<RegisteredMemory> registrations = ConcurrentHashMap.newKeySet();

    @Override
    public ChunkBuffer callerChunk(MemorySegment memory) {
        refuseIfReleased("registration");
        RegisteredMemory r = registered.use(memory, conn.counters());
        if (r == null) {
            return null;
        }
        if (registrations.add(r)) {
            r.registered(this);
            conn.counters().registeredBufferRegistrations.increment();
        }
        return new ChunkBuffer(memory, 0, r, true, b -> r.unuse());
    }

    @Override
    public void forget(RegisteredMemory r) {
        if (registrations.remove(r)) {
            conn.counters().registeredBufferDeregistrations.increment();
            r.unregistered(this);
        }
    }

    /** The pair is closing: every registration goes. */
    public void forgetAll() {
        for (RegisteredMemory r : registrations) {
            forget(r);
        }
    }

    @Override
    public int expose(ChunkBuffer local, long offset, long length, boolean writable) {
        refuseIfReleased("memory exposure");
        if (local.callerMemory()) {
            conn.counters().zeroCopyExposures.increment();
        }
        MemorySegment m = local.segment().asSlice(offset, length);
        while (true) {
            int rkey = ThreadLocalRandom.current().nextInt();
            if (rkey != 0 && exposed.putIfAbsent(rkey, new Exposed(this, m, writable)) == null) {
                return rkey;
            }
        }
    }

    /** A writable exposure here takes the peer's Reads too. */
    @Override
    public int exposeReadWrite(ChunkBuffer local, long offset, long length) {
        return expose(local, offset, length, true);
    }

    /** Rkeys of ours a Send with Invalidate of the peer withdrew, not yet withdrawn by us. */
    private final java.util.Set<Integer> invalidatedByPeer = ConcurrentHashMap.newKeySet();

    @Override
    public void withdraw(int[] rkeys, int n, Runnable then) {
        for (int i = 0; i < n; i++) {
            if (invalidatedByPeer.remove(rkeys[i])) {
                conn.counters().remoteInvalidations.increment(); // never invalidated twice
            } else if (exposed.remove(rkeys[i]) != null) {
                conn.counters().localInvalidations.increment();
            }
        }
        then.run();
    }

    @Override
    public void postSendWithInvalidate(int slot, MemorySegment buffer, int length, boolean signalled, int rkey) {
        if (down) {
            return;
        }
        Exposed x = exposed.get(rkey);
        if (x == null || x.owner() != peer || !exposed.remove(rkey, x)) {
            // an rkey the peer does not expose (never, or withdrawn already): a remote
            // invalid request, both QPs go to error, as on an RNIC (rxe fails the receive)
            disconnect();
            return;
        }
        peer.invalidatedByPeer.add(rkey);
        postSend(slot, buffer, length, signalled);
    }

    @Override
    public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {
        if (!down && !wire.send(port, slot, buffer, length, signalled)) {
            disconnect(); // like RNR with rnr_retry_count 0
        }
    }

    @Override
    public void postReceives(int[] slots, int count) {
        port.post(slots, count);
    }

    /**
     * What {@code VerbsLink}'s destroy leaves of this side (its PD and chunk memory freed):
     * chunk allocation, registration and exposure are refused with
     * {@link LinkClosedException}, as its {@link LinkGate} refuses them. The pair's memory
     * itself stays until it closes.
     */
    public void release() {
        disconnect();
        released = true;
    }

    private void refuseIfReleased(String what) {
        if (released) {
            throw new LinkClosedException("in-memory link released; " + what + " refused");
        }
    }

    @Override
    public void disconnect() {
        if (down) {
            return;
        }
        down = true;
        peer.down = true;
        wire.transmit(InMemoryWire.LOST, port, 0, 0);
        wire.transmit(InMemoryWire.LOST, peer.port, 0, 0);
    }

    @Override
    public boolean pollOnCaller(java.util.function.BooleanSupplier done, long deadlineNanos) {
        return wire.pollOnCaller(done, deadlineNanos);
    }

    @Override
    public void blockingCallStarts() {
        wire.blockingCallStarts();
    }

    @Override
    public void blockingCallEnds() {
        wire.blockingCallEnds();
    }
}
