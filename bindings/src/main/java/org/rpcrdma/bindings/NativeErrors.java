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
 * errno for the facade ({@link IbvCalls}, {@link RdmaCmCalls}, {@link LibcCalls},
 * {@link VerbsInline}), and the decoding of the three ways libibverbs and librdmacm report
 * failure into one positive errno:
 * <ol>
 *   <li>the data path ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_req_notify_cq},
 *       {@code ibv_dealloc_mw}) and most {@code int} {@code ibv_*} calls return the errno
 *       value itself (some providers negate it);</li>
 *   <li>{@code ibv_poll_cq} returns a negative number (rdma-core sets no errno);</li>
 *   <li>librdmacm, the pointer-returning {@code ibv_*} calls, {@code ibv_get_cq_event} and
 *       libc return -1 or NULL and set {@code errno}, which FFM sees only when the downcall
 *       captures it ({@code Linker.Option.captureCallState("errno")}).</li>
 * </ol>
 * Every errno-setting call of the facade captures into one buffer per thread, so
 * {@link #errno()} after a failed call is that call's errno, as C's {@code errno} is.
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

    /** Reported when a call said it failed but left errno 0. */
    public static final int EIO = 5;

    private NativeErrors() {
    }

    /**
     * A downcall handle for {@code address} that also captures {@code errno}; its first
     * parameter is the capture segment ({@link #captureState()}).
     */
    static MethodHandle capturingDowncall(MemorySegment address, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(address, descriptor, CAPTURE_ERRNO);
    }

    /** The calling thread's capture buffer for {@link #capturingDowncall} handles. */
    static MemorySegment captureState() {
        return STATE.get();
    }

    /** Sets this thread's errno, as a C inline does before it fails without calling out. */
    static void setErrno(int errno) {
        ERRNO.set(captureState(), 0L, errno);
    }

    /** The errno the calling thread's latest errno-setting facade call left. */
    public static int errno() {
        return (int) ERRNO.get(captureState(), 0L);
    }

    /**
     * The errno of an {@code int} control call's result, whichever convention it follows:
     * 0 is success; -1 means "see errno" (librdmacm, {@code ibv_get_cq_event},
     * {@code ibv_query_gid}, libc); a positive value is the errno itself (most
     * {@code ibv_*}: "returns 0 on success, or the value of errno on failure"); any other
     * negative value is a negated errno. Call it before the next facade call on this thread.
     *
     * @return 0, or the positive errno
     */
    public static int statusErrno(int rc) {
        if (rc == 0) {
            return 0;
        }
        if (rc == -1) {
            return nonZero(errno());
        }
        return Math.abs(rc);
    }

    /** The errno of a pointer-returning call that returned NULL (never 0). */
    public static int pointerErrno() {
        return nonZero(errno());
    }

    private static int nonZero(int errno) {
        return errno > 0 ? errno : EIO;
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

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("unexpected checked exception from a downcall", t);
    }
}
