package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import org.rpcrdma.bindings.RdmaCmCalls;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_qp_cap;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_qp_init_attr;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.rdmacm.RdmaCm;
import org.rpcrdma.bindings.ffi.rdmacm.rdma_addr;
import org.rpcrdma.bindings.ffi.rdmacm.rdma_cm_id;
import org.rpcrdma.bindings.ffi.rdmacm.rdma_conn_param;
import org.rpcrdma.bindings.ffi.rdmacm.rdma_route;
import org.rpcrdma.bindings.ffi.rdmacm.sockaddr_in;

/**
 * An {@code rdma_cm_id} (RC, RDMA_PS_TCP). The asynchronous steps (resolveAddress,
 * resolveRoute, connect, accept, disconnect) complete with an event on its
 * {@link EventChannel}. The id owns its QP ({@link #createQueuePair}) and, through
 * librdmacm, the device context behind {@link #device()}: close the QP, CQs, PD (and
 * channel) made on that device before closing the id. Not thread-safe.
 */
public final class CmId extends Resource {
    private static final short AF_INET = 2;
    private static final short AF_INET6 = 10;

    /** The channel its events come on (changed only by {@link #migrate}). */
    private volatile EventChannel channel;
    private final MemorySegment id;
    private Device device;
    private QueuePair qp;

