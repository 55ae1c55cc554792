package org.rpcrdma.bindings;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.rpcrdma.bindings.ffi.rdmacm.RdmaCm;

/**
 * librdmacm calls that report failure, with errno captured: every {@code rdma_*} function
 * returns -1 (or NULL) and sets errno, which the generated {@link RdmaCm} downcalls lose.
 * Each call here is a capturing downcall built once from the generated address and
 * descriptor; a failure raises {@link NativeCallException} (function, errno, strerror).
 *
 * <p>Methods are named after the C function. Calls that cannot fail
 * ({@code rdma_destroy_qp}, {@code rdma_destroy_event_channel}, {@code rdma_get_src_port},
 * {@code rdma_event_str}) are used straight from {@link RdmaCm}. Note that
 * {@code rdma_get_src_port}/{@code rdma_get_dst_port} return the port in network byte
 * order (librdmacm returns {@code sin_port} as is, a {@code __be16}, despite the
 * {@code uint16_t} in the header): {@code Short.reverseBytes} gives the number.
 */
public final class RdmaCmCalls {
    private static final MethodHandle CREATE_EVENT_CHANNEL = capture(RdmaCm.rdma_create_event_channel$address(), RdmaCm.rdma_create_event_channel$descriptor());
    private static final MethodHandle CREATE_ID = capture(RdmaCm.rdma_create_id$address(), RdmaCm.rdma_create_id$descriptor());
    private static final MethodHandle DESTROY_ID = capture(RdmaCm.rdma_destroy_id$address(), RdmaCm.rdma_destroy_id$descriptor());
    private static final MethodHandle BIND_ADDR = capture(RdmaCm.rdma_bind_addr$address(), RdmaCm.rdma_bind_addr$descriptor());
    private static final MethodHandle RESOLVE_ADDR = capture(RdmaCm.rdma_resolve_addr$address(), RdmaCm.rdma_resolve_addr$descriptor());
    private static final MethodHandle RESOLVE_ROUTE = capture(RdmaCm.rdma_resolve_route$address(), RdmaCm.rdma_resolve_route$descriptor());
    private static final MethodHandle CREATE_QP = capture(RdmaCm.rdma_create_qp$address(), RdmaCm.rdma_create_qp$descriptor());
    private static final MethodHandle CONNECT = capture(RdmaCm.rdma_connect$address(), RdmaCm.rdma_connect$descriptor());
    private static final MethodHandle LISTEN = capture(RdmaCm.rdma_listen$address(), RdmaCm.rdma_listen$descriptor());
    private static final MethodHandle ACCEPT = capture(RdmaCm.rdma_accept$address(), RdmaCm.rdma_accept$descriptor());
    private static final MethodHandle REJECT = capture(RdmaCm.rdma_reject$address(), RdmaCm.rdma_reject$descriptor());
    private static final MethodHandle DISCONNECT = capture(RdmaCm.rdma_disconnect$address(), RdmaCm.rdma_disconnect$descriptor());
    private static final MethodHandle GET_CM_EVENT = capture(RdmaCm.rdma_get_cm_event$address(), RdmaCm.rdma_get_cm_event$descriptor());
    private static final MethodHandle ACK_CM_EVENT = capture(RdmaCm.rdma_ack_cm_event$address(), RdmaCm.rdma_ack_cm_event$descriptor());
    private static final MethodHandle SET_OPTION = capture(RdmaCm.rdma_set_option$address(), RdmaCm.rdma_set_option$descriptor());
    private static final MethodHandle MIGRATE_ID = capture(RdmaCm.rdma_migrate_id$address(), RdmaCm.rdma_migrate_id$descriptor());

    private RdmaCmCalls() {
    }

    private static MethodHandle capture(MemorySegment address, FunctionDescriptor descriptor) {
        return NativeErrors.capturingDowncall(address, descriptor);
    }

    /**
     * {@code struct rdma_event_channel *rdma_create_event_channel(void)}; fails with ENODEV
     * or ENOENT when the kernel has no RDMA CM ({@code /dev/infiniband/rdma_cm}).
     */
    public static MemorySegment rdmaCreateEventChannel() {
        MemorySegment s = NativeErrors.captureState();
        try {
            return NativeErrors.checkPointer("rdma_create_event_channel", (MemorySegment) CREATE_EVENT_CHANNEL.invokeExact(s), s);
        } catch (Throwable t) {
            throw IbvCalls.rethrow(t);
        }
    }

