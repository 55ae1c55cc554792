package org.rpcrdma.bindings;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Decodes the three ways libibverbs and librdmacm report failure, into one
 * {@link NativeCallException} carrying the function name, errno and strerror text:
 * <ol>
 *   <li>the data path ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_req_notify_cq},
 *       {@code ibv_bind_mw}) returns the errno value itself: {@link #checkReturnedErrno};</li>
 *   <li>{@code ibv_poll_cq} returns a negative number: {@link #checkPoll};</li>
 *   <li>librdmacm and most {@code ibv_*} calls return -1 or NULL and set {@code errno}, which
 *       FFM can only see if the downcall captures it: {@link #capturingDowncall} builds such a
 *       handle, {@link #captureState} gives the calling thread's reusable capture buffer and
 *       {@link #lastError} turns it into the exception.</li>
 * </ol>
 * Capturing handles take the capture segment as their first argument, as
 * {@link Linker.Option#captureCallState} specifies.
 */
public final class NativeErrors {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    /** One capture buffer per thread, freed with the thread: no allocation per call. */
    private static final ThreadLocal<MemorySegment> STATE =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE_LAYOUT));

    private static final MethodHandle STRERROR = LINKER.downcallHandle(
            LINKER.defaultLookup().find("strerror").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));

    private NativeErrors() {
    }

    /**
     * A downcall handle for {@code address} that also captures {@code errno}. The returned
     * handle's first parameter is the capture segment (use {@link #captureState()}).
     */
    public static MethodHandle capturingDowncall(MemorySegment address, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(address, descriptor, CAPTURE_ERRNO);
    }

    /** The calling thread's capture buffer for {@link #capturingDowncall} handles. */
    public static MemorySegment captureState() {
        return STATE.get();
    }

    /** The errno a capturing downcall stored in {@code state}. */
    public static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    /** The exception for a -1/NULL return whose errno was captured in {@code state}. */
    public static NativeCallException lastError(String function, MemorySegment state) {
        return error(function, errno(state));
    }

    /** The exception for {@code function} failing with {@code errno}. */
    public static NativeCallException error(String function, int errno) {
        return new NativeCallException(function, errno, strerror(errno));
    }

    /** Data-path style: {@code rc} is 0 or an errno value. */
    public static void checkReturnedErrno(String function, int rc) {
        if (rc != 0) {
            // Some providers return -errno; report the magnitude either way.
            throw error(function, Math.abs(rc));
        }
    }

    /** {@code ibv_poll_cq} style: a negative count is a failure (rdma-core gives no errno). */
    public static int checkPoll(String function, int n) {
        if (n < 0) {
            throw new NativeCallException(function, -n, "completion queue poll failed (returned " + n + ")");
        }
        return n;
    }

    /** libc's strerror text for {@code errno}. */
    public static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
            return s.equals(MemorySegment.NULL) ? "errno " + errno : s.reinterpret(1024).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }
}
