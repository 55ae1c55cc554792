package org.rpcrdma.transport.rpc;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.chunk.CallChunks;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.OpaqueAuth;
import org.rpcrdma.xdr.RpcReplyHeader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * A call from the peer as the handler sees it, answered exactly once: by its reply, by
 * SYSTEM_ERR when its handler failed, or by the connection's loss. Every call the peer
 * sends holds one of the credits we granted until it is answered (RFC 8166 §3.3.1), so
 * answering twice or never would make the peer's credits drift; this object is where
 * "once" is decided, and its {@link Responder} sends what it answers (inline, through the
 * chunks the call offered, or RDMA_ERROR: RFC 8166 §4.5).
 *
 * <p>The immediate handlers' object is reused from call to call and confined to the
 * dispatching thread (no lock); every other one is answered under its own monitor, from
 * whatever thread the handler gave it to.
 */
public final class PeerCall implements IncomingCall {
    /** The responder's logger: what a peer call logs is the responder role's. */
    private static final System.Logger LOG = System.getLogger(Responder.class.getName());

    private final Responder responder;
    private int xid;
    private final ReceivedMessage msg;
    private final CallChunks chunks;
    private boolean answered;

    PeerCall(Responder responder, int xid, ReceivedMessage msg, CallChunks chunks) {
        this.responder = responder;
        this.xid = xid;
        this.msg = msg;
        this.chunks = chunks;
    }

    /**
     * Makes the immediate handlers' object the call {@code xid} in receive buffer
     * {@code slot}. No lock: its fields are the dispatching thread's (see {@link #reply}).
     */
    void reuse(int newXid, MemorySegment view, int slot) {
        xid = newXid;
        answered = false;
        ApiBridge.access().reuse(msg, view, slot);
    }

    /** The immediate call's, by its dispatching thread. */
    boolean isAnswered() {
        return answered;
    }

    @Override
    public int writeChunkCount() {
        return chunks.writes.chunkCount();
    }

    @Override
    public long writeChunkCapacity(int chunk) {
        return chunks.writeCapacity(chunk);
    }

    @Override
    public long replyChunkCapacity() {
        return chunks.replyCapacity();
    }

    @Override
    public ReceivedMessage message() {
        return msg;
    }

    @Override
    public boolean pulled() {
        return !ApiBridge.access().inReceiveBuffer(msg); // assembled in chunk memory (ReadChunkPuller)
    }

    @Override
    public int xid() {
        return xid;
    }

    @Override
    public Connection connection() {
        return responder.connection().connection();
    }

    @Override
    public void reply(MemorySegment rpcReply) {
        reply(rpcReply, null);
    }

    @Override
    public void reply(MemorySegment rpcReply, MemorySegment payload) {
        replyDdp(rpcReply, payload == null ? List.of() : List.of(payload));
    }

    @Override
    public void replyDdp(MemorySegment rpcReply, List<MemorySegment> payloads) {
        if (responder.isImmediate(this)) {
            // Confined to the dispatching thread, which alone writes its fields: no lock.
            if (!responder.isImmediateDispatcher(Thread.currentThread())) {
                throw new IllegalStateException("a call to an immediate handler is answered by that handler, on"
                        + " its thread, before it returns");
            }
            if (answered) {
                throw new IllegalStateException("call 0x" + Integer.toHexString(xid) + " already answered");
            }
            answered = true;
        } else {
            synchronized (this) {
                if (answered) {
                    throw new IllegalStateException("call 0x" + Integer.toHexString(xid) + " already answered");
                }
                answered = true;
            }
        }
        try {
            responder.send(this, xid, rpcReply, chunks, payloads);
        } finally {
            msg.release();
        }
    }

    /**
     * The handler threw (on any thread): counted, logged, and answered SYSTEM_ERR unless it
     * replied. A {@link VirtualMachineError} (out of memory, stack overflow) fails the
     * connection instead: with the VM in trouble an answer may fail halfway, while a lost
     * connection fails every call on it with a typed error and takes its buffers back.
     */
    public void handlerFailed(Throwable e) {
        ConnectionEngine conn = responder.connection();
        conn.counters().handlerFailures.increment();
        if (e instanceof VirtualMachineError) {
            LOG.log(Level.ERROR, conn + ": call handler threw on call 0x" + Integer.toHexString(xid)
                    + "; failing the connection", e);
            conn.onLinkLost(new RpcRdmaException(conn + ": a call handler threw " + e, e));
            return;
        }
        LOG.log(Level.WARNING, conn + ": call handler threw; answering call 0x" + Integer.toHexString(xid)
                + " with SYSTEM_ERR", e);
        answerIfUnanswered(systemError(xid));
    }

    /** The handler failed without answering: answer for it so the peer's call does not hang. */
    void answerIfUnanswered(MemorySegment rpcReply) {
        synchronized (this) {
            if (answered) {
                return;
            }
        }
        try {
            reply(rpcReply);
        } catch (IllegalStateException e) {
            // answered meanwhile by another thread the handler gave the call to
        }
    }

    /** An accepted reply with SYSTEM_ERR (RFC 5531 §9), for a call its handler did not answer. */
    static MemorySegment systemError(int xid) {
        MemorySegment r = MemorySegment.ofArray(new byte[24]);
        RpcReplyHeader.encodeAccepted(new XdrWriter(r, 0, 24), xid, OpaqueAuth.NONE, OncRpc.SYSTEM_ERR);
        return r;
    }
}