    /**
     * {@code int rdma_create_id(struct rdma_event_channel *, struct rdma_cm_id **id, void *context,
     * enum rdma_port_space ps)}; {@code idOut} receives the new id.
     */
    public static void rdmaCreateId(MemorySegment channel, MemorySegment idOut, MemorySegment context, int ps) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("rdma_create_id", (int) CREATE_ID.invokeExact(s, channel, idOut, context, ps), s);
        } catch (Throwable t) {
            throw IbvCalls.rethrow(t);
        }
    }

    /** {@code int rdma_destroy_id(struct rdma_cm_id *)}: destroy its QP first; blocks until its events are acked. */
    public static void rdmaDestroyId(MemorySegment id) {
        status1("rdma_destroy_id", DESTROY_ID, id);
    }

    /** {@code int rdma_bind_addr(struct rdma_cm_id *, struct sockaddr *)}. */
    public static void rdmaBindAddr(MemorySegment id, MemorySegment addr) {
        status2("rdma_bind_addr", BIND_ADDR, id, addr);
    }

    /**
     * {@code int rdma_resolve_addr(struct rdma_cm_id *, struct sockaddr *src, struct sockaddr *dst,
     * int timeout_ms)}; {@code src} may be NULL. Completion arrives as an ADDR_RESOLVED/ADDR_ERROR event.
     */
    public static void rdmaResolveAddr(MemorySegment id, MemorySegment src, MemorySegment dst, int timeoutMs) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("rdma_resolve_addr", (int) RESOLVE_ADDR.invokeExact(s, id, src, dst, timeoutMs), s);
        } catch (Throwable t) {
            throw IbvCalls.rethrow(t);
        }
    }

    /** {@code int rdma_resolve_route(struct rdma_cm_id *, int timeout_ms)}. */
    public static void rdmaResolveRoute(MemorySegment id, int timeoutMs) {
        statusInt("rdma_resolve_route", RESOLVE_ROUTE, id, timeoutMs);
    }

    /**
     * {@code int rdma_create_qp(struct rdma_cm_id *, struct ibv_pd *, struct ibv_qp_init_attr *)};
     * the QP is then {@code id->qp}.
     */
    public static void rdmaCreateQp(MemorySegment id, MemorySegment pd, MemorySegment qpInitAttr) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("rdma_create_qp", (int) CREATE_QP.invokeExact(s, id, pd, qpInitAttr), s);
        } catch (Throwable t) {
            throw IbvCalls.rethrow(t);
        }
    }

    /** {@code int rdma_connect(struct rdma_cm_id *, struct rdma_conn_param *)}. */
    public static void rdmaConnect(MemorySegment id, MemorySegment connParam) {
        status2("rdma_connect", CONNECT, id, connParam);
    }

    /** {@code int rdma_listen(struct rdma_cm_id *, int backlog)}. */
    public static void rdmaListen(MemorySegment id, int backlog) {
        statusInt("rdma_listen", LISTEN, id, backlog);
    }

    /** {@code int rdma_accept(struct rdma_cm_id *, struct rdma_conn_param *)}. */
    public static void rdmaAccept(MemorySegment id, MemorySegment connParam) {
        status2("rdma_accept", ACCEPT, id, connParam);
    }

    /**
     * {@code int rdma_reject(struct rdma_cm_id *, const void *private_data, uint8_t private_data_len)}.
     *
     * @param privateDataLen 0..255 (the C parameter is a {@code uint8_t})
     */
    public static void rdmaReject(MemorySegment id, MemorySegment privateData, int privateDataLen) {
        if (privateDataLen < 0 || privateDataLen > 255) {
            throw new IllegalArgumentException("private_data_len must be 0..255: " + privateDataLen);
        }
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("rdma_reject", (int) REJECT.invokeExact(s, id, privateData, (byte) privateDataLen), s);
        } catch (Throwable t) {
            throw IbvCalls.rethrow(t);
        }
    }

    /** {@code int rdma_disconnect(struct rdma_cm_id *)}. */
    public static void rdmaDisconnect(MemorySegment id) {
        status1("rdma_disconnect", DISCONNECT, id);
    }

    /**
     * {@code int rdma_get_cm_event(struct rdma_event_channel *, struct rdma_cm_event **event)}:
     * EAGAIN when the channel fd is non-blocking and nothing is pending. Ack every event
     * with {@link #rdmaAckCmEvent}.
     */
    public static void rdmaGetCmEvent(MemorySegment channel, MemorySegment eventOut) {
        status2("rdma_get_cm_event", GET_CM_EVENT, channel, eventOut);
    }

    /** {@code int rdma_ack_cm_event(struct rdma_cm_event *)}. */
    public static void rdmaAckCmEvent(MemorySegment event) {
        status1("rdma_ack_cm_event", ACK_CM_EVENT, event);
    }

    /** {@code int rdma_set_option(struct rdma_cm_id *, int level, int optname, void *optval, size_t optlen)}. */
    public static void rdmaSetOption(MemorySegment id, int level, int optname, MemorySegment optval, long optlen) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus("rdma_set_option", (int) SET_OPTION.invokeExact(s, id, level, optname, optval, optlen), s);
        } catch (Throwable t) {
            throw IbvCalls.rethrow(t);
        }
    }

    /** {@code int rdma_migrate_id(struct rdma_cm_id *, struct rdma_event_channel *)}; NULL channel = synchronous. */
    public static void rdmaMigrateId(MemorySegment id, MemorySegment channel) {
        status2("rdma_migrate_id", MIGRATE_ID, id, channel);
    }

    private static void status1(String function, MethodHandle h, MemorySegment a) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus(function, (int) h.invokeExact(s, a), s);
        } catch (Throwable t) {
            throw IbvCalls.rethrow(t);
        }
    }

    private static void status2(String function, MethodHandle h, MemorySegment a, MemorySegment b) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus(function, (int) h.invokeExact(s, a, b), s);
        } catch (Throwable t) {
            throw IbvCalls.rethrow(t);
        }
    }

    private static void statusInt(String function, MethodHandle h, MemorySegment a, int b) {
        MemorySegment s = NativeErrors.captureState();
        try {
            NativeErrors.checkStatus(function, (int) h.invokeExact(s, a, b), s);
        } catch (Throwable t) {
            throw IbvCalls.rethrow(t);
        }
    }
}
