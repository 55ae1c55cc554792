package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rpcrdma.bindings.IbvCalls;
import org.rpcrdma.bindings.VerbsInline;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq_attr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq_init_attr;

/**
 * An {@code ibv_srq}: receives shared by several QPs (RFC 8167 bidirectional operation lets
 * forward replies and backward calls land in one pool). Close after its QPs.
 * One thread posts at a time.
 */
public final class SharedReceiveQueue extends Resource {

    private final ProtectionDomain pd;
    private final MemorySegment srq;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment bad;

    SharedReceiveQueue(ProtectionDomain pd, int maxWr, int maxSge) {
        this.pd = pd;
        try {
            MemorySegment init = arena.allocate(ibv_srq_init_attr.layout());
            MemorySegment attr = ibv_srq_init_attr.attr(init);
            ibv_srq_attr.max_wr(attr, maxWr);
            ibv_srq_attr.max_sge(attr, maxSge);
            this.bad = arena.allocate(ValueLayout.ADDRESS);
            this.srq = NativeChecks.pointer("ibv_create_srq", IbvCalls.ibvCreateSrq(pd.handle(), init), ibv_srq.layout().byteSize());
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        opened();
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The {@code struct ibv_srq *}. */
    public MemorySegment handle() {
        checkOpen();
        return srq;
    }

    /** ibv_post_srq_recv of the whole batch. */
    public void postRecv(RecvBatch batch) {
        checkOpen();
        if (batch.size() == 0) {
            return;
        }
        int rc = VerbsInline.ibvPostSrqRecv(srq, batch.first(), bad);
        if (rc != 0) {
            throw NativeChecks.failure("ibv_post_srq_recv", Math.abs(rc));
        }
    }

    @Override
    void release() {
        try {
            NativeChecks.status("ibv_destroy_srq", IbvCalls.ibvDestroySrq(srq));
        } finally {
            arena.close();
        }
    }
}
