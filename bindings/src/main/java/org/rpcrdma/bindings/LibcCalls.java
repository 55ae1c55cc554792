package org.rpcrdma.bindings;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The two libc calls the verbs layer needs around the fds of completion and event
 * channels: {@code fcntl} (to make them non-blocking) and {@code poll}. Both return the C
 * result; on -1, {@link NativeErrors#errno()} is the captured errno.
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
}
