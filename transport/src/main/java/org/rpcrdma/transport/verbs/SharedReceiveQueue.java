package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.rpcrdma.bindings.VerbsInline;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq_attr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_srq_init_attr;

/**
 * An {@code ibv_srq}: receives shared by several QPs (RFC 8167 bidirectional operation lets
 * forward replies and backward calls land in one pool). Close after its QPs.
 * One thread posts at a time.
 */
public final class SharedReceiveQueue extends Resource {
    private static final MethodHandle CREATE = Native.handle(IbVerbs.ibv_create_srq$address(), IbVerbs.ibv_create_srq$descriptor());
    private static final MethodHandle DESTROY = Native.handle(IbVerbs.ibv_destroy_srq$address(), IbVerbs.ibv_destroy_srq$descriptor());

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
            this.srq = Native.callPointer("ibv_create_srq", CREATE, ibv_srq.layout().byteSize(), pd.handle(), init);
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
            throw new QueuePair.PostException("ibv_post_srq_recv", rc, -1);
        }
    }

    @Override
    void release() {
        try {
            Native.call("ibv_destroy_srq", DESTROY, srq);
        } finally {
            arena.close();
        }
    }
}
