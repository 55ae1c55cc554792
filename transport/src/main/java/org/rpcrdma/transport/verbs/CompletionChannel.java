package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.rpcrdma.bindings.IbvCalls;
import org.rpcrdma.bindings.NativeErrors;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_comp_channel;

/**
 * An {@code ibv_comp_channel}. Its fd is non-blocking and {@link #await} sleeps in one
 * poll(2) on it and an eventfd ({@link WakeableWait}) for the whole timeout, never inside
 * ibv_get_cq_event; {@link #stopWaiting} and {@link #close()} write the eventfd, so a waiter
 * returns at once and close never waits out a timeout. One waiter thread at a time.
 * Close it after the CQs that use it.
 */
public final class CompletionChannel extends Resource {
    private final Device device;
    private final MemorySegment channel;
    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final WakeableWait wait;
    private final MemorySegment cqOut;
    private final MemorySegment ctxOut;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<Long, CompletionQueue> queues = new ConcurrentHashMap<>();
    private volatile CompletionQueue[] queueList = new CompletionQueue[0];

    CompletionChannel(Device device) {
        this.device = device;
        try {
            this.cqOut = arena.allocate(ValueLayout.ADDRESS);
            this.ctxOut = arena.allocate(ValueLayout.ADDRESS);
            this.channel = NativeChecks.pointer("ibv_create_comp_channel", IbvCalls.ibvCreateCompChannel(device.handle()),
                    ibv_comp_channel.layout().byteSize());
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.fd = ibv_comp_channel.fd(channel);
        try {
            NativeChecks.setNonBlocking("comp_channel", fd);
            this.wait = new WakeableWait(fd, arena); // ORDER: closed before the arena (release)
        } catch (RuntimeException e) {
            IbvCalls.ibvDestroyCompChannel(channel);
            arena.close();
            throw e;
        }
        opened();
    }

    public Device device() {
        return device;
    }

    /** The {@code struct ibv_comp_channel *}. */
    public MemorySegment handle() {
        checkOpen();
        return channel;
    }

    /** The channel's file descriptor (non-blocking), for callers with their own poll loop. */
    public int fd() {
        checkOpen();
        return fd;
    }

    void register(CompletionQueue cq) {
        queues.put(cq.handle().address(), cq);
        queueList = queues.values().toArray(CompletionQueue[]::new);
    }

    void unregister(long cqAddress) {
        queues.remove(cqAddress);
        queueList = queues.values().toArray(CompletionQueue[]::new);
    }

    /** The CQ with this native address; a linear scan, as a channel serves a handful of CQs (no boxing). */
    private CompletionQueue queueAt(long address) {
        for (CompletionQueue q : queueList) {
            if (q.handle().address() == address) {
                return q;
            }
        }
        return null;
    }

    /**
     * Waits up to {@code timeoutMillis} (0: just check) for a completion event, acknowledges
     * it, and returns the CQ it is for; null on timeout, after {@link #stopWaiting}, or when
     * the channel was closed. The CQ must then be re-armed with
     * {@link CompletionQueue#requestNotify} and drained.
     */
    public CompletionQueue await(long timeoutMillis) {
        long deadline = WakeableWait.deadline(timeoutMillis);
        lock.lock();
        try {
            while (!isClosed() && wait.await(deadline)) {
                int errno = NativeErrors.statusErrno(IbvCalls.ibvGetCqEvent(channel, cqOut, ctxOut));
                if (errno == 0) {
                    MemorySegment cq = cqOut.get(ValueLayout.ADDRESS, 0);
                    // Ack at once: ibv_destroy_cq waits for every event to be acked.
                    IbVerbs.ibv_ack_cq_events(cq, 1);
                    return queueAt(cq.address());
                } else if (errno != NativeChecks.EAGAIN) {
                    throw NativeChecks.failure("ibv_get_cq_event", errno);
                }
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends the wait in progress and every later one at once (null), the channel staying
     * open: for an owner about to stop using it (before it frees the CQs and then the
     * channel under a lock that the waiter holds). Idempotent; any thread.
     */
    public void stopWaiting() {
        wait.wake();
    }

    @Override
    void release() {
        wait.wake(); // a waiter returns at once and lets go of the lock
        lock.lock();
        try {
            NativeChecks.status("ibv_destroy_comp_channel", IbvCalls.ibvDestroyCompChannel(channel));
        } finally {
            lock.unlock();
            wait.close();
            arena.close();
        }
    }
}
