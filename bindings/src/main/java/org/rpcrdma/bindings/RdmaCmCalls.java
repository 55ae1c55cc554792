package org.rpcrdma.bindings;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.rpcrdma.bindings.ffi.rdmacm.RdmaCm;

/**
 * The librdmacm calls that can fail, each a static method named after the C function that
 * returns the C result as is: every {@code rdma_*} function here returns -1 (or NULL) and
 * sets errno, which the generated {@link RdmaCm} downcalls lose; these capture it, so
 * {@link NativeErrors#statusErrno(int)} or {@link NativeErrors#pointerErrno()} gives it.
 *
 * <p>Calls that cannot fail ({@code rdma_destroy_qp}, {@code rdma_destroy_event_channel},
 * {@code rdma_get_src_port}, {@code rdma_event_str}) are used straight from {@link RdmaCm}.
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
    private static final MethodHandle MIGRATE_ID = capture(RdmaCm.rdma_migrate_id$address(), RdmaCm.rdma_migrate_id$descriptor());
    private static final MethodHandle ACK_CM_EVENT = capture(RdmaCm.rdma_ack_cm_event$address(), RdmaCm.rdma_ack_cm_event$descriptor());

    private RdmaCmCalls() {
    }

    private static MethodHandle capture(MemorySegment address, FunctionDescriptor descriptor) {
        return NativeErrors.capturingDowncall(address, descriptor);
    }

    /**
     * {@code struct rdma_event_channel *rdma_create_event_channel(void)}; NULL with ENODEV
     * or ENOENT when the kernel has no RDMA CM ({@code /dev/infiniband/rdma_cm}).
     */
    public static MemorySegment rdmaCreateEventChannel() {
        try {
            return (MemorySegment) CREATE_EVENT_CHANNEL.invokeExact(NativeErrors.captureState());
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /**
     * {@code int rdma_create_id(struct rdma_event_channel *, struct rdma_cm_id **id, void *context,
     * enum rdma_port_space ps)}; {@code idOut} receives the new id.
     */
    public static int rdmaCreateId(MemorySegment channel, MemorySegment idOut, MemorySegment context, int ps) {
        try {
            return (int) CREATE_ID.invokeExact(NativeErrors.captureState(), channel, idOut, context, ps);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int rdma_destroy_id(struct rdma_cm_id *)}: destroy its QP first; blocks until its events are acked. */
    public static int rdmaDestroyId(MemorySegment id) {
        return IbvCalls.status1(DESTROY_ID, id);
    }

    /** {@code int rdma_bind_addr(struct rdma_cm_id *, struct sockaddr *)}. */
    public static int rdmaBindAddr(MemorySegment id, MemorySegment addr) {
        return IbvCalls.status2(BIND_ADDR, id, addr);
    }

    /**
     * {@code int rdma_resolve_addr(struct rdma_cm_id *, struct sockaddr *src, struct sockaddr *dst,
     * int timeout_ms)}; {@code src} may be NULL. Completion arrives as an ADDR_RESOLVED/ADDR_ERROR event.
     */
    public static int rdmaResolveAddr(MemorySegment id, MemorySegment src, MemorySegment dst, int timeoutMs) {
        try {
            return (int) RESOLVE_ADDR.invokeExact(NativeErrors.captureState(), id, src, dst, timeoutMs);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int rdma_resolve_route(struct rdma_cm_id *, int timeout_ms)}. */
    public static int rdmaResolveRoute(MemorySegment id, int timeoutMs) {
        return statusInt(RESOLVE_ROUTE, id, timeoutMs);
    }

    /**
     * {@code int rdma_create_qp(struct rdma_cm_id *, struct ibv_pd *, struct ibv_qp_init_attr *)};
     * the QP is then {@code id->qp}.
     */
    public static int rdmaCreateQp(MemorySegment id, MemorySegment pd, MemorySegment qpInitAttr) {
        try {
            return (int) CREATE_QP.invokeExact(NativeErrors.captureState(), id, pd, qpInitAttr);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int rdma_connect(struct rdma_cm_id *, struct rdma_conn_param *)}. */
    public static int rdmaConnect(MemorySegment id, MemorySegment connParam) {
        return IbvCalls.status2(CONNECT, id, connParam);
    }

    /** {@code int rdma_listen(struct rdma_cm_id *, int backlog)}. */
    public static int rdmaListen(MemorySegment id, int backlog) {
        return statusInt(LISTEN, id, backlog);
    }

    /** {@code int rdma_accept(struct rdma_cm_id *, struct rdma_conn_param *)}. */
    public static int rdmaAccept(MemorySegment id, MemorySegment connParam) {
        return IbvCalls.status2(ACCEPT, id, connParam);
    }

    /**
     * {@code int rdma_reject(struct rdma_cm_id *, const void *private_data, uint8_t private_data_len)}.
     *
     * @param privateDataLen 0..255 (the C parameter is a {@code uint8_t})
     */
    public static int rdmaReject(MemorySegment id, MemorySegment privateData, int privateDataLen) {
        if (privateDataLen < 0 || privateDataLen > 255) {
            throw new IllegalArgumentException("private_data_len must be 0..255: " + privateDataLen);
        }
        try {
            return (int) REJECT.invokeExact(NativeErrors.captureState(), id, privateData, (byte) privateDataLen);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }

    /** {@code int rdma_disconnect(struct rdma_cm_id *)}. */
    public static int rdmaDisconnect(MemorySegment id) {
        return IbvCalls.status1(DISCONNECT, id);
    }

    /**
     * {@code int rdma_migrate_id(struct rdma_cm_id *, struct rdma_event_channel *)}: the id's
     * events, pending ones too, come on the other channel from now on.
     */
    public static int rdmaMigrateId(MemorySegment id, MemorySegment channel) {
        return IbvCalls.status2(MIGRATE_ID, id, channel);
    }

    /**
     * {@code int rdma_get_cm_event(struct rdma_event_channel *, struct rdma_cm_event **event)}:
     * EAGAIN when the channel fd is non-blocking and nothing is pending. Ack every event
     * with {@link #rdmaAckCmEvent}.
     */
    public static int rdmaGetCmEvent(MemorySegment channel, MemorySegment eventOut) {
        return IbvCalls.status2(GET_CM_EVENT, channel, eventOut);
    }

    /** {@code int rdma_ack_cm_event(struct rdma_cm_event *)}. */
    public static int rdmaAckCmEvent(MemorySegment event) {
        return IbvCalls.status1(ACK_CM_EVENT, event);
    }

    private static int statusInt(MethodHandle h, MemorySegment a, int b) {
        try {
            return (int) h.invokeExact(NativeErrors.captureState(), a, b);
        } catch (Throwable t) {
            throw NativeErrors.rethrow(t);
        }
    }
}
