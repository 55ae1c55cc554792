package org.rpcrdma.bindings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_device_attr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_gid;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_mr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_port_attr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_qp;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_qp_attr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_qp_cap;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_qp_init_attr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_recv_wr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_sge;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq_attr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq_init_attr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_wc;
import org.rpcrdma.bindings.ffi.rdmacm.RdmaCm;
import org.rpcrdma.bindings.ffi.rdmacm.sockaddr_in;

/**
 * The bindings' own control-path invokers and inlines against a real device (Soft-RoCE in
 * the VM harness): every IbvCalls/RdmaCmCalls call the transport makes, in order, plus a
 * receive posted through VerbsInline and an empty poll. Traffic is the verbs layer's test.
 * Needs a device: fails, never skips, without one.
 */
@Tag("verbs")
class ControlPathVerbsTest {

    @Test
    void everyControlCallWorksOnARealDevice() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = ptr(IbvCalls.ibvGetDeviceList(num));
            int n = num.get(ValueLayout.JAVA_INT, 0);
            assertTrue(n > 0, "no RDMA device: this test runs in the Soft-RoCE VM");
            MemorySegment dev = list.reinterpret(8L * n).getAtIndex(ValueLayout.ADDRESS, 0);
            MemorySegment ctx = ptr(IbvCalls.ibvOpenDevice(dev));
            IbVerbs.ibv_free_device_list(list);
            try {
                MemorySegment devAttr = arena.allocate(ibv_device_attr.layout());
                ok(IbvCalls.ibvQueryDevice(ctx, devAttr));
                assertTrue(ibv_device_attr.max_qp_wr(devAttr) > 0);

                MemorySegment port = arena.allocate(ibv_port_attr.layout());
                ok(IbvCalls.ibvQueryPort(ctx, 1, port));
                assertEquals(IbVerbs.IBV_PORT_ACTIVE(), ibv_port_attr.state(port));
                assertTrue(ibv_port_attr.active_mtu(port) >= IbVerbs.IBV_MTU_256());
                assertTrue(NativeErrors.statusErrno(IbvCalls.ibvQueryPort(ctx, 9, port)) > 0, "port 9 does not exist");

                MemorySegment gid = arena.allocate(ibv_gid.layout());
                ok(IbvCalls.ibvQueryGid(ctx, 1, 0, gid));
                assertNotEquals(0L, gid.get(ValueLayout.JAVA_LONG, 0) | gid.get(ValueLayout.JAVA_LONG, 8));

                controlObjects(arena, ctx);
            } finally {
                ok(IbvCalls.ibvCloseDevice(ctx));
            }
        }
    }

    private static void controlObjects(Arena arena, MemorySegment ctx) {
        MemorySegment pd = ptr(IbvCalls.ibvAllocPd(ctx));
        MemorySegment buf = arena.allocate(4096, 4096);
        int access = IbVerbs.IBV_ACCESS_LOCAL_WRITE() | IbVerbs.IBV_ACCESS_REMOTE_READ()
                | IbVerbs.IBV_ACCESS_REMOTE_WRITE();
        MemorySegment mr = ptr(IbvCalls.ibvRegMr(pd, buf, buf.byteSize(), access)).reinterpret(ibv_mr.layout().byteSize());
        assertEquals(buf.address(), ibv_mr.addr(mr).address());
        MemorySegment channel = ptr(IbvCalls.ibvCreateCompChannel(ctx));
        MemorySegment cq = ptr(IbvCalls.ibvCreateCq(ctx, 16, MemorySegment.NULL, channel, 0));
        // EBUSY: a CQ still uses it
        assertEquals(16, NativeErrors.statusErrno(IbvCalls.ibvDestroyCompChannel(channel)));

        MemorySegment init = arena.allocate(ibv_qp_init_attr.layout());
        ibv_qp_init_attr.send_cq(init, cq);
        ibv_qp_init_attr.recv_cq(init, cq);
        ibv_qp_init_attr.qp_type(init, IbVerbs.IBV_QPT_RC());
        MemorySegment cap = ibv_qp_init_attr.cap(init);
        ibv_qp_cap.max_send_wr(cap, 4);
        ibv_qp_cap.max_recv_wr(cap, 4);
        ibv_qp_cap.max_send_sge(cap, 1);
        ibv_qp_cap.max_recv_sge(cap, 1);
        MemorySegment qp = ptr(IbVerbs.ibv_create_qp(pd, init)).reinterpret(ibv_qp.layout().byteSize());
        MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
        ibv_qp_attr.qp_state(attr, IbVerbs.IBV_QPS_INIT());
        ibv_qp_attr.pkey_index(attr, (short) 0);
        ibv_qp_attr.port_num(attr, (byte) 1);
        ibv_qp_attr.qp_access_flags(attr, access);
        ok(IbVerbs.ibv_modify_qp(qp, attr, IbVerbs.IBV_QP_STATE() | IbVerbs.IBV_QP_PKEY_INDEX()
                | IbVerbs.IBV_QP_PORT() | IbVerbs.IBV_QP_ACCESS_FLAGS()));
        MemorySegment queried = arena.allocate(ibv_qp_attr.layout());
        ok(IbVerbs.ibv_query_qp(qp, queried, IbVerbs.IBV_QP_STATE(), arena.allocate(ibv_qp_init_attr.layout())));
        assertEquals(IbVerbs.IBV_QPS_INIT(), ibv_qp_attr.qp_state(queried));

        // A receive may be posted from INIT on; the data path is VerbsInline.
        MemorySegment sge = arena.allocate(ibv_sge.layout());
        ibv_sge.addr(sge, buf.address());
        ibv_sge.length(sge, 4096);
        ibv_sge.lkey(sge, ibv_mr.lkey(mr));
        MemorySegment rwr = arena.allocate(ibv_recv_wr.layout());
        ibv_recv_wr.wr_id(rwr, 42);
        ibv_recv_wr.sg_list(rwr, sge);
        ibv_recv_wr.num_sge(rwr, 1);
        MemorySegment bad = arena.allocate(ValueLayout.ADDRESS);
        ok(VerbsInline.ibvPostRecv(VerbsInline.postRecvFunction(qp), qp, rwr, bad));
        MemorySegment wc = arena.allocate(ibv_wc.layout(), 4);
        assertEquals(0, VerbsInline.ibvPollCq(VerbsInline.pollCqFunction(cq), cq, 4, wc));
        ok(VerbsInline.ibvReqNotifyCq(cq, false));

        MemorySegment srqInit = arena.allocate(ibv_srq_init_attr.layout());
        MemorySegment srqAttr = ibv_srq_init_attr.attr(srqInit);
        ibv_srq_attr.max_wr(srqAttr, 8);
        ibv_srq_attr.max_sge(srqAttr, 1);
        MemorySegment srq = ptr(IbvCalls.ibvCreateSrq(pd, srqInit));
        MemorySegment srqQueried = arena.allocate(ibv_srq_attr.layout());
        ok(IbVerbs.ibv_query_srq(srq, srqQueried));
        assertTrue(ibv_srq_attr.max_wr(srqQueried) >= 8);
        ok(VerbsInline.ibvPostSrqRecv(srq, rwr, bad));
        ok(IbvCalls.ibvDestroySrq(srq));

        MemorySegment mw = ptr(VerbsInline.ibvAllocMw(pd, IbVerbs.IBV_MW_TYPE_2()));
        ok(VerbsInline.ibvDeallocMw(mw));

        ok(IbVerbs.ibv_destroy_qp(qp));
        ok(IbvCalls.ibvDestroyCq(cq));
        ok(IbvCalls.ibvDestroyCompChannel(channel));
        ok(IbvCalls.ibvDeregMr(mr));
        ok(IbvCalls.ibvDeallocPd(pd));
    }

    @Test
    void rdmaCmIdBindsAndListens() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment channel = ptr(RdmaCmCalls.rdmaCreateEventChannel());
            try {
                MemorySegment idOut = arena.allocate(ValueLayout.ADDRESS);
                ok(RdmaCmCalls.rdmaCreateId(channel, idOut, MemorySegment.NULL, RdmaCm.RDMA_PS_TCP()));
                MemorySegment id = idOut.get(ValueLayout.ADDRESS, 0);
                MemorySegment sin = arena.allocate(sockaddr_in.layout());
                sockaddr_in.sin_family(sin, (short) RdmaCm.AF_INET());
                ok(RdmaCmCalls.rdmaBindAddr(id, sin)); // INADDR_ANY, any port
                ok(RdmaCmCalls.rdmaListen(id, 4));
                short port = RdmaCm.rdma_get_src_port(id); // __be16: network byte order
                assertNotEquals(0, port);
                // A second id on the same port is refused by the kernel: its errno comes through.
                ok(RdmaCmCalls.rdmaCreateId(channel, idOut, MemorySegment.NULL, RdmaCm.RDMA_PS_TCP()));
                MemorySegment id2 = idOut.get(ValueLayout.ADDRESS, 0);
                sockaddr_in.sin_port(sin, port);
                int errno = NativeErrors.statusErrno(RdmaCmCalls.rdmaBindAddr(id2, sin));
                assertTrue(errno == 98 || errno == 99, "errno " + errno); // EADDRINUSE / EADDRNOTAVAIL
                ok(RdmaCmCalls.rdmaDestroyId(id2));
                ok(RdmaCmCalls.rdmaDestroyId(id));
            } finally {
                RdmaCm.rdma_destroy_event_channel(channel);
            }
        }
    }

    /** A status call succeeded, else fails with its errno's text. */
    private static void ok(int rc) {
        int errno = NativeErrors.statusErrno(rc);
        assertEquals(0, errno, () -> "errno " + errno + " (" + NativeErrors.strerror(errno) + ")");
    }

    /** A pointer call succeeded, else fails with its errno's text. */
    private static MemorySegment ptr(MemorySegment p) {
        if (p.equals(MemorySegment.NULL)) {
            int errno = NativeErrors.pointerErrno();
            throw new AssertionError("NULL, errno " + errno + " (" + NativeErrors.strerror(errno) + ")");
        }
        return p;
    }
}
