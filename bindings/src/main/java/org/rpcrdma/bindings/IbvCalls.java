package org.rpcrdma.bindings;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_port_attr;

/**
 * libibverbs control calls that report failure, with errno captured and every failure
 * raised as {@link NativeCallException} (function, errno, strerror). The generated
 * {@link IbVerbs} downcalls do not capture errno, so each call here is a capturing
 * downcall built once from the generated function's address and descriptor.
 *
 * <p>Methods are named after the C function. Pointer results are returned non-NULL (the
 * caller {@code reinterpret}s them to the struct size it reads); {@code int} results are
 * decoded by {@link NativeErrors#checkStatus}, which covers both the "returns errno" and
 * the "-1 and errno" conventions. Calls that cannot fail (ack, free, *_str) are used
 * straight from {@link IbVerbs}. None of these is on the data path: see {@link VerbsInline}.
 */
public final class IbvCalls {
    private static final MethodHandle GET_DEVICE_LIST = capture(IbVerbs.ibv_get_device_list$address(), IbVerbs.ibv_get_device_list$descriptor());
    private static final MethodHandle OPEN_DEVICE = capture(IbVerbs.ibv_open_device$address(), IbVerbs.ibv_open_device$descriptor());
    private static final MethodHandle CLOSE_DEVICE = capture(IbVerbs.ibv_close_device$address(), IbVerbs.ibv_close_device$descriptor());
    private static final MethodHandle QUERY_DEVICE = capture(IbVerbs.ibv_query_device$address(), IbVerbs.ibv_query_device$descriptor());
    private static final MethodHandle QUERY_PORT = capture(IbVerbs.ibv_query_port$address(), IbVerbs.ibv_query_port$descriptor());
    private static final MethodHandle QUERY_GID = capture(IbVerbs.ibv_query_gid$address(), IbVerbs.ibv_query_gid$descriptor());
    private static final MethodHandle ALLOC_PD = capture(IbVerbs.ibv_alloc_pd$address(), IbVerbs.ibv_alloc_pd$descriptor());
    private static final MethodHandle DEALLOC_PD = capture(IbVerbs.ibv_dealloc_pd$address(), IbVerbs.ibv_dealloc_pd$descriptor());
    private static final MethodHandle REG_MR = capture(IbVerbs.ibv_reg_mr$address(), IbVerbs.ibv_reg_mr$descriptor());
    private static final MethodHandle DEREG_MR = capture(IbVerbs.ibv_dereg_mr$address(), IbVerbs.ibv_dereg_mr$descriptor());
    private static final MethodHandle CREATE_COMP_CHANNEL = capture(IbVerbs.ibv_create_comp_channel$address(), IbVerbs.ibv_create_comp_channel$descriptor());
    private static final MethodHandle DESTROY_COMP_CHANNEL = capture(IbVerbs.ibv_destroy_comp_channel$address(), IbVerbs.ibv_destroy_comp_channel$descriptor());
    private static final MethodHandle CREATE_CQ = capture(IbVerbs.ibv_create_cq$address(), IbVerbs.ibv_create_cq$descriptor());
    private static final MethodHandle DESTROY_CQ = capture(IbVerbs.ibv_destroy_cq$address(), IbVerbs.ibv_destroy_cq$descriptor());
    private static final MethodHandle GET_CQ_EVENT = capture(IbVerbs.ibv_get_cq_event$address(), IbVerbs.ibv_get_cq_event$descriptor());
    private static final MethodHandle CREATE_QP = capture(IbVerbs.ibv_create_qp$address(), IbVerbs.ibv_create_qp$descriptor());
    private static final MethodHandle MODIFY_QP = capture(IbVerbs.ibv_modify_qp$address(), IbVerbs.ibv_modify_qp$descriptor());
    private static final MethodHandle QUERY_QP = capture(IbVerbs.ibv_query_qp$address(), IbVerbs.ibv_query_qp$descriptor());
    private static final MethodHandle DESTROY_QP = capture(IbVerbs.ibv_destroy_qp$address(), IbVerbs.ibv_destroy_qp$descriptor());
    private static final MethodHandle CREATE_SRQ = capture(IbVerbs.ibv_create_srq$address(), IbVerbs.ibv_create_srq$descriptor());
    private static final MethodHandle MODIFY_SRQ = capture(IbVerbs.ibv_modify_srq$address(), IbVerbs.ibv_modify_srq$descriptor());
    private static final MethodHandle QUERY_SRQ = capture(IbVerbs.ibv_query_srq$address(), IbVerbs.ibv_query_srq$descriptor());
    private static final MethodHandle DESTROY_SRQ = capture(IbVerbs.ibv_destroy_srq$address(), IbVerbs.ibv_destroy_srq$descriptor());
    private static final MethodHandle GET_ASYNC_EVENT = capture(IbVerbs.ibv_get_async_event$address(), IbVerbs.ibv_get_async_event$descriptor());

