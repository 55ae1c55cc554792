package org.rpcrdma.transport.verbs;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.rpcrdma.bindings.NativeCallException;
import org.rpcrdma.bindings.NativeErrors;

/**
 * Control-path call helpers: every handle captures errno, so both error styles of
 * libibverbs/librdmacm (errno returned, or -1/NULL with errno set) become one
 * {@link NativeCallException}. Control-path calls are rare, so the boxing of
 * invokeWithArguments is acceptable; the data path goes through VerbsInline instead.
 */
final class Native {
    /** Reads native structs at absolute addresses. */
    static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static final Linker LINKER = Linker.nativeLinker();
    // int fcntl(int fd, int cmd, ...): variadic after cmd
    private static final MethodHandle FCNTL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("fcntl").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2), Linker.Option.captureCallState("errno"));
    // int poll(struct pollfd *fds, nfds_t nfds, int timeout)
    private static final MethodHandle POLL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT),
            Linker.Option.captureCallState("errno"));
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 04000;
    private static final short POLLIN = 1;
    static final int EAGAIN = 11;
    private static final int EINTR = 4;

    private Native() {
    }

    static MethodHandle handle(MemorySegment address, FunctionDescriptor descriptor) {
        return NativeErrors.capturingDowncall(address, descriptor);
    }

    private static Object invoke(MethodHandle h, MemorySegment state, Object... args) {
        Object[] all = new Object[args.length + 1];
        all[0] = state;
        System.arraycopy(args, 0, all, 1, args.length);
        try {
            return h.invokeWithArguments(all);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Calls an int-returning function; 0 is success, else the errno (returned or captured). */
    static void call(String function, MethodHandle h, Object... args) {
        MemorySegment state = NativeErrors.captureState();
        int rc = (int) invoke(h, state, args);
        if (rc != 0) {
            int errno = rc > 0 ? rc : NativeErrors.errno(state);
            throw NativeErrors.error(function, errno == 0 ? Math.abs(rc) : errno);
        }
    }

    /** Calls an int-returning function and returns the errno (0 on success) instead of throwing. */
    static int callErrno(MethodHandle h, Object... args) {
        MemorySegment state = NativeErrors.captureState();
        int rc = (int) invoke(h, state, args);
        if (rc == 0) {
            return 0;
        }
        int errno = rc > 0 ? rc : NativeErrors.errno(state);
        return errno == 0 ? Math.abs(rc) : errno;
    }

    /** Calls a pointer-returning function; NULL is failure with errno set. */
    static MemorySegment callPointer(String function, MethodHandle h, long size, Object... args) {
        MemorySegment state = NativeErrors.captureState();
        MemorySegment p = (MemorySegment) invoke(h, state, args);
        if (p.equals(MemorySegment.NULL)) {
            throw NativeErrors.lastError(function, state);
        }
        return p.reinterpret(size);
    }

    /** Puts {@code fd} in non-blocking mode, so reads never park a thread that close() must wait for. */
    static void setNonBlocking(String what, int fd) {
        MemorySegment state = NativeErrors.captureState();
        try {
            int flags = (int) FCNTL.invokeExact(state, fd, F_GETFL, 0);
            if (flags < 0) {
                throw NativeErrors.lastError("fcntl(" + what + ", F_GETFL)", state);
            }
            if ((int) FCNTL.invokeExact(state, fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                throw NativeErrors.lastError("fcntl(" + what + ", F_SETFL)", state);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * poll(2) one fd for input. {@code pollfd} is an 8-byte buffer the caller owns.
     *
     * @return true when readable, false on timeout or EINTR
     */
    static boolean pollIn(MemorySegment pollfd, int fd, int timeoutMillis) {
        pollfd.set(ValueLayout.JAVA_INT, 0, fd);
        pollfd.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
        pollfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        MemorySegment state = NativeErrors.captureState();
        int n;
        try {
            n = (int) POLL.invokeExact(state, pollfd, 1L, timeoutMillis);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (n < 0) {
            int errno = NativeErrors.errno(state);
            if (errno == EINTR) {
                return false;
            }
            throw NativeErrors.error("poll", errno);
        }
        return n > 0;
    }

    static String cString(MemorySegment p) {
        return p.equals(MemorySegment.NULL) ? "" : p.reinterpret(256).getString(0);
    }
}
