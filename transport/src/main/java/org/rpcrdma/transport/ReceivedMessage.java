package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.rpc.ConnectionEngine;

/**
 * An RPC message (call or reply, starting at its XID) as it sits in a registered receive
 * buffer. Valid until {@link #release()}; after that the buffer is reused by the next
 * receive. Release exactly once (close() does it); further calls do nothing. The message of
 * a call to an immediate handler ({@link CallHandler#immediate}) is read and released only
 * by that handler, on its thread, before it returns; elsewhere both throw
 * {@link IllegalStateException}.
 */
public final class ReceivedMessage implements AutoCloseable {
    private MemorySegment bytes;
    private final long placed;
    private final Runnable releaser;
    /** Set for a message in a receive buffer: released to it directly (no lambda per message). */
    private ConnectionEngine owner;
    private int slot;
    private boolean released;
    /**
     * {@link #placed} of the one message object an immediate handler's calls share
     * ({@link #reuse}): its reader is checked against the thread its connection is
     * dispatching on, so a reference kept past its call cannot read another's. A marker, not
     * a field: every message of the future shape would carry the field (8 bytes each).
     */
    private static final long REUSED = Long.MIN_VALUE;

    /** A message whose release runs {@code releaser}. */
    ReceivedMessage(MemorySegment bytes, Runnable releaser, long placed) {
        this.bytes = bytes;
        this.releaser = releaser;
        this.placed = placed;
        this.owner = null;
        this.slot = -1;
    }

    /** A message in receive buffer {@code slot} of {@code owner}; releasing it reposts that buffer. */
    ReceivedMessage(MemorySegment bytes, ConnectionEngine owner, int slot, long placed) {
        this.bytes = bytes;
        this.releaser = null;
        this.placed = placed;
        this.owner = owner;
        this.slot = slot;
    }

    /** A message object to be {@link #reuse}d (for one connection's immediate handler). */
    static ReceivedMessage reusable(ConnectionEngine owner) {
        ReceivedMessage m = new ReceivedMessage(MemorySegment.NULL, owner, -1, REUSED);
        m.released = true;
        return m;
    }

    /**
     * Makes this the message in receive buffer {@code slot} at {@code view} (its immediate
     * handler reads it). No lock: the dispatching thread alone touches it until the handler
     * returns ({@link #release} and {@link #bytes} check that).
     */
    void reuse(MemorySegment view, int slot) {
        this.bytes = view;
        this.slot = slot;
        this.released = false;
    }

    /**
     * For a reply to a call made with a receptacle: the bytes the responder placed in it
     * (from the returned Write list, checked against what was offered; RFC 8166 §4.3.2),
     * already copied there. -1 if the call offered no receptacle.
     */
    public long placedBytes() {
        return placed == REUSED ? -1 : placed;
    }

    /** The RPC message bytes; do not use after {@link #release()}. */
    public MemorySegment bytes() {
        if (released) {
            throw new IllegalStateException("message already released");
        }
        if (placed == REUSED && !owner.isImmediateDispatcher(Thread.currentThread())) {
            throw new IllegalStateException("the message of a call to an immediate handler is readable only by that"
                    + " handler, on its thread, until it returns");
        }
        return bytes;
    }

    /** Whether the message sits in a receive buffer (the peer's next messages need it back soon). */
    boolean inReceiveBuffer() {
        return owner != null;
    }

    /** Copies the bytes to the heap (so they survive release). */
    public byte[] toByteArray() {
        return bytes().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }

    public void release() {
        if (placed == REUSED) {
            // The object is reused for every call to its immediate handler, so a reference
            // kept past a handler is the next call's message too: only the thread running a
            // handler now may release it (else it would free the buffer of the call being
            // dispatched while its handler reads it).
            if (!owner.isImmediateDispatcher(Thread.currentThread())) {
                throw new IllegalStateException("the message of a call to an immediate handler is released only by"
                        + " that handler, on its thread, until it returns");
            }
            if (released) { // the dispatching thread's own: no lock
                return;
            }
            released = true;
        } else {
            synchronized (this) {
                if (released) {
                    return;
                }
                released = true;
            }
        }
        if (owner != null) {
            owner.releaseReceive(slot);
        } else {
            releaser.run();
        }
    }

    @Override
    public void close() {
        release();
    }
}
