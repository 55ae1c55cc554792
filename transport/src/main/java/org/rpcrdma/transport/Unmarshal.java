package org.rpcrdma.transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.wire.ErrorResponse;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaDecoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.RpcRdmaProtocolException;

/**
 * What arrives on a connection, decoded and sent the right way (≈ the decode half of Linux
 * {@code rpcrdma_reply_handler} and {@code svc_rdma_recvfrom}): a reply or RDMA_ERROR is
 * the {@link Requester}'s to match, a call is the {@link Responder}'s; a message that
 * does not decode is a malformed reply if it answers a call of ours, else a malformed call
 * the responder answers, else the end of the connection. Runs on the completion thread
 * only (one header object, decoded in place).
 */
final class Unmarshal {
    private static final System.Logger LOG = System.getLogger(Unmarshal.class.getName());

    private final Connection conn;
    private final RpcRdmaHeader rxHeader;
    private final Requester requester;
    private final Responder responder;
    private final RpcRdmaStats stats;
    /** See {@link RawTap}; null on every connection but a conformance test's raw peer. */
    private volatile RawTap rawTap;

    /**
     * What a raw peer sees (conformance tests): each message as it arrived, undecoded, and
     * the completions of RDMA operations the test posted on the link itself. The one way
     * to see the exact bytes a real endpoint sends on a real QP, which only the endpoints
     * build; receives stay posted as usual.
     */
    interface RawTap {
        void received(MemorySegment message);

        void rdmaCompleted(int token);
    }

    void rawTap(RawTap tap) {
        rawTap = tap;
    }

    Unmarshal(Connection conn, RpcRdmaHeader rxHeader, Requester requester, Responder responder, RpcRdmaStats stats) {
        this.conn = conn;
        this.rxHeader = rxHeader;
        this.requester = requester;
        this.responder = responder;
        this.stats = stats;
    }

    /**
     * Classifies a received message (RFC 8166 §4, RFC 8167 §4): a reply or RDMA_ERROR is
     * ours to match, a call is the responder's. Returns true if the buffer was handed on.
     */
    boolean dispatch(int slot, MemorySegment buf, int length) {
        RawTap tap = rawTap;
        if (tap != null) {
            tap.received(buf.asSlice(0, length));
            return false;
        }
        RpcRdmaHeader h = rxHeader;
        try {
            RpcRdmaDecoder.decode(buf, 0, length, h);
        } catch (RpcRdmaProtocolException e) {
            stats.badHeaders.increment();
            malformed(e);
            return false;
        }
        switch (h.proc()) {
            case RpcRdma.RDMA_ERROR -> {
                stats.rdmaErrorsReceived.increment();
                OutgoingCall c = requester.matched(h.xid(), h.credit());
                if (c != null) {
                    c.fail(new RdmaErrorException(h.xid(), h.errorCode(), h.versLow(), h.versHigh()));
                }
                return false;
            }
            case RpcRdma.RDMA_MSG, RpcRdma.RDMA_MSGP -> {
                return dispatchInline(slot, buf, h);
            }
            case RpcRdma.RDMA_NOMSG -> {
                // No inline RPC header: the direction can't be told from it, so rdma_credit
                // is not used (RFC 8167 §4.1). A Position-Zero Read chunk carries a call
                // (RFC 8166 §3.5.3): the responder's. Otherwise it is a reply through a Reply
                // chunk: a call of ours that never offered one fails.
                stats.creditsIgnored.increment();
                if (h.readList().hasPositionZeroChunk()) {
                    if (responder.canRespond()) {
                        return responder.onCall(h, slot, buf);
                    }
                } else if (requester.isOutstanding(h.xid())) {
                    replyThroughChunk(h);
                    return false;
                }
                unexpectedChunks(h.xid(), "RDMA_NOMSG");
                return false;
            }
            default -> {
                return false; // RDMA_DONE: nothing to do without Reply chunks
            }
        }
    }

    private boolean dispatchInline(int slot, MemorySegment buf, RpcRdmaHeader h) {
        int type = h.rpcMsgType();
        if (type == RpcRdma.RPC_CALL) {
            return responder.onCall(h, slot, buf);
        }
        if (type != RpcRdma.RPC_REPLY) {
            stats.badHeaders.increment();
            return false;
        }
        stats.repliesReceived.increment();
        OutgoingCall c = requester.matched(h.rpcXid(), h.credit());
        if (c == null) {
            return false; // counted as unmatched; dropped (RFC 8167 §2.4.1)
        }
        CallExposure x = c.exposure();
        if (x != null) {
            // what the call exposed is withdrawn (and a DDP result copied out) before the caller sees the reply
            long placed;
            try {
                placed = ChunkMarshal.placedBytes(x, h);
            } catch (IllegalStateException e) {
                malformedReply(c, e.getMessage());
                return false;
            }
            ReceivedMessage m = new ReceivedMessage(conn.messageView(slot, h.messageOffset(), h.messageLength()),
                    conn, slot, x.offersWriteChunk() ? placed : -1);
            x.finish(-1, placed, done -> {
                if (done == null || !c.deliver(m)) {
                    stats.lateReplies.increment(); // abandoned meanwhile
                    m.release();
                }
            }, e -> {
                m.release();
                receptacleGone(c, e);
            });
            return true; // m has the buffer now
        }
        if (!h.hasNoChunks()) {
            malformedReply(c, "the reply uses chunks this call never offered");
            return false;
        }
        if (!c.deliverInline(conn, slot, conn.messageView(slot, h.messageOffset(), h.messageLength()))) {
            stats.lateReplies.increment(); // abandoned: matched, counted, released at once
            return false;
        }
        return true;
    }

