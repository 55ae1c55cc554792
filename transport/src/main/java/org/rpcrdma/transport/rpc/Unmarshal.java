package org.rpcrdma.transport.rpc;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import org.rpcrdma.transport.MalformedReplyException;
import org.rpcrdma.transport.RdmaErrorException;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.chunk.CallExposure;
import org.rpcrdma.transport.chunk.ChunkMarshal;
import org.rpcrdma.transport.wire.ErrorResponse;
import org.rpcrdma.transport.wire.MessageDirection;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaDecoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.RpcRdmaProtocolException;
import org.rpcrdma.xdr.RpcReplyHeader;

/**
 * What arrives on a connection, decoded and sent the right way (≈ the decode half of Linux
 * {@code rpcrdma_reply_handler} and {@code svc_rdma_recvfrom}): a reply or RDMA_ERROR is
 * the {@link Requester}'s to match, a call is the {@link Responder}'s; a message that
 * does not decode is classified by direction first ({@link MessageDirection}; XIDs are per
 * direction): a malformed reply fails the call of ours it answers, a malformed call is
 * answered RDMA_ERROR, anything else ends the connection. Runs on the completion thread
 * only (one header object, decoded in place).
 */
public final class Unmarshal {
    private static final System.Logger LOG = System.getLogger(Unmarshal.class.getName());

    private final ConnectionEngine conn;
    /** The receive buffers an inline reply is read from in place. */
    private final ReceiveQueue receives;
    private final RpcRdmaHeader rxHeader;
    private final Requester requester;
    private final Responder responder;
    private final StatsCounters stats;

    public Unmarshal(ConnectionEngine conn, ReceiveQueue receives, RpcRdmaHeader rxHeader, Requester requester, Responder responder,
            StatsCounters stats) {
        this.conn = conn;
        this.receives = receives;
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
        RpcRdmaHeader h = rxHeader;
        try {
            RpcRdmaDecoder.decode(buf, 0, length, h);
        } catch (RpcRdmaProtocolException e) {
            stats.badHeaders.increment();
            malformed(e, MessageDirection.of(buf, 0, length));
            return false;
        }
        switch (h.proc()) {
            case RpcRdma.RDMA_ERROR -> {
                stats.rdmaErrorsReceived.increment();
                CallRequest c = requester.matched(h.xid(), h.credit());
                if (c != null) {
                    c.fail(new RdmaErrorException(h.xid(), h.errorCode(), h.versLow(), h.versHigh()));
                }
                return false;
            }
            case RpcRdma.RDMA_MSG, RpcRdma.RDMA_MSGP -> {
                return dispatchInline(slot, buf, h);
            }
            case RpcRdma.RDMA_NOMSG -> {
                // No inline RPC header, yet Version 1 tells the direction by the chunks
                // (RFC 8166 §3.5.3): a Position-Zero Read chunk carries a call, the responder's
                // (its rdma_credit a request, as any call's); without one the decoder saw a
                // Reply chunk, which only a reply uses: ours to match, its rdma_credit a grant
                // (§3.3.3). RFC 8167 §4.1 forbids using the value only when the direction
                // cannot be told. A reply matching no call of ours is dropped, never answered
                // (RFC 8166 §4.5: only a responder sends RDMA_ERROR, and only to a call).
                if (h.readList().hasPositionZeroChunk()) {
                    return responder.onCall(h, slot, buf);
                }
                replyThroughChunk(h);
                return false;
            }
            default -> {
                // RDMA_DONE: it carries no RPC message, so its rdma_credit is neither a
                // request nor a grant (RFC 8167 §4.1); nothing to do without Read-Read.
                stats.creditsIgnored.increment();
                return false;
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
        CallRequest c = requester.matched(h.rpcXid(), h.credit());
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
            MemorySegment view = receives.view(slot, h.messageOffset(), h.messageLength());
            if (placed > 0 && !RpcReplyHeader.mayCarryResults(view)) {
                placed = 0; // lengths returned with no results at all (an echoed chunk): no result was placed
            }
            ReceivedMessage m = ApiBridge.access().message(view, conn, slot, x.offersWriteChunk() ? placed : -1);
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
        if (!c.deliverInline(conn, slot, receives.view(slot, h.messageOffset(), h.messageLength()))) {
            stats.lateReplies.increment(); // abandoned: matched, counted, released at once
            return false;
        }
        return true;
    }

    private void malformedReply(CallRequest c, String why) {
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
        CallRequest c = requester.matched(h.xid(), h.credit());
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
    private void receptacleGone(CallRequest c, RuntimeException e) {
        c.fail(new RpcRdmaException(conn + ": reply to call 0x" + Integer.toHexString(c.xid)
                + ": the caller's memory is gone (its DDP result could not be copied into the receptacle, or memory"
                + " exposed in place was freed while the call was out): " + e, e));
    }

    /**
     * A message whose transport header does not decode, of direction {@code type}
     * ({@link MessageDirection}): XIDs are per direction (RFC 8167 §2.4.1), so only a reply
     * is matched against our calls, and only a call is answered. A malformed reply fails the
     * call it answers (a requester never answers with RDMA_ERROR, RFC 8166 §4.5); one that
     * answers none is dropped. A malformed call is answered RDMA_ERROR if we serve calls.
     * When the bytes do not tell (another version, an XDR shape that does not parse), the
     * side's role decides, as in Linux: a server takes it for a call, a client for the reply
     * to its call of that XID if it has one, else for a call.
     * Without an XID, or a call nobody here can answer, the connection is dropped.
     */
    private void malformed(RpcRdmaProtocolException e, int type) {
        if (e.response() != ErrorResponse.DROP_CONNECTION && e.hasXid()) {
            boolean reply = type == RpcRdma.RPC_REPLY
                    || type == MessageDirection.UNKNOWN && conn.isClient() && requester.isOutstanding(e.xid());
            if (reply) {
                CallRequest c = requester.malformed(e.xid());
                if (c != null) {
                    stats.malformedReplies.increment();
                    c.fail(new MalformedReplyException(conn + ": malformed reply to call 0x"
                            + Integer.toHexString(e.xid()) + ": " + e.getMessage(), e));
                } else {
                    LOG.log(Level.DEBUG, "{0}: malformed reply matching no call of ours, dropped: {1}", conn,
                            e.getMessage());
                }
                return;
            }
            if (responder.canRespond()) {
                responder.sendError(e.xid(), e.response() == ErrorResponse.ERR_VERS
                        ? RpcRdma.ERR_VERS : RpcRdma.ERR_CHUNK);
                return;
            }
        }
        LOG.log(Level.WARNING, "{0}: dropping connection: {1}", conn, e.getMessage());
        conn.onLinkLost(new RpcRdmaException("peer sent a malformed message: " + e.getMessage(), e));
    }
}
