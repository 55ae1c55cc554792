package org.rpcrdma.bindings;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_context;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_context_ops;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_cq;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_mw;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_pd;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_qp;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq;

/**
 * The verbs data path that C callers get from {@code static inline} functions in
 * rdma-core 44's {@code infiniband/verbs.h}, which jextract does not emit. Each method
 * copies one inline: it loads the provider's function pointer from
 * {@code object->context->ops} and calls it, exactly as the C code does. Line numbers
 * ({@code verbs.h:NNNN}) are those of Debian's libibverbs-dev 44.0-2.
 *
 * <p>Downcall handles are built once per signature, without a fixed address (the
 * function pointer is the first argument), so one handle serves every provider and
 * context. The methods read pointers through one all-of-memory segment and allocate
 * nothing themselves; the caller owns and reuses the work-request structures.
 *
 * <p>All arguments are native pointers to live verbs objects; passing anything else is
 * undefined behaviour, as in C. Callers serialize per queue as libibverbs requires.
 */
public final class VerbsInline {
    private static final Linker LINKER = Linker.nativeLinker();
    /** Reads {@code struct} fields at absolute addresses, as C's pointer chasing does. */
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    // Offsets of the fields the inlines chase (from the generated layouts).
    private static final long CTX_OPS = ibv_context.layout().byteOffset(MemoryLayout.PathElement.groupElement("ops"));
    private static final long OPS_POST_SEND = off(ibv_context_ops.layout(), "post_send");
    private static final long OPS_POST_RECV = off(ibv_context_ops.layout(), "post_recv");
    private static final long OPS_POST_SRQ_RECV = off(ibv_context_ops.layout(), "post_srq_recv");
    private static final long OPS_POLL_CQ = off(ibv_context_ops.layout(), "poll_cq");
    private static final long OPS_REQ_NOTIFY_CQ = off(ibv_context_ops.layout(), "req_notify_cq");
    private static final long OPS_ALLOC_MW = off(ibv_context_ops.layout(), "alloc_mw");
    private static final long OPS_DEALLOC_MW = off(ibv_context_ops.layout(), "dealloc_mw");
    private static final long QP_CONTEXT = off(ibv_qp.layout(), "context");
    private static final long CQ_CONTEXT = off(ibv_cq.layout(), "context");
    private static final long SRQ_CONTEXT = off(ibv_srq.layout(), "context");
    private static final long PD_CONTEXT = off(ibv_pd.layout(), "context");
    private static final long MW_CONTEXT = off(ibv_mw.layout(), "context");