    private IbvCalls() {
    }

    private static MethodHandle capture(MemorySegment address, FunctionDescriptor descriptor) {
        return NativeErrors.capturingDowncall(address, descriptor);
    }

    /**
     * {@code struct ibv_device **ibv_get_device_list(int *num_devices)}; free the result
     * with {@link IbVerbs#ibv_free_device_list}. Note that rdma-core answers NULL/ENOSYS on
     * a kernel without RDMA support ({@link VerbsProbe} treats that as "no devices").
     */
    public static MemorySegment ibvGetDeviceList(MemorySegment numDevices) {
        MemorySegment s = NativeErrors.captureState();
        try {
            return NativeErrors.checkPointer("ibv_get_device_list", (MemorySegment) GET_DEVICE_LIST.invokeExact(s, numDevices), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code struct ibv_context *ibv_open_device(struct ibv_device *)}. */
    public static MemorySegment ibvOpenDevice(MemorySegment device) {
        return pointer1("ibv_open_device", OPEN_DEVICE, device);
    }

    /** {@code int ibv_close_device(struct ibv_context *)}. */
    public static void ibvCloseDevice(MemorySegment context) {
        status1("ibv_close_device", CLOSE_DEVICE, context);
    }

    /** {@code int ibv_query_device(struct ibv_context *, struct ibv_device_attr *)}. */
    public static void ibvQueryDevice(MemorySegment context, MemorySegment deviceAttr) {
        status2("ibv_query_device", QUERY_DEVICE, context, deviceAttr);
    }

    /**
     * {@code ibv_query_port} through the exported compat symbol, as verbs.h's
     * {@code ___ibv_query_port} does when the provider has no extended query_port: the
     * attribute struct is zeroed first, because that symbol fills only the fields of
     * {@code struct _compat_ibv_port_attr} (everything up to {@code flags}; not
     * {@code port_cap_flags2}).
     */
    public static void ibvQueryPort(MemorySegment context, int portNum, MemorySegment portAttr) {
        portAttr.asSlice(0, ibv_port_attr.layout().byteSize()).fill((byte) 0);
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("ibv_query_port", (int) QUERY_PORT.invokeExact(s, context, (byte) portNum, portAttr), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code int ibv_query_gid(struct ibv_context *, uint8_t port_num, int index, union ibv_gid *)}. */
    public static void ibvQueryGid(MemorySegment context, int portNum, int index, MemorySegment gid) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("ibv_query_gid", (int) QUERY_GID.invokeExact(s, context, (byte) portNum, index, gid), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code struct ibv_pd *ibv_alloc_pd(struct ibv_context *)}. */
    public static MemorySegment ibvAllocPd(MemorySegment context) {
        return pointer1("ibv_alloc_pd", ALLOC_PD, context);
    }

    /** {@code int ibv_dealloc_pd(struct ibv_pd *)}. */
    public static void ibvDeallocPd(MemorySegment pd) {
        status1("ibv_dealloc_pd", DEALLOC_PD, pd);
    }

    /**
     * {@code struct ibv_mr *ibv_reg_mr(struct ibv_pd *, void *addr, size_t length, int access)}:
     * the exported symbol, which verbs.h's {@code ibv_reg_mr} macro calls whenever
     * {@code IBV_ACCESS_OPTIONAL_RANGE} is not set (the only case the transport uses).
     */
    public static MemorySegment ibvRegMr(MemorySegment pd, MemorySegment addr, long length, int access) {
        MemorySegment s = NativeErrors.captureState();
        try {
            return NativeErrors.checkPointer("ibv_reg_mr", (MemorySegment) REG_MR.invokeExact(s, pd, addr, length, access), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code int ibv_dereg_mr(struct ibv_mr *)}. */
    public static void ibvDeregMr(MemorySegment mr) {
        status1("ibv_dereg_mr", DEREG_MR, mr);
    }

    /** {@code struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *)}. */
    public static MemorySegment ibvCreateCompChannel(MemorySegment context) {
        return pointer1("ibv_create_comp_channel", CREATE_COMP_CHANNEL, context);
    }

    /** {@code int ibv_destroy_comp_channel(struct ibv_comp_channel *)}; EBUSY while CQs use it. */
    public static void ibvDestroyCompChannel(MemorySegment channel) {
        status1("ibv_destroy_comp_channel", DESTROY_COMP_CHANNEL, channel);
    }

    /**
     * {@code struct ibv_cq *ibv_create_cq(struct ibv_context *, int cqe, void *cq_context,
     * struct ibv_comp_channel *channel, int comp_vector)}; {@code channel} may be NULL.
     */
    public static MemorySegment ibvCreateCq(MemorySegment context, int cqe, MemorySegment cqContext,
            MemorySegment channel, int compVector) {
        MemorySegment s = NativeErrors.captureState();
        try {
            return NativeErrors.checkPointer("ibv_create_cq",
                    (MemorySegment) CREATE_CQ.invokeExact(s, context, cqe, cqContext, channel, compVector), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code int ibv_destroy_cq(struct ibv_cq *)}. */
    public static void ibvDestroyCq(MemorySegment cq) {
        status1("ibv_destroy_cq", DESTROY_CQ, cq);
    }

    /**
     * {@code int ibv_get_cq_event(struct ibv_comp_channel *, struct ibv_cq **cq, void **cq_context)}:
     * -1 and errno on failure (EAGAIN when the channel fd is non-blocking and no event is
     * pending). Every event must later be acknowledged with {@link IbVerbs#ibv_ack_cq_events}.
     */
    public static void ibvGetCqEvent(MemorySegment channel, MemorySegment cqOut, MemorySegment cqContextOut) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("ibv_get_cq_event", (int) GET_CQ_EVENT.invokeExact(s, channel, cqOut, cqContextOut), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code struct ibv_qp *ibv_create_qp(struct ibv_pd *, struct ibv_qp_init_attr *)}; fills in the actual caps. */
    public static MemorySegment ibvCreateQp(MemorySegment pd, MemorySegment qpInitAttr) {
        return pointer2("ibv_create_qp", CREATE_QP, pd, qpInitAttr);
    }

    /** {@code int ibv_modify_qp(struct ibv_qp *, struct ibv_qp_attr *, int attr_mask)}. */
    public static void ibvModifyQp(MemorySegment qp, MemorySegment attr, int attrMask) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("ibv_modify_qp", (int) MODIFY_QP.invokeExact(s, qp, attr, attrMask), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code int ibv_query_qp(struct ibv_qp *, struct ibv_qp_attr *, int attr_mask, struct ibv_qp_init_attr *)}. */
    public static void ibvQueryQp(MemorySegment qp, MemorySegment attr, int attrMask, MemorySegment initAttr) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("ibv_query_qp", (int) QUERY_QP.invokeExact(s, qp, attr, attrMask, initAttr), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code int ibv_destroy_qp(struct ibv_qp *)}. */
    public static void ibvDestroyQp(MemorySegment qp) {
        status1("ibv_destroy_qp", DESTROY_QP, qp);
    }

    /** {@code struct ibv_srq *ibv_create_srq(struct ibv_pd *, struct ibv_srq_init_attr *)}. */
    public static MemorySegment ibvCreateSrq(MemorySegment pd, MemorySegment srqInitAttr) {
        return pointer2("ibv_create_srq", CREATE_SRQ, pd, srqInitAttr);
    }

    /** {@code int ibv_modify_srq(struct ibv_srq *, struct ibv_srq_attr *, int srq_attr_mask)}. */
    public static void ibvModifySrq(MemorySegment srq, MemorySegment srqAttr, int srqAttrMask) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("ibv_modify_srq", (int) MODIFY_SRQ.invokeExact(s, srq, srqAttr, srqAttrMask), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code int ibv_query_srq(struct ibv_srq *, struct ibv_srq_attr *)}. */
    public static void ibvQuerySrq(MemorySegment srq, MemorySegment srqAttr) {
        status2("ibv_query_srq", QUERY_SRQ, srq, srqAttr);
    }

    /** {@code int ibv_destroy_srq(struct ibv_srq *)}. */
    public static void ibvDestroySrq(MemorySegment srq) {
        status1("ibv_destroy_srq", DESTROY_SRQ, srq);
    }

    /**
     * {@code int ibv_get_async_event(struct ibv_context *, struct ibv_async_event *)}: -1
     * and errno on failure (EAGAIN on a non-blocking {@code async_fd}). Acknowledge each
     * event with {@link IbVerbs#ibv_ack_async_event}.
     */
    public static void ibvGetAsyncEvent(MemorySegment context, MemorySegment event) {
        status2("ibv_get_async_event", GET_ASYNC_EVENT, context, event);
    }

    // Shared shapes: (ptr) -> ptr, (ptr, ptr) -> ptr, (ptr) -> int, (ptr, ptr) -> int.

    private static MemorySegment pointer1(String function, MethodHandle h, MemorySegment a) {
        MemorySegment s = NativeErrors.captureState();
        try {
            return NativeErrors.checkPointer(function, (MemorySegment) h.invokeExact(s, a), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static MemorySegment pointer2(String function, MethodHandle h, MemorySegment a, MemorySegment b) {
        MemorySegment s = NativeErrors.captureState();
        try {
            return NativeErrors.checkPointer(function, (MemorySegment) h.invokeExact(s, a, b), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static void status1(String function, MethodHandle h, MemorySegment a) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus(function, (int) h.invokeExact(s, a), s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static void status2(String function, MethodHandle h, MemorySegment a, MemorySegment b) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus(function, (int) h.invokeExact(s, a, b), s);
        } catch (Throwable t) {
            throw rethrow(t);
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
