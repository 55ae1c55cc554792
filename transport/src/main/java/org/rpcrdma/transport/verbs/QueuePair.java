package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rpcrdma.bindings.VerbsInline;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_qp;
import org.rpcrdma.bindings.ffi.rdmacm.RdmaCm;

/**
 * An RC {@code ibv_qp} created through rdma_cm ({@link CmId#createQueuePair}); rdma_cm
 * moves it through INIT/RTR/RTS on connect/accept. Posting allocates nothing: requests come
 * from a reused {@link SendBatch}/{@link RecvBatch}. libibverbs requires posts to one QP to
 * be serialized: one thread posts sends, one posts receives (or the caller locks).
 * Closing it (rdma_destroy_qp) must happen before its CQs and PD are closed.
 */
public final class QueuePair extends Resource {
    private final CmId id;
    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final SharedReceiveQueue srq;
    private final MemorySegment qp;
    /** The provider's post_send / post_recv, looked up once (each lookup allocates under C1). */
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    private final int qpNum;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment badSend;
    private final MemorySegment badRecv;
    private final long address;
    private final long badSendAddress;
    private final long badRecvAddress;

    QueuePair(CmId id, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
              SharedReceiveQueue srq, MemorySegment qp) {
        this.id = id;
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.srq = srq;
        this.qp = qp.reinterpret(ibv_qp.layout().byteSize());
        this.qpNum = ibv_qp.qp_num(this.qp);
        this.postSendFn = VerbsInline.postSendFunction(this.qp);
        this.postRecvFn = VerbsInline.postRecvFunction(this.qp);
        this.badSend = arena.allocate(ValueLayout.ADDRESS);
        this.badRecv = arena.allocate(ValueLayout.ADDRESS);
        this.address = this.qp.address();
        this.badSendAddress = badSend.address();
        this.badRecvAddress = badRecv.address();
        opened();
    }

    /** The {@code struct ibv_qp *}. */
    public MemorySegment handle() {
        checkOpen();
        return qp;
    }

    public int qpNum() {
        return qpNum;
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue recvCq() {
        return recvCq;
    }

    /** The SRQ receives come from, or null. */
    public SharedReceiveQueue sharedReceiveQueue() {
        return srq;
    }

    /**
     * Posts every request of {@code batch} as one chain (ibv_post_send).
     *
     * @throws org.rpcrdma.transport.NativeFailureException when the provider refused the
     *         chain; the requests before the first unposted one were posted
     */
    public void postSend(SendBatch batch) {
        checkOpen();
        if (batch.size() == 0) {
            return;
        }
        int rc = VerbsInline.ibvPostSend(postSendFn, address, batch.firstAddress(), badSendAddress);
        if (rc != 0) {
            int bad = batch.indexOf(badSend.get(ValueLayout.JAVA_LONG, 0));
            batch.posted(Math.max(bad, 0));
            throw NativeChecks.failure("ibv_post_send", Math.abs(rc));
        }
        batch.posted(batch.size());
    }

    /**
     * Posts context {@code slot}'s prepared Send of {@code [address, address + length)}
     * with {@code sendFlags} (ibv_post_send of that one request).
     *
     * @throws org.rpcrdma.transport.NativeFailureException when the provider refused it
     */
    public void postSend(PreparedSends sends, int slot, long address, int length, int sendFlags) {
        checkOpen();
        int rc = VerbsInline.ibvPostSend(postSendFn, this.address, sends.prepare(slot, address, length, sendFlags),
                badSendAddress);
        if (rc != 0) {
            throw NativeChecks.failure("ibv_post_send", Math.abs(rc));
        }
    }

    /** Posts every receive of {@code batch} (ibv_post_recv); not for a QP on an SRQ. */
    public void postRecv(RecvBatch batch) {
        checkOpen();
        if (batch.size() == 0) {
            return;
        }
        int rc = VerbsInline.ibvPostRecv(postRecvFn, address, batch.firstAddress(), badRecvAddress);
        if (rc != 0) {
            throw NativeChecks.failure("ibv_post_recv", Math.abs(rc));
        }
    }

    @Override
    void release() {
        try {
            id.queuePairClosed(this);
            RdmaCm.rdma_destroy_qp(id.rawHandle());
        } finally {
            arena.close();
        }
    }
}
