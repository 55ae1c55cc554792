package org.rpcrdma.bindings;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_port_attr;

/**
 * The libibverbs control calls that can fail, each a static method named after the C
 * function that returns the C result as is: a pointer (NULL on failure) or an {@code int}.
 * The errno of a failure is then {@link NativeErrors#pointerErrno()} or
 * {@link NativeErrors#statusErrno(int)}: every call here captures errno, which the
 * generated {@link IbVerbs} downcalls lose, through a handle built once from the generated
 * function's address and descriptor.
 *
 * <p>Calls that cannot fail (free, ack, *_str) are used straight from {@link IbVerbs}; the
 * data path is {@link VerbsInline}. Pointer results are raw: the caller
 * {@code reinterpret}s them to the struct it reads.
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
    private static final MethodHandle CREATE_SRQ = capture(IbVerbs.ibv_create_srq$address(), IbVerbs.ibv_create_srq$descriptor());
    private static final MethodHandle DESTROY_SRQ = capture(IbVerbs.ibv_destroy_srq$address(), IbVerbs.ibv_destroy_srq$descriptor());

    private IbvCalls() {
    }

    private static MethodHandle capture(MemorySegment address, FunctionDescriptor descriptor) {
        return NativeErrors.capturingDowncall(address, descriptor);
    }

    /**
     * {@code struct ibv_device **ibv_get_device_list(int *num_devices)}; free the result
     * with {@link IbVerbs#ibv_free_device_list}. rdma-core answers NULL/ENOSYS on a kernel
     * without RDMA support.
     */
    public static MemorySegment ibvGetDeviceList(MemorySegment numDevices) {
        try {
            return (MemorySegment) GET_DEVICE_LIST.invokeExact(NativeErrors.captureState(), numDevices);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code struct ibv_context *ibv_open_device(struct ibv_device *)}. */
    public static MemorySegment ibvOpenDevice(MemorySegment device) {
        return pointer1(OPEN_DEVICE, device);
    }

    /** {@code int ibv_close_device(struct ibv_context *)}. */
    public static int ibvCloseDevice(MemorySegment context) {
        return status1(CLOSE_DEVICE, context);
    }

    /** {@code int ibv_query_device(struct ibv_context *, struct ibv_device_attr *)}. */
    public static int ibvQueryDevice(MemorySegment context, MemorySegment deviceAttr) {
        return status2(QUERY_DEVICE, context, deviceAttr);
    }

    /**
     * {@code ibv_query_port} through the exported compat symbol, as verbs.h's
     * {@code ___ibv_query_port} does when the provider has no extended query_port: the
     * attribute struct is zeroed first, because that symbol fills only the fields of
     * {@code struct _compat_ibv_port_attr} (everything up to {@code flags}; not
     * {@code port_cap_flags2}).
     */
    public static int ibvQueryPort(MemorySegment context, int portNum, MemorySegment portAttr) {
        portAttr.asSlice(0, ibv_port_attr.layout().byteSize()).fill((byte) 0);
        try {
            return (int) QUERY_PORT.invokeExact(NativeErrors.captureState(), context, (byte) portNum, portAttr);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int ibv_query_gid(struct ibv_context *, uint8_t port_num, int index, union ibv_gid *)}. */
    public static int ibvQueryGid(MemorySegment context, int portNum, int index, MemorySegment gid) {
        try {
            return (int) QUERY_GID.invokeExact(NativeErrors.captureState(), context, (byte) portNum, index, gid);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code struct ibv_pd *ibv_alloc_pd(struct ibv_context *)}. */
    public static MemorySegment ibvAllocPd(MemorySegment context) {
        return pointer1(ALLOC_PD, context);
    }

    /** {@code int ibv_dealloc_pd(struct ibv_pd *)}. */
    public static int ibvDeallocPd(MemorySegment pd) {
        return status1(DEALLOC_PD, pd);
    }

    /**
     * {@code struct ibv_mr *ibv_reg_mr(struct ibv_pd *, void *addr, size_t length, int access)}:
     * the exported symbol, which verbs.h's {@code ibv_reg_mr} macro calls whenever
     * {@code IBV_ACCESS_OPTIONAL_RANGE} is not set (the only case the transport uses).
     */
    public static MemorySegment ibvRegMr(MemorySegment pd, MemorySegment addr, long length, int access) {
        try {
            return (MemorySegment) REG_MR.invokeExact(NativeErrors.captureState(), pd, addr, length, access);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int ibv_dereg_mr(struct ibv_mr *)}. */
    public static int ibvDeregMr(MemorySegment mr) {
        return status1(DEREG_MR, mr);
    }

    /** {@code struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *)}. */
    public static MemorySegment ibvCreateCompChannel(MemorySegment context) {
        return pointer1(CREATE_COMP_CHANNEL, context);
    }

    /** {@code int ibv_destroy_comp_channel(struct ibv_comp_channel *)}; EBUSY while CQs use it. */
    public static int ibvDestroyCompChannel(MemorySegment channel) {
        return status1(DESTROY_COMP_CHANNEL, channel);
    }

    /**
     * {@code struct ibv_cq *ibv_create_cq(struct ibv_context *, int cqe, void *cq_context,
     * struct ibv_comp_channel *channel, int comp_vector)}; {@code channel} may be NULL.
     */
    public static MemorySegment ibvCreateCq(MemorySegment context, int cqe, MemorySegment cqContext,
            MemorySegment channel, int compVector) {
        try {
            return (MemorySegment) CREATE_CQ.invokeExact(NativeErrors.captureState(), context, cqe, cqContext, channel,
                    compVector);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int ibv_destroy_cq(struct ibv_cq *)}. */
    public static int ibvDestroyCq(MemorySegment cq) {
        return status1(DESTROY_CQ, cq);
    }

    /**
     * {@code int ibv_get_cq_event(struct ibv_comp_channel *, struct ibv_cq **cq, void **cq_context)}:
     * -1 and errno on failure (EAGAIN when the channel fd is non-blocking and no event is
     * pending). Every event must later be acknowledged with {@link IbVerbs#ibv_ack_cq_events}.
     * One call per wake-up in event mode, so exact-typed and allocation-free.
     */
    public static int ibvGetCqEvent(MemorySegment channel, MemorySegment cqOut, MemorySegment cqContextOut) {
        try {
            return (int) GET_CQ_EVENT.invokeExact(NativeErrors.captureState(), channel, cqOut, cqContextOut);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code struct ibv_srq *ibv_create_srq(struct ibv_pd *, struct ibv_srq_init_attr *)}. */
    public static MemorySegment ibvCreateSrq(MemorySegment pd, MemorySegment srqInitAttr) {
        try {
            return (MemorySegment) CREATE_SRQ.invokeExact(NativeErrors.captureState(), pd, srqInitAttr);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int ibv_destroy_srq(struct ibv_srq *)}. */
    public static int ibvDestroySrq(MemorySegment srq) {
        return status1(DESTROY_SRQ, srq);
    }

    // Shared shapes: (ptr) -> ptr, (ptr) -> int, (ptr, ptr) -> int.

    private static MemorySegment pointer1(MethodHandle h, MemorySegment a) {
        try {
            return (MemorySegment) h.invokeExact(NativeErrors.captureState(), a);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    static int status1(MethodHandle h, MemorySegment a) {
        try {
            return (int) h.invokeExact(NativeErrors.captureState(), a);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    static int status2(MethodHandle h, MemorySegment a, MemorySegment b) {
        try {
            return (int) h.invokeExact(NativeErrors.captureState(), a, b);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }
}
