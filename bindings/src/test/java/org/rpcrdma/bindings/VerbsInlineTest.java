package org.rpcrdma.bindings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Method;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_context;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_context_ops;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_cq;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_mw;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_pd;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_qp;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_wc;

/**
 * VerbsInline without an RDMA device: fake verbs objects in native memory whose
 * {@code context->ops} entries point at libc's {@code getpid}, which ignores its arguments
 * (SysV x86-64/AArch64 callers own argument registers) and returns a recognisable value.
 * That proves each inline chases {@code object->context->ops.<op>} to the right slot, that
 * alloc_mw without provider support fails as verbs.h does, and that the hot path allocates
 * nothing on the Java heap.
 */
class VerbsInlineTest {
    private static final int PID = (int) ProcessHandle.current().pid();

    private Arena arena;
    private MemorySegment ctx;
    private MemorySegment ops;
    private MemorySegment qp;
    private MemorySegment cq;
    private MemorySegment srq;
    private MemorySegment pd;
    private MemorySegment wr;
    private MemorySegment badWr;
    private MemorySegment wc;
    private MemorySegment postSend;
    private MemorySegment postRecv;
    private MemorySegment pollCq;

    @BeforeEach
    void fakeVerbsObjects() {
        arena = Arena.ofConfined();
        MemorySegment getpid = Linker.nativeLinker().defaultLookup().find("getpid").orElseThrow();
        ctx = arena.allocate(ibv_context.layout());
        ops = ibv_context.ops(ctx);
        ibv_context_ops.post_send(ops, getpid);
        ibv_context_ops.post_recv(ops, getpid);
        ibv_context_ops.post_srq_recv(ops, getpid);
        ibv_context_ops.poll_cq(ops, getpid);
        ibv_context_ops.req_notify_cq(ops, getpid);
        ibv_context_ops.dealloc_mw(ops, getpid);
        qp = arena.allocate(ibv_qp.layout());
        ibv_qp.context(qp, ctx);
        cq = arena.allocate(ibv_cq.layout());
        ibv_cq.context(cq, ctx);
        srq = arena.allocate(ibv_srq.layout());
        ibv_srq.context(srq, ctx);
        pd = arena.allocate(ibv_pd.layout());
        ibv_pd.context(pd, ctx);
        wr = arena.allocate(64);
        badWr = arena.allocate(ValueLayout.ADDRESS);
        wc = arena.allocate(ibv_wc.layout(), 16);
        postSend = VerbsInline.postSendFunction(qp);
        postRecv = VerbsInline.postRecvFunction(qp);
        pollCq = VerbsInline.pollCqFunction(cq);
    }

    @AfterEach
    void free() {
        arena.close();
    }

    @Test
    void eachInlineCallsItsOwnOpsSlot() {
        assertEquals(PID, VerbsInline.ibvPostSend(VerbsInline.postSendFunction(qp), qp, wr, badWr));
        assertEquals(PID, VerbsInline.ibvPostRecv(VerbsInline.postRecvFunction(qp), qp, wr, badWr));
        assertEquals(PID, VerbsInline.ibvPollCq(VerbsInline.pollCqFunction(cq), cq, 16, wc));
        assertEquals(PID, VerbsInline.ibvPostSrqRecv(srq, wr, badWr));
        assertEquals(PID, VerbsInline.ibvReqNotifyCq(cq, false));
        assertEquals(ibv_context_ops.post_send(ops), VerbsInline.postSendFunction(qp));
        assertEquals(ibv_context_ops.poll_cq(ops), VerbsInline.pollCqFunction(cq));
        // A slot left NULL would crash, so prove the slots are distinct by clearing one.
        ibv_context_ops.post_recv(ops, MemorySegment.NULL);
        assertEquals(PID, VerbsInline.ibvPostSend(VerbsInline.postSendFunction(qp), qp, wr, badWr));
    }

    @Test
    void pointersPassedAsAddressesReachTheCalleeAsPointers() {
        // post and poll hand their pointers over as 64-bit integers: a C function that
        // dereferences its first two (strcmp) sees the strings they point at
        MemorySegment strcmp = Linker.nativeLinker().defaultLookup().find("strcmp").orElseThrow();
        MemorySegment a = arena.allocateFrom("rpc-over-rdma");
        MemorySegment same = arena.allocateFrom("rpc-over-rdma");
        MemorySegment other = arena.allocateFrom("rpc-over-rdmb");
        assertEquals(0, VerbsInline.ibvPostSend(strcmp, a.address(), same.address(), badWr.address()));
        assertTrue(VerbsInline.ibvPostRecv(strcmp, a.address(), other.address(), badWr.address()) < 0);
        // poll_cq(cq, n, wc): the first pointer arrives intact, the int in the second register
        MemorySegment strchr = Linker.nativeLinker().defaultLookup().find("strchr").orElseThrow();
        int found = VerbsInline.ibvPollCq(strchr, a.address(), '-', wc.address());
        assertEquals((int) (a.address() + 3), found, "strchr's result (low 32 bits): a pointer to the first '-'");
    }

    @Test
    void allocMwWithoutProviderSupportIsEopnotsupp() {
        // verbs.h ibv_alloc_mw: errno = EOPNOTSUPP when ops.alloc_mw is NULL.
        assertEquals(MemorySegment.NULL, VerbsInline.ibvAllocMw(pd, 1));
        assertEquals(95, NativeErrors.pointerErrno());
    }

    @Test
    void deallocMwCallsItsOpsSlot() {
        MemorySegment mw = arena.allocate(ibv_mw.layout());
        ibv_mw.context(mw, ctx);
        assertEquals(PID, VerbsInline.ibvDeallocMw(mw));
    }

    @Test
    void hotPathAllocatesNothing() throws Exception {
        Method allocated = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        // The steady state is what counts: until the JIT has compiled the path (with escape
        // analysis), the interpreted calls allocate. On a loaded machine compilation lags, so
        // the path is measured in rounds until one is clean; a real per-call allocation makes
        // every round allocate at least 16 bytes per iteration (1.6 MB a round).
        long least = Long.MAX_VALUE;
        for (int round = 0; round < 30 && least >= 64 * 1024; round++) {
            long before = (long) allocated.invoke(bean);
            for (int i = 0; i < 100_000; i++) {
                hotPath();
            }
            least = Math.min(least, (long) allocated.invoke(bean) - before);
        }
        // Reflection and the measurement itself cost a few hundred bytes in total.
        assertTrue(least < 64 * 1024, "hot path allocated " + least + " bytes in its best round of 100,000 calls ("
                + least / 100_000 + " per iteration)");
    }

    private void hotPath() {
        // as the transport does: the provider's functions looked up once per QP / CQ
        VerbsInline.ibvPostSend(postSend, qp, wr, badWr);
        VerbsInline.ibvPostRecv(postRecv, qp, wr, badWr);
        VerbsInline.ibvPostSrqRecv(srq, wr, badWr);
        VerbsInline.ibvPollCq(pollCq, cq, 16, wc);
        VerbsInline.ibvReqNotifyCq(cq, true);
    }

    @Test
    void errnoCaptureIsAllocationFreeToo() throws Throwable {
        // The capturing invokers reuse one per-thread capture segment.
        assertTrue(NativeErrors.captureState() == NativeErrors.captureState());
        MethodHandle close = NativeErrors.capturingDowncall(
                Linker.nativeLinker().defaultLookup().find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        assertEquals(-1, (int) close.invokeExact(NativeErrors.captureState(), -1));
        assertEquals(9, NativeErrors.errno());
    }
}
