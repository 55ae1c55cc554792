package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.bindings.IbvCalls;
import org.rpcrdma.bindings.NativeErrors;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_context;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_device_attr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_port_attr;

/**
 * An opened RDMA device: owns one {@code ibv_context} (unless borrowed from librdmacm, see
 * {@link CmId#device()}). Close it last, after everything created from it.
 * Thread-safe: the context-level verbs are.
 */
public final class Device extends Resource {
    private static final int ENOSYS = 38;

    private final MemorySegment context;
    private final String name;
    private final boolean owned;

    private Device(MemorySegment context, String name, boolean owned) {
        this.context = context;
        this.name = name;
        this.owned = owned;
        opened();
    }

    /** Wraps a context librdmacm owns; closing the wrapper does not close the context. */
    static Device borrowed(MemorySegment context) {
        MemorySegment ctx = context.reinterpret(ibv_context.layout().byteSize());
        MemorySegment dev = ibv_context.device(ctx);
        return new Device(ctx, NativeChecks.cString(IbVerbs.ibv_get_device_name(dev)), false);
    }

    /**
     * Another wrapper of this context that librdmacm owns, closed on its own: for an owner
     * that outlives the cm_id this wrapper came with (closing that id closes this wrapper,
     * not the context, which librdmacm keeps for the process).
     */
    public Device borrow() {
        checkOpen();
        if (owned) {
            throw new IllegalStateException(name + ": an opened device is not lent; its owner closes the context");
        }
        return new Device(context, name, false);
    }

    /** Names of the RDMA devices present (empty when the kernel has no RDMA support). */
    public static List<String> list() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment array = IbvCalls.ibvGetDeviceList(num);
            if (array.equals(MemorySegment.NULL)) {
                int errno = NativeErrors.pointerErrno();
                if (errno == ENOSYS) {
                    return List.of();
                }
                throw NativeChecks.failure("ibv_get_device_list", errno);
            }
            try {
                int n = num.get(ValueLayout.JAVA_INT, 0);
                MemorySegment devs = array.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
                List<String> names = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    names.add(NativeChecks.cString(IbVerbs.ibv_get_device_name(devs.getAtIndex(ValueLayout.ADDRESS, i))));
                }
                return names;
            } finally {
                IbVerbs.ibv_free_device_list(array);
            }
        }
    }

    /**
     * Opens the device called {@code name} (e.g. {@code "rxe0"}).
     *
     * @throws IllegalArgumentException if there is no such device
     */
    public static Device open(String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment array = NativeChecks.pointer("ibv_get_device_list", IbvCalls.ibvGetDeviceList(num), 0);
            try {
                int n = num.get(ValueLayout.JAVA_INT, 0);
                MemorySegment devs = array.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
                for (int i = 0; i < n; i++) {
                    MemorySegment dev = devs.getAtIndex(ValueLayout.ADDRESS, i);
                    if (name.equals(NativeChecks.cString(IbVerbs.ibv_get_device_name(dev)))) {
                        MemorySegment ctx = NativeChecks.pointer("ibv_open_device", IbvCalls.ibvOpenDevice(dev), ibv_context.layout().byteSize());
                        return new Device(ctx, name, true);
                    }
                }
            } finally {
                IbVerbs.ibv_free_device_list(array);
            }
        }
        throw new IllegalArgumentException("no RDMA device named " + name + " (present: " + list() + ")");
    }

    /** The device name, e.g. {@code rxe0}. */
    public String name() {
        return name;
    }

    /** The {@code struct ibv_context *}; valid while this object is open. */
    public MemorySegment handle() {
        checkOpen();
        return context;
    }

    /** {@code ibv_query_port}. */
    public PortAttributes queryPort(int port) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_port_attr.layout());
            NativeChecks.status("ibv_query_port", IbvCalls.ibvQueryPort(context, port, attr));
            return new PortAttributes(ibv_port_attr.state(attr), ibv_port_attr.max_mtu(attr),
                    ibv_port_attr.active_mtu(attr), ibv_port_attr.gid_tbl_len(attr),
                    Short.toUnsignedInt(ibv_port_attr.lid(attr)));
        }
    }

    /**
     * {@code ibv_query_device}: the limits that size RDMA Read/Write use (RFC 8166 §3.4:
     * the responder does every RDMA Read, within the depths both ends agreed at connect).
     */
    public Limits queryLimits() {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_device_attr.layout());
            NativeChecks.status("ibv_query_device", IbvCalls.ibvQueryDevice(context, attr));
            return new Limits(ibv_device_attr.max_qp_wr(attr), ibv_device_attr.max_sge(attr),
                    ibv_device_attr.max_qp_rd_atom(attr), ibv_device_attr.max_qp_init_rd_atom(attr),
                    ibv_device_attr.max_mw(attr), ibv_device_attr.max_cqe(attr));
        }
    }

    /** {@code phys_port_cnt} of {@code ibv_query_device}: ports are numbered 1 to this. */
    public int portCount() {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_device_attr.layout());
            NativeChecks.status("ibv_query_device", IbvCalls.ibvQueryDevice(context, attr));
            return Byte.toUnsignedInt(ibv_device_attr.phys_port_cnt(attr));
        }
    }

    /**
     * Device limits: work requests per queue, SGEs per request, RDMA Reads a QP may have
     * outstanding as target (responder resources) and as initiator (initiator depth), and
     * how many memory windows it can allocate (0: none, use per-RPC registration), entries
     * per completion queue.
     */
    public record Limits(int maxQpWr, int maxSge, int maxQpRdAtom, int maxQpInitRdAtom, int maxMw, int maxCqe) {}

    /** {@code ibv_query_gid}: the 16 raw GID bytes at {@code index} of {@code port}'s table. */
    public byte[] queryGid(int port, int index) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment gid = arena.allocate(16, 8);
            NativeChecks.status("ibv_query_gid", IbvCalls.ibvQueryGid(context, port, index, gid));
            return gid.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    /** Allocates a protection domain on this device. */
    public ProtectionDomain allocateProtectionDomain() {
        checkOpen();
        return new ProtectionDomain(this);
    }

    /** Creates a completion channel on this device. */
    public CompletionChannel createCompletionChannel() {
        checkOpen();
        return new CompletionChannel(this);
    }

    /**
     * Creates a completion queue of at least {@code capacity} entries, reporting events to
     * {@code channel} (null for a purely polled CQ).
     */
    public CompletionQueue createCompletionQueue(int capacity, CompletionChannel channel) {
        checkOpen();
        return new CompletionQueue(this, capacity, channel);
    }

    @Override
    void release() {
        if (owned) {
            NativeChecks.status("ibv_close_device", IbvCalls.ibvCloseDevice(context));
        }
    }

    /** The subset of {@code struct ibv_port_attr} the transport uses; mtu values are enum ibv_mtu. */
    public record PortAttributes(int state, int maxMtu, int activeMtu, int gidTableLength, int lid) {
        /** IBV_PORT_ACTIVE. */
        public boolean active() {
            return state == IbVerbs.IBV_PORT_ACTIVE();
        }

        /** The active MTU in bytes (enum ibv_mtu 1..5 = 256..4096). */
        public int activeMtuBytes() {
            return 128 << activeMtu;
        }
    }
}
