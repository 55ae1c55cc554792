package org.rpcrdma.transport.link;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import org.rpcrdma.transport.LinkClosedException;
import org.rpcrdma.transport.chunk.ChunkBuffer;
import org.rpcrdma.transport.verbs.PreparedSends;
import org.rpcrdma.transport.verbs.QueuePair;
import org.rpcrdma.transport.verbs.RecvBatch;
import org.rpcrdma.transport.verbs.SendBatch;

/**
 * The posting of one {@link VerbsLink}'s work requests: Sends (with or without Invalidate),
 * receives, RDMA Reads and Writes, each built in a work-request array allocated once
 * (≈ Linux's {@code rpcrdma_post_sends} and {@code rpcrdma_post_recvs}) and posted under
 * the read side of the link's {@link LinkGate}. Each wr_id packs operation, slot and the
 * link's generation ({@link WrId}), which {@link LinkCompletions} takes apart again.
 *
 * <p>Threading: posts come from any thread (callers, handlers, the poller). Sends are
 * serialised by the caller (SendQueue's lock), receives by the ReceivePool's lock; RDMA
 * Reads and Writes, posted by the responder's chunk engine, under {@code rdmaLock}, apart
 * from Sends. Apart from {@link VerbsLink} because building and posting a request is its
 * own concern: the link only decides whether it may still post (the gate).
 */
public final class WorkRequests {
    private final LinkGate gate;
    private final QueuePair qp;
    private final LinkHardware hw;
    private final int generation;
    private final int recvInline;
    /** A Send per send context, built once: an inline message from its context's buffer stores only what changed. */
    private final PreparedSends prepared;
    /** Any other Send (with Invalidate, or not from a context): filled per post. */
    private final SendBatch send = new SendBatch(1, 1);
    /** RDMA Read/Write requests: posted under {@code rdmaLock}, apart from Sends (SendQueue's lock). */
    private final SendBatch rdma = new SendBatch(1, 1);
    private final Object rdmaLock = new Object();
    private final RecvBatch recv;

    WorkRequests(LinkGate gate, LinkHardware hw, int generation, int sendContexts, int receiveBuffers, int recvInline) {
        this.gate = gate;
        this.hw = hw;
        this.qp = hw.qp;
        this.generation = generation;
        this.recvInline = recvInline;
        PreparedSends p = null;
        boolean ok = false;
        try {
            p = new PreparedSends(sendContexts, hw.sendMr.lkey(), slot -> WrId.pack(WrId.OP_SEND, slot, generation));
            this.recv = new RecvBatch(receiveBuffers);
            ok = true;
        } finally {
            if (!ok) {
                send.close();
                rdma.close();
                if (p != null) {
                    p.close();
                }
            }
        }
        this.prepared = p;
    }

    /**
     * One Send of {@code buffer[0, length)} (a slice of the send memory), as
     * IBV_WR_SEND_WITH_INV of the peer's {@code rkey} unless it is 0 (RFC 8797 §7).
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    void send(int slot, MemorySegment buffer, int length, boolean signalled, int rkey) {
        long stamp = gate.enter("send");
        try {
            long addr = buffer.address(); // a slice of sendMr
            int flags = signalled ? SendBatch.SIGNALED : 0;
            if (rkey == 0 && prepared.covers(slot, length)) {
                qp.postSend(prepared, slot, addr, length, flags);
                return;
            }
            send.clear();
            long wrId = WrId.pack(WrId.OP_SEND, slot, generation);
            if (rkey == 0) {
                send.send(wrId, hw.sendMr.lkey(), addr, length, flags);
            } else {
                send.sendWithInvalidate(wrId, hw.sendMr.lkey(), addr, length, rkey, flags);
            }
            qp.postSend(send);
        } finally {
            gate.exit(stamp);
        }
    }

    /**
     * Receive buffers {@code slots[0, count)} of the receive memory: buffer {@code slot} is
     * {@code [slot * recvInline, (slot + 1) * recvInline)}.
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    void receives(int[] slots, int count) {
        long stamp = gate.enter("receive");
        try {
            recv.clear();
            long base = hw.recvMr.segment().address();
            int lkey = hw.recvMr.lkey();
            for (int i = 0; i < count; i++) {
                recv.add(WrId.pack(WrId.OP_RECV, slots[i], generation), lkey, base + (long) slots[i] * recvInline,
                        recvInline);
            }
            qp.postRecv(recv);
        } finally {
            gate.exit(stamp);
        }
    }

    /**
     * One signalled RDMA Write ({@code write}) or Read between {@code local[localOffset, +length)}
     * and the peer's {@code rkey} at {@code remoteOffset}; {@code token} comes back in its completion.
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    void rdma(boolean write, int token, ChunkBuffer local, long localOffset, int length, int rkey,
            long remoteOffset) {
        long stamp = gate.enter(write ? "RDMA Write" : "RDMA Read");
        try {
            MemorySegment mem = local.segment();
            Objects.checkFromIndexSize(localOffset, length, mem.byteSize()); // as asSlice would, without one
            long addr = mem.address() + localOffset;
            synchronized (rdmaLock) {
                rdma.clear();
                if (write) {
                    rdma.rdmaWrite(WrId.pack(WrId.OP_WRITE, token, generation), local.lkey(), addr, length,
                            remoteOffset, rkey, SendBatch.SIGNALED);
                } else {
                    rdma.rdmaRead(WrId.pack(WrId.OP_READ, token, generation), local.lkey(), addr, length,
                            remoteOffset, rkey, SendBatch.SIGNALED);
                }
                qp.postSend(rdma);
            }
        } finally {
            gate.exit(stamp);
        }
    }

    /** Frees the work-request arrays (caller holds the gate's write side). */
    void close() {
        prepared.close();
        send.close();
        rdma.close();
        recv.close();
    }
}