    CmId(EventChannel channel) {
        this.channel = channel;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            NativeChecks.status("rdma_create_id", RdmaCmCalls.rdmaCreateId(channel.handle(), out, MemorySegment.NULL, RdmaCm.RDMA_PS_TCP()));
            this.id = out.get(ValueLayout.ADDRESS, 0).reinterpret(rdma_cm_id.layout().byteSize());
        }
        channel.register(this);
        opened();
    }

    /** The new id of a CONNECT_REQUEST (already created by librdmacm). */
    CmId(EventChannel channel, MemorySegment newId) {
        this.channel = channel;
        this.id = newId.reinterpret(rdma_cm_id.layout().byteSize());
        channel.register(this);
        opened();
    }

    MemorySegment rawHandle() {
        return id;
    }

    /** The {@code struct rdma_cm_id *}. */
    public MemorySegment handle() {
        checkOpen();
        return id;
    }

    public EventChannel channel() {
        return channel;
    }

    /**
     * The device this id is bound to (after address resolution, bind to a local RDMA
     * address, or for a CONNECT_REQUEST id); its context belongs to librdmacm, so closing
     * the returned object is optional and closes nothing native. Null while unbound.
     */
    public Device device() {
        checkOpen();
        if (device == null) {
            MemorySegment verbs = rdma_cm_id.verbs(id);
            if (!verbs.equals(MemorySegment.NULL)) {
                device = Device.borrowed(verbs);
            }
        }
        return device;
    }

    /** The QP created on this id, or null. */
    public QueuePair queuePair() {
        return qp;
    }

    private static MemorySegment sockaddr(Arena arena, InetSocketAddress address) {
        if (!(address.getAddress() instanceof Inet4Address v4)) {
            throw new IllegalArgumentException("IPv4 only for now: " + address);
        }
        MemorySegment sa = arena.allocate(sockaddr_in.layout());
        sockaddr_in.sin_family(sa, AF_INET);
        // sin_port and sin_addr are in network byte order
        sa.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), sockaddr_in.sin_port$offset(), (short) address.getPort());
        MemorySegment.copy(v4.getAddress(), 0, sa, ValueLayout.JAVA_BYTE, sockaddr_in.sin_addr$offset(), 4);
        return sa;
    }

    /** rdma_resolve_addr; completes with ADDR_RESOLVED or ADDR_ERROR. {@code source} may be null. */
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, int timeoutMillis) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            NativeChecks.status("rdma_resolve_addr", RdmaCmCalls.rdmaResolveAddr(id,
                    source == null ? MemorySegment.NULL : sockaddr(arena, source), sockaddr(arena, destination), timeoutMillis));
        }
    }

    /** rdma_resolve_route; completes with ROUTE_RESOLVED or ROUTE_ERROR. */
    public void resolveRoute(int timeoutMillis) {
        checkOpen();
        NativeChecks.status("rdma_resolve_route", RdmaCmCalls.rdmaResolveRoute(id, timeoutMillis));
    }

    /** rdma_bind_addr (synchronous). Port 0 picks a free port: see {@link #localPort()}. */
    public void bind(InetSocketAddress address) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            NativeChecks.status("rdma_bind_addr", RdmaCmCalls.rdmaBindAddr(id, sockaddr(arena, address)));
        }
    }

    /** The bound local port (host order). */
    public int localPort() {
        checkOpen();
        return Short.toUnsignedInt(Short.reverseBytes(RdmaCm.rdma_get_src_port(id)));
    }

    /**
     * The peer's address, as {@code rdma_get_peer_addr} gives it ({@code route.addr.dst_addr}):
     * known once the address is resolved (client) or for a CONNECT_REQUEST id (server);
     * null for a family other than IPv4 / IPv6 (none yet).
     */
    public InetSocketAddress peerAddress() {
        checkOpen();
        MemorySegment sa = rdma_addr.dst_storage(rdma_route.addr(rdma_cm_id.route(id)));
        int family = Short.toUnsignedInt(sa.get(ValueLayout.JAVA_SHORT, 0)); // sa_family_t, host order
        int length = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
        if (length == 0) {
            return null;
        }
        // sin_port and sin6_port: offset 2, network order; sin_addr at 4, sin6_addr at 8
        int port = Short.toUnsignedInt(sa.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 2));
        byte[] addr = sa.asSlice(family == AF_INET ? 4 : 8, length).toArray(ValueLayout.JAVA_BYTE);
        try {
            return new InetSocketAddress(java.net.InetAddress.getByAddress(addr), port);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e); // 4 or 16 bytes: not thrown
        }
    }

    /** rdma_listen; connection requests arrive as CONNECT_REQUEST events. */
    public void listen(int backlog) {
        checkOpen();
        NativeChecks.status("rdma_listen", RdmaCmCalls.rdmaListen(id, backlog));
    }

    /**
     * rdma_create_qp: an RC QP on {@code pd} with the given CQs (and SRQ, or null), owned by
     * this id. All send requests are signaled only when the request says so (sq_sig_all 0).
     */
    public QueuePair createQueuePair(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                                     SharedReceiveQueue srq, QueuePairCapabilities caps) {
        checkOpen();
        if (qp != null) {
            throw new IllegalStateException("this id already has a queue pair");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment init = arena.allocate(ibv_qp_init_attr.layout());
            ibv_qp_init_attr.send_cq(init, sendCq.handle());
            ibv_qp_init_attr.recv_cq(init, recvCq.handle());
            ibv_qp_init_attr.srq(init, srq == null ? MemorySegment.NULL : srq.handle());
            ibv_qp_init_attr.qp_type(init, IbVerbs.IBV_QPT_RC());
            ibv_qp_init_attr.sq_sig_all(init, 0);
            MemorySegment cap = ibv_qp_init_attr.cap(init);
            ibv_qp_cap.max_send_wr(cap, caps.maxSendWr());
            ibv_qp_cap.max_recv_wr(cap, srq == null ? caps.maxRecvWr() : 0);
            ibv_qp_cap.max_send_sge(cap, caps.maxSendSge());
            ibv_qp_cap.max_recv_sge(cap, srq == null ? caps.maxRecvSge() : 0);
            ibv_qp_cap.max_inline_data(cap, caps.maxInlineData());
            NativeChecks.status("rdma_create_qp", RdmaCmCalls.rdmaCreateQp(id, pd.handle(), init));
        }
        try {
            qp = new QueuePair(this, pd, sendCq, recvCq, srq, rdma_cm_id.qp(id));
        } catch (RuntimeException e) {
            RdmaCm.rdma_destroy_qp(id);
            throw e;
        }
        return qp;
    }

    void queuePairClosed(QueuePair closed) {
        if (qp == closed) {
            qp = null;
        }
    }

    private MemorySegment connParam(Arena arena, ConnectionParameters p) {
        MemorySegment cp = arena.allocate(rdma_conn_param.layout());
        byte[] data = p.privateData();
        if (data.length > 0) {
            MemorySegment d = arena.allocate(data.length);
            MemorySegment.copy(data, 0, d, ValueLayout.JAVA_BYTE, 0, data.length);
            rdma_conn_param.private_data(cp, d);
            rdma_conn_param.private_data_len(cp, (byte) data.length);
        }
        rdma_conn_param.responder_resources(cp, (byte) p.responderResources());
        rdma_conn_param.initiator_depth(cp, (byte) p.initiatorDepth());
        rdma_conn_param.retry_count(cp, (byte) p.retryCount());
        rdma_conn_param.rnr_retry_count(cp, (byte) p.rnrRetryCount());
        rdma_conn_param.flow_control(cp, (byte) 1);
        return cp;
    }

    /** rdma_connect (after ROUTE_RESOLVED and createQueuePair); completes with ESTABLISHED, REJECTED, ... */
    public void connect(ConnectionParameters parameters) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            NativeChecks.status("rdma_connect", RdmaCmCalls.rdmaConnect(id, connParam(arena, parameters)));
        }
    }

    /** rdma_accept of a CONNECT_REQUEST id; ESTABLISHED follows on this id. */
    public void accept(ConnectionParameters parameters) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            NativeChecks.status("rdma_accept", RdmaCmCalls.rdmaAccept(id, connParam(arena, parameters)));
        }
    }

    /** rdma_reject with optional private data; the id must still be closed. */
    public void reject(byte[] privateData) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment d = MemorySegment.NULL;
            int len = privateData == null ? 0 : privateData.length;
            if (len > 0) {
                d = arena.allocate(len);
                MemorySegment.copy(privateData, 0, d, ValueLayout.JAVA_BYTE, 0, len);
            }
            NativeChecks.status("rdma_reject", RdmaCmCalls.rdmaReject(id, d, len));
        }
    }

    /**
     * rdma_migrate_id: this id's events, those not yet read too, come on {@code to} from now
     * on (the old channel may then be closed). Not while a thread waits for this id's events
     * on the old channel.
     */
    public void migrate(EventChannel to) {
        checkOpen();
        NativeChecks.status("rdma_migrate_id", RdmaCmCalls.rdmaMigrateId(id, to.handle()));
        EventChannel from = channel;
        to.register(this);
        channel = to;
        from.unregister(id.address());
    }

    /** rdma_disconnect; both sides then see DISCONNECTED, and posted work flushes. */
    public void disconnect() {
        checkOpen();
        NativeChecks.status("rdma_disconnect", RdmaCmCalls.rdmaDisconnect(id));
    }

    @Override
    void release() {
        try {
            if (qp != null) {
                qp.close();
            }
            if (device != null) {
                device.close();
            }
        } finally {
            channel.unregister(id.address());
            NativeChecks.status("rdma_destroy_id", RdmaCmCalls.rdmaDestroyId(id));
        }
    }
}