    private void malformedReply(OutgoingCall c, String why) {
        stats.malformedReplies.increment();
        c.fail(new MalformedReplyException(conn + ": reply to call 0x" + Integer.toHexString(c.xid) + ": " + why,
                null));
    }

    /**
     * RDMA_NOMSG answering a call of ours: the reply is in the Reply chunk we offered,
     * already written when this Send arrived (RFC 8166 §3.5.4). Its returned lengths are
     * checked against what we offered before a byte of it is read.
     */
    private void replyThroughChunk(RpcRdmaHeader h) {
        stats.repliesReceived.increment();
        OutgoingCall c = requester.matched(h.xid(), h.credit());
        if (c == null) {
            return;
        }
        CallExposure x = c.exposure();
        long length;
        long placed;
        try {
            if (x == null) {
                throw new IllegalStateException("the reply came through a Reply chunk this call never offered");
            }
            length = ChunkMarshal.replyChunkLength(x, h);
            placed = ChunkMarshal.placedBytes(x, h);
        } catch (IllegalStateException e) {
            malformedReply(c, e.getMessage());
            return;
        }
        x.finish(length, placed, m -> {
            if (m == null) {
                stats.lateReplies.increment(); // abandoned meanwhile: its memory is gone already
                return;
            }
            if (!ChunkMarshal.isReplyTo(m.bytes(), c.xid)) {
                m.release();
                stats.malformedReplies.increment();
                c.fail(new MalformedReplyException(conn + ": the Reply chunk of call 0x" + Integer.toHexString(c.xid)
                        + " does not hold an RPC REPLY with that XID", null));
                return;
            }
            stats.repliesThroughReplyChunk.increment();
            if (!c.deliver(m)) {
                m.release();
                stats.lateReplies.increment();
            }
        }, e -> receptacleGone(c, e));
    }

    /**
     * The DDP result could not be copied into the caller's receptacle, or memory the call
     * exposed in place was freed under it: the call fails, it does not hang.
     */
    private void receptacleGone(OutgoingCall c, RuntimeException e) {
        c.fail(new RpcRdmaException(conn + ": reply to call 0x" + Integer.toHexString(c.xid)
                + ": the caller's memory is gone (its DDP result could not be copied into the receptacle, or memory"
                + " exposed in place was freed while the call was out): " + e, e));
    }

    /**
     * A message whose transport header does not decode. If it answers a call of ours it is
     * a malformed reply: that call fails (a requester never answers with RDMA_ERROR,
     * RFC 8166 §4.5). Otherwise, if we serve calls, it is a malformed call and the
     * responder answers it; if we serve none, or nothing can be answered, the connection
     * is dropped.
     */
    private void malformed(RpcRdmaProtocolException e) {
        if (e.response() != ErrorResponse.DROP_CONNECTION && e.hasXid()) {
            OutgoingCall c = requester.malformed(e.xid());
            if (c != null) {
                stats.malformedReplies.increment();
                c.fail(new MalformedReplyException(conn + ": malformed reply to call 0x" + Integer.toHexString(e.xid())
                        + ": " + e.getMessage(), e));
                return;
            }
            if (responder.canRespond()) {
                responder.sendError(e.xid(), e.response() == ErrorResponse.ERR_VERS
                        ? RpcRdma.ERR_VERS : RpcRdma.ERR_CHUNK);
                return;
            }
        }
        LOG.log(Level.WARNING, "{0}: dropping connection: {1}", conn, e.getMessage());
        conn.lost(new RpcRdmaException("peer sent a malformed message: " + e.getMessage(), e));
    }

    /** A message with chunks we cannot take (none are supported yet). */
    private void unexpectedChunks(int xid, String what) {
        OutgoingCall c = requester.malformed(xid);
        if (c != null) {
            stats.malformedReplies.increment();
            c.fail(new MalformedReplyException(conn + ": " + what + " reply to call 0x" + Integer.toHexString(xid)
                    + " uses chunks this call never offered", null));
        } else if (responder.canRespond()) {
            responder.sendError(xid, RpcRdma.ERR_CHUNK); // RFC 8166 §4.5.2
        } else {
            conn.lost(new RpcRdmaException("peer sent " + what + " matching no call of ours, and we serve no calls"));
        }
    }
}