    // post and poll are critical (no thread-state transition): they are short, never block
    // or call back into Java, and are the per-message hot path. rxe's post_send does one
    // doorbell write(2); a safepoint waits at most that long. Notify and MW calls are rare.
    // Their pointer arguments go as 64-bit integers (JAVA_LONG): on LP64 (x86-64 SysV,
    // AArch64 AAPCS64) a pointer and a long travel in the same integer register. An ADDRESS
    // argument costs, per argument and call, a native-segment check and an acquire/release
    // of its arena's session (two CASes for a shared arena): under C1 most of a busy poll's
    // time. The callers keep these structures alive themselves (freed only when no post or
    // poll can be in flight), which is what the session acquire would have ensured.
    // int (*)(void *, void *, void **): post_send(qp, wr, bad_wr), post_recv, post_srq_recv
    private static final MethodHandle POST = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG), Linker.Option.critical(false));
    // int (*)(struct ibv_cq *, int, struct ibv_wc *)
    private static final MethodHandle POLL_CQ = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG), Linker.Option.critical(false));
    // int (*)(struct ibv_cq *, int)
    private static final MethodHandle REQ_NOTIFY_CQ = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    // struct ibv_mw *(*)(struct ibv_pd *, enum ibv_mw_type)
    private static final MethodHandle ALLOC_MW = LINKER.downcallHandle(
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT), Linker.Option.captureCallState("errno"));
    // int (*)(struct ibv_mw *)
    private static final MethodHandle DEALLOC_MW = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS));

    private static final int EOPNOTSUPP = 95;

    private VerbsInline() {
    }

    private static long off(MemoryLayout layout, String field) {
        return layout.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    private static long ptr(long address) {
        return ALL.get(ValueLayout.JAVA_LONG, address);
    }

    /** {@code object->context->ops.<field>}; never 0 for the data-path ops of a real provider. */
    private static MemorySegment op(long contextAddress, long opOffset) {
        return MemorySegment.ofAddress(ptr(contextAddress + CTX_OPS + opOffset));
    }

    /**
     * The provider's {@code post_send} of this QP's context. The ops table of a context is
     * fixed once the device is open, so a caller on the hot path looks it up once: under
     * C1 every lookup allocates a MemorySegment (40 B per downcall in the guest profile).
     */
    public static MemorySegment postSendFunction(MemorySegment qp) {
        return op(ptr(qp.address() + QP_CONTEXT), OPS_POST_SEND);
    }

    /** The provider's {@code post_recv} of this QP's context (see {@link #postSendFunction}). */
    public static MemorySegment postRecvFunction(MemorySegment qp) {
        return op(ptr(qp.address() + QP_CONTEXT), OPS_POST_RECV);
    }

    /** The provider's {@code poll_cq} of this CQ's context (see {@link #postSendFunction}). */
    public static MemorySegment pollCqFunction(MemorySegment cq) {
        return op(ptr(cq.address() + CQ_CONTEXT), OPS_POLL_CQ);
    }

    /**
     * verbs.h:3339 {@code ibv_post_send}: {@code qp->context->ops.post_send(qp, wr, bad_wr)},
     * through {@code fn} from {@link #postSendFunction}.
     *
     * @return 0, or the errno value the provider returned; {@code badWr} then points at the
     *         first work request that was not posted
     */
    public static int ibvPostSend(MemorySegment fn, MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        return ibvPostSend(fn, qp.address(), wr.address(), badWr.address());
    }

    /** As {@link #ibvPostSend(MemorySegment, MemorySegment, MemorySegment, MemorySegment)}, the pointers as addresses. */
    public static int ibvPostSend(MemorySegment fn, long qp, long wr, long badWr) {
        try {
            return (int) POST.invokeExact(fn, qp, wr, badWr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * verbs.h:3348 {@code ibv_post_recv}: {@code qp->context->ops.post_recv(qp, wr, bad_wr)},
     * through {@code fn} from {@link #postRecvFunction}.
     */
    public static int ibvPostRecv(MemorySegment fn, MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        return ibvPostRecv(fn, qp.address(), wr.address(), badWr.address());
    }

    /** As {@link #ibvPostRecv(MemorySegment, MemorySegment, MemorySegment, MemorySegment)}, the pointers as addresses. */
    public static int ibvPostRecv(MemorySegment fn, long qp, long wr, long badWr) {
        try {
            return (int) POST.invokeExact(fn, qp, wr, badWr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** verbs.h:2997 {@code ibv_post_srq_recv}: {@code srq->context->ops.post_srq_recv(srq, wr, bad_wr)}. */
    public static int ibvPostSrqRecv(MemorySegment srq, MemorySegment wr, MemorySegment badWr) {
        MemorySegment fn = op(ptr(srq.address() + SRQ_CONTEXT), OPS_POST_SRQ_RECV);
        try {
            return (int) POST.invokeExact(fn, srq.address(), wr.address(), badWr.address());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * verbs.h:2886 {@code ibv_poll_cq}: {@code cq->context->ops.poll_cq(cq, num_entries, wc)},
     * through {@code fn} from {@link #pollCqFunction}.
     *
     * @param wc an array of at least {@code numEntries} {@code struct ibv_wc}, allocated once
     * @return the number of completions written (0 when none), or a negative value on failure
     */
    public static int ibvPollCq(MemorySegment fn, MemorySegment cq, int numEntries, MemorySegment wc) {
        return ibvPollCq(fn, cq.address(), numEntries, wc.address());
    }

    /** As {@link #ibvPollCq(MemorySegment, MemorySegment, int, MemorySegment)}, the pointers as addresses. */
    public static int ibvPollCq(MemorySegment fn, long cq, int numEntries, long wc) {
        try {
            return (int) POLL_CQ.invokeExact(fn, cq, numEntries, wc);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** verbs.h:2900 {@code ibv_req_notify_cq}: {@code cq->context->ops.req_notify_cq(cq, solicited_only)}. */
    public static int ibvReqNotifyCq(MemorySegment cq, boolean solicitedOnly) {
        MemorySegment fn = op(ptr(cq.address() + CQ_CONTEXT), OPS_REQ_NOTIFY_CQ);
        try {
            return (int) REQ_NOTIFY_CQ.invokeExact(fn, cq, solicitedOnly ? 1 : 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * verbs.h:2616 {@code ibv_alloc_mw}: NULL with errno EOPNOTSUPP when the provider has no
     * {@code alloc_mw}, else {@code pd->context->ops.alloc_mw(pd, type)}, whose NULL leaves
     * the provider's errno; either way {@link NativeErrors#pointerErrno()} gives it.
     */
    public static MemorySegment ibvAllocMw(MemorySegment pd, int type) {
        MemorySegment fn = op(ptr(pd.address() + PD_CONTEXT), OPS_ALLOC_MW);
        if (fn.equals(MemorySegment.NULL)) {
            NativeErrors.setErrno(EOPNOTSUPP);
            return MemorySegment.NULL;
        }
        MemorySegment mw;
        try {
            mw = (MemorySegment) ALLOC_MW.invokeExact(fn, NativeErrors.captureState(), pd, type);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return mw.equals(MemorySegment.NULL) ? mw : mw.reinterpret(ibv_mw.layout().byteSize());
    }

    /** verbs.h:2633 {@code ibv_dealloc_mw}: {@code mw->context->ops.dealloc_mw(mw)}; returns 0 or an errno. */
    public static int ibvDeallocMw(MemorySegment mw) {
        MemorySegment fn = op(ptr(mw.address() + MW_CONTEXT), OPS_DEALLOC_MW);
        try {
            return (int) DEALLOC_MW.invokeExact(fn, mw);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** verbs.h:2641 {@code ibv_inc_rkey}: a new key with the low 8 bits (the key tag) incremented. */
    public static int ibvIncRkey(int rkey) {
        final int mask = 0xff;
        int newTag = (rkey + 1) & mask;
        return (rkey & ~mask) | newTag;
    }

    private static RuntimeException rethrow(Throwable t) {
        return NativeErrors.rethrow(t);
    }
}
