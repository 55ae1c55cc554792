package org.rpcrdma.bindings;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The libc calls the verbs layer needs around the fds of completion and event channels:
 * {@code fcntl} (to make them non-blocking), {@code poll}, and an {@code eventfd} (with
 * {@code write} and {@code close}) that wakes a thread in poll. Each returns the C result;
 * on -1, {@link NativeErrors#errno()} is the captured errno.
 */
public final class LibcCalls {
    private static final Linker LINKER = Linker.nativeLinker();
    // int fcntl(int fd, int cmd, ...): variadic after cmd; F_GETFL/F_SETFL take an int
    private static final MethodHandle FCNTL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("fcntl").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2), Linker.Option.captureCallState("errno"));
    // int poll(struct pollfd *fds, nfds_t nfds, int timeout)
    private static final MethodHandle POLL = NativeErrors.capturingDowncall(
            LINKER.defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));

    // int eventfd(unsigned int initval, int flags)
    private static final MethodHandle EVENTFD = NativeErrors.capturingDowncall(
            LINKER.defaultLookup().find("eventfd").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    // ssize_t write(int fd, const void *buf, size_t count)
    private static final MethodHandle WRITE = NativeErrors.capturingDowncall(
            LINKER.defaultLookup().find("write").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    // int close(int fd)
    private static final MethodHandle CLOSE = NativeErrors.capturingDowncall(
            LINKER.defaultLookup().find("close").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    private LibcCalls() {
    }

    /** {@code int fcntl(int fd, int cmd, int arg)}. */
    public static int fcntl(int fd, int cmd, int arg) {
        try {
            return (int) FCNTL.invokeExact(NativeErrors.captureState(), fd, cmd, arg);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int poll(struct pollfd *fds, nfds_t nfds, int timeout)}. */
    public static int poll(MemorySegment fds, long nfds, int timeoutMillis) {
        try {
            return (int) POLL.invokeExact(NativeErrors.captureState(), fds, nfds, timeoutMillis);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int eventfd(unsigned int initval, int flags)}. */
    public static int eventfd(int initval, int flags) {
        try {
            return (int) EVENTFD.invokeExact(NativeErrors.captureState(), initval, flags);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code ssize_t write(int fd, const void *buf, size_t count)}. */
    public static long write(int fd, MemorySegment buf, long count) {
        try {
            return (long) WRITE.invokeExact(NativeErrors.captureState(), fd, buf, count);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int close(int fd)}. */
    public static int close(int fd) {
        try {
            return (int) CLOSE.invokeExact(NativeErrors.captureState(), fd);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }
}
