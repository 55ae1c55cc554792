package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.bindings.LibcCalls;
import org.rpcrdma.bindings.NativeErrors;

/**
 * A wait for input on a channel's fd that another thread can end: one poll(2) on that fd
 * and an eventfd of this object's own, for the whole timeout. {@link #wake} makes the
 * eventfd readable for good (nothing ever reads it), so the wait in progress and every
 * later one return at once. A waiter then needs no timer to notice that its channel is
 * closing (waits in 50 ms slices woke each waiting thread 20 times a second: a client's
 * poller and rdma_cm thread, at 1,000 connections, 40,000 wake-ups a second).
 *
 * <p>One waiter at a time (its channel's lock); {@link #wake} from any thread, also during
 * or after close (then it does nothing). Part of its channel (not a verbs object of its
 * own): the channel closes it, after its waiter left; it closes its eventfd exactly once.
 */
final class WakeableWait implements AutoCloseable {
    /** The longest wait taken as asked; longer ones are this long (about 24 days). */
    static final long MAX_WAIT_MILLIS = Integer.MAX_VALUE;
    private static final int EFD_NONBLOCK = 04000;
    private static final int EFD_CLOEXEC = 02000000;
    private static final short POLLIN = 1;
    /** sizeof(struct pollfd): int fd, short events, short revents. */
    private static final int POLLFD = 8;

    private final int fd;
    private final int eventFd;
    /** {channel fd, eventfd}: written by the waiter only. */
    private final MemorySegment pollfds;
    /** The 8-byte count a wake writes. */
    private final MemorySegment one;
    /** Guarded by this: the eventfd was written, or closed (a wake after close must not write a reused fd number). */
    private boolean done;
    /** Written under this. */
    private volatile boolean closed;

    /**
     * A wait on {@code fd}, which the caller owns and closes; its few bytes come from the
     * owner's {@code arena}, freed with it after {@link #close} (closing a shared arena is a
     * handshake with every thread of the JVM: one per owner, not one more per wait).
     */
    WakeableWait(int fd, Arena arena) {
        this.fd = fd;
        this.pollfds = arena.allocate(2 * POLLFD, 4);
        this.one = arena.allocate(ValueLayout.JAVA_LONG);
        one.set(ValueLayout.JAVA_LONG, 0, 1L);
        int efd = LibcCalls.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (efd < 0) {
            throw NativeChecks.failure("eventfd", NativeErrors.pointerErrno());
        }
        this.eventFd = efd;
    }

    /** The deadline (System.nanoTime) of a wait of {@code timeoutMillis} from now; negative is 0. */
    static long deadline(long timeoutMillis) {
        long millis = Math.clamp(timeoutMillis, 0, MAX_WAIT_MILLIS);
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /**
     * Waits in the kernel until the fd has input (or an error for the caller's read to
     * report), the deadline passes, or {@link #wake} was called. A deadline already past
     * only checks.
     *
     * @return true if the fd is readable; false on timeout or once woken
     */
    boolean await(long deadlineNanos) {
        if (closed) {
            throw new IllegalStateException("WakeableWait is closed");
        }
        pollfds.set(ValueLayout.JAVA_INT, 0, fd);
        pollfds.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
        pollfds.set(ValueLayout.JAVA_INT, POLLFD, eventFd);
        pollfds.set(ValueLayout.JAVA_SHORT, POLLFD + 4, POLLIN);
        while (true) {
            pollfds.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
            pollfds.set(ValueLayout.JAVA_SHORT, POLLFD + 6, (short) 0);
            long left = deadlineNanos - System.nanoTime();
            // rounded up: a wait that ends a little early would only be repeated
            int timeout = left <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000);
            int n = LibcCalls.poll(pollfds, 2, timeout);
            if (n < 0) {
                int errno = NativeErrors.pointerErrno();
                if (errno == NativeChecks.EINTR) {
                    continue; // a signal, not an answer: wait for what is left
                }
                throw NativeChecks.failure("poll", errno);
            }
            if (n == 0 || pollfds.get(ValueLayout.JAVA_SHORT, POLLFD + 6) != 0) {
                return false;
            }
            if (pollfds.get(ValueLayout.JAVA_SHORT, 6) != 0) {
                return true;
            }
        }
    }

    /** Ends the wait in progress, if any, and every later one, at once. Idempotent; any thread. */
    synchronized void wake() {
        if (done) {
            return;
        }
        done = true;
        // eventfd(2): an 8-byte write adds to the count; non-blocking, and one write never fills it
        if (LibcCalls.write(eventFd, one, 8) != 8) {
            throw NativeChecks.failure("write(eventfd)", NativeErrors.pointerErrno());
        }
    }

    /** Closes the eventfd (once; later calls do nothing). No waiter may be inside {@link #await}. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        done = true;
        int rc = LibcCalls.close(eventFd);
        NativeChecks.status("close(eventfd)", rc);
    }
}
