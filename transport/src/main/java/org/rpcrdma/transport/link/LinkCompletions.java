package org.rpcrdma.transport.link;

import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.chunk.ChunkMemory;
import org.rpcrdma.transport.verbs.WorkCompletions;

/**
 * One {@link VerbsLink}'s completions, each as its {@link CompletionPoller} hands it over
 * (≈ Linux's {@code rpcrdma_wc_send}, {@code rpcrdma_wc_receive} and
 * {@code frwr_wc_localinv}): classified by the operation and slot packed in wr_id
 * ({@link WrId}), by status (a flushed receive gives its buffer back, any other failure
 * loses the link), and for a received Send with Invalidate by the rkey it withdrew, then fed
 * to the connection's {@link CompletionSink}.
 *
 * <p>Threading: called by one thread at a time, the one holding the poll role of the CQ the
 * link's QP completes on (its own, or a completion group's). Apart from the poller because
 * classifying a completion is the link's concern, the CQ it came from is not.
 */
public final class LinkCompletions {
    private final ChunkMemory chunks;
    private final int generation;
    /** The generation of receive wr_ids: the link's, or its shared receive queue's. */
    private final int recvGeneration;
    private volatile CompletionSink conn;

    LinkCompletions(ChunkMemory chunks, int generation, int recvGeneration) {
        this.chunks = chunks;
        this.generation = generation;
        this.recvGeneration = recvGeneration;
    }

    /** Where completions go, set before the link's QP is registered with its CQ's poller. */
    void bind(CompletionSink c) {
        this.conn = c;
    }

    /** One completion of this link's QP. Runs user code: never under a gate. */
    void dispatch(long w, int status, int byteLen, int invRkey) {
        CompletionSink c = conn;
        int op = WrId.op(w);
        if (WrId.generation(w) != (op == WrId.OP_RECV ? recvGeneration : generation)) {
            return; // from an earlier incarnation
        }
        int slot = WrId.slot(w);
        if (op == WrId.OP_LOCAL_INV) {
            Runnable then = chunks.invalidated(slot, status == WorkCompletions.SUCCESS);
            if (status != WorkCompletions.SUCCESS && status != WorkCompletions.FLUSHED) {
                c.onLinkLost(new RpcRdmaException("LOCAL_INV completed with " + WorkCompletions.statusString(status)));
            }
            if (then != null) {
                then.run();
            }
            return;
        }
        if (status != WorkCompletions.SUCCESS) {
            if (op == WrId.OP_RECV && status == WorkCompletions.FLUSHED) {
                c.flushed(slot);
            } else if (status != WorkCompletions.FLUSHED) {
                c.onLinkLost(new RpcRdmaException(opName(op) + " completed with "
                        + WorkCompletions.statusString(status)));
            }
            return;
        }
        if (op == WrId.OP_RECV) {
            if (invRkey != 0) {
                remotelyInvalidated(c, invRkey);
            }
            c.received(slot, byteLen);
        } else if (op == WrId.OP_SEND) {
            c.sendCompleted(slot);
        } else if (op == WrId.OP_READ || op == WrId.OP_WRITE) {
            c.rdmaCompleted(slot);
        }
    }

    /**
     * The peer's Send with Invalidate withdrew {@code rkey}: before the reply it carries is
     * dispatched, the window is marked so that no LOCAL_INV follows (RFC 8797 §7). Taken
     * whatever was negotiated (Linux's nfsd clears R in its private data yet does it), and
     * counted as such when R was not.
     */
    private void remotelyInvalidated(CompletionSink c, int rkey) {
        if (chunks.remotelyInvalidated(rkey) && !c.remoteInvalidation()) {
            c.counters().remoteInvalidationsUnnegotiated.increment();
        }
    }

    private static String opName(int op) {
        return switch (op) {
            case WrId.OP_RECV -> "receive";
            case WrId.OP_READ -> "RDMA Read";
            case WrId.OP_WRITE -> "RDMA Write";
            case WrId.OP_BIND_MW -> "memory window bind";
            default -> "send";
        };
    }

    /** Our calls awaiting replies. */
    int outstandingCalls() {
        CompletionSink c = conn;
        return c == null ? 0 : c.outstandingCalls();
    }

    /** The CQ's poller failed: the connection is lost. */
    void failed(RuntimeException e) {
        CompletionSink c = conn;
        if (c != null) {
            c.onLinkLost(e);
        }
    }
}
