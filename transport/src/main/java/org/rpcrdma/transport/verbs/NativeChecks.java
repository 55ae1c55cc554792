package org.rpcrdma.transport.verbs;

import java.lang.foreign.MemorySegment;
import org.rpcrdma.bindings.LibcCalls;
import org.rpcrdma.bindings.NativeErrors;
import org.rpcrdma.transport.NativeFailureException;

/**
 * Turns the C results the bindings return into {@link NativeFailureException}s (function,
 * errno, strerror), so a native failure reaches users as the transport's exception; plus
 * making a channel's fd non-blocking. Call a check right after the native call: the errno
 * it reads is the calling thread's latest one.
 */
final class NativeChecks {
    static final int EAGAIN = 11;
    static final int EINTR = 4;
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 04000;

    private NativeChecks() {
    }

    /** The exception for {@code function} failing with {@code errno}. */
    static NativeFailureException failure(String function, int errno) {
        return new NativeFailureException(function, errno, NativeErrors.strerror(errno), null);
    }

    /** An {@code int} control call's result: 0, or a failure in any of the libraries' conventions. */
    static void status(String function, int rc) {
        int errno = NativeErrors.statusErrno(rc);
        if (errno != 0) {
            throw failure(function, errno);
        }
    }

    /** A pointer result: NULL is a failure with errno set; else the pointer sized to {@code size}. */
    static MemorySegment pointer(String function, MemorySegment p, long size) {
        if (p.equals(MemorySegment.NULL)) {
            throw failure(function, NativeErrors.pointerErrno());
        }
        return p.reinterpret(size);
    }

    /** A data-path result ({@code ibv_post_*}, {@code ibv_req_notify_cq}): 0 or an errno, maybe negated. */
    static void returned(String function, int rc) {
        if (rc != 0) {
            throw failure(function, Math.abs(rc));
        }
    }

    /** {@code ibv_poll_cq}: a negative count is a failure (rdma-core sets no errno). */
    static int polled(int n) {
        if (n < 0) {
            throw new NativeFailureException("ibv_poll_cq", -n, NativeErrors.strerror(-n),
                    "completion queue poll returned " + n);
        }
        return n;
    }

    /** Puts {@code fd} in non-blocking mode, so reads never park a thread that close() must wait for. */
    static void setNonBlocking(String what, int fd) {
        int flags = LibcCalls.fcntl(fd, F_GETFL, 0);
        if (flags < 0) {
            throw failure("fcntl(" + what + ", F_GETFL)", NativeErrors.pointerErrno());
        }
        if (LibcCalls.fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
            throw failure("fcntl(" + what + ", F_SETFL)", NativeErrors.pointerErrno());
        }
    }

    static String cString(MemorySegment p) {
        return p.equals(MemorySegment.NULL) ? "" : p.reinterpret(256).getString(0);
    }
}
