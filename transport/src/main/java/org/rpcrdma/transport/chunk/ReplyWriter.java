package org.rpcrdma.transport.chunk;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.List;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.SendQueue;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaEncoder;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.SegmentList;
import org.rpcrdma.transport.wire.WriteList;

/**
 * Sends the reply to a call that offered chunks (≈ Linux {@code svc_rdma_sendto} with
 * {@code svc_rdma_send_write_list} / {@code svc_rdma_send_reply_chunk}):
 * <ul>
 * <li>a reply that fits inline goes inline as RDMA_MSG, even when a Reply chunk was
 *     offered (the responder chooses; implementation-experience draft §2.5.1);</li>
 * <li>one that does not goes by RDMA Write into the Reply chunk, then an RDMA_NOMSG Send
 *     (RFC 8166 §3.5.4) — the Send follows the Writes on the same send queue, so the
 *     requester sees the data placed when the Send arrives; over verbs the Writes and the
 *     Send go in one ibv_post_send when a send context is free (as svc_rdma_sendto
 *     chains them), one system call instead of one per request;</li>
 * <li>DDP result k goes into write chunk k by RDMA Write, never its XDR pad (§3.4.6;
 *     implementation-experience draft §3.8: the first result to the first chunk, and so
 *     on); with a Reply chunk as well when the rest does not fit inline.</li>
 * </ul>
 * Every write chunk offered is returned with its segment count unchanged and each
 * segment's length set to the bytes written there, 0 when unused (RFC 8166 §4.3.2).
 */
public final class ReplyWriter {
    private final Link link;
    private final RdmaQueue rdma;
    private final SendQueue sends;
    private final int sendInline;
    private final int maxChunkBytes;
    private final StatsCounters stats;
    /** Replies' state kept for reuse (guarded by itself): a chunked reply allocates none once warm. */
    private final ArrayDeque<Reply> spare = new ArrayDeque<>();
    private static final int SPARE_REPLIES = 8;

    /**
     * One chunked reply on its way: its transport header, what its Send carries, and the
     * callbacks of its RDMA job (made once, with the object). Back to {@code spare} once its
     * job finished (its Send ran before that); the Send took what it needs of the header by then (it is
     * encoded when posted, or copied when it must wait for a send context).
     */
    private final class Reply {
        final RpcRdmaHeader h = RpcRdmaHeader.forInlineThreshold(sendInline);
        MemorySegment inline;
        int invalidateRkey;
        ChunkBuffer buf;
        final Runnable send = this::send;
        final Runnable finish = this::finish;
        /** A dropped job (the connection is lost): its Send may still be about to run, so this one is not reused. */
        final Runnable drop = this::release;

        private void send() {
            sends.sendWithHeader(h, inline, invalidateRkey);
        }

        private boolean release() {
            ChunkBuffer b = buf;
            if (b == null) {
                return false;
            }
            buf = null;
            b.release();
            return true;
        }

        private void finish() {
            if (!release()) {
                return;
            }
            inline = null;
            synchronized (spare) {
                if (spare.size() < SPARE_REPLIES) {
                    spare.addFirst(this);
                }
            }
        }
    }

    private Reply reply() {
        Reply r;
        synchronized (spare) {
            r = spare.pollFirst();
        }
        return r != null ? r : new Reply();
    }

    public ReplyWriter(Link link, RdmaQueue rdma, SendQueue sends, int sendInline, int maxChunkBytes, StatsCounters stats) {
        this.link = link;
        this.rdma = rdma;
        this.sends = sends;
        this.sendInline = sendInline;
        this.maxChunkBytes = maxChunkBytes;
        this.stats = stats;
    }

    /**
     * Sends {@code reply} (and {@code payloads.get(k)} into write chunk k) for call
     * {@code xid}. Returns null once it is on its way, or why it cannot be sent (nothing was
     * sent: the caller answers ERR_CHUNK). The segments may be reused once this returns.
     */
    public String send(int xid, int credit, MemorySegment reply, CallChunks chunks, List<MemorySegment> payloads) {
        int n = payloads.size();
        if (n > chunks.writes.chunkCount()) {
            return "its " + n + " DDP results are more than the call's " + chunks.writes.chunkCount()
                    + " write chunks";
        }
        long payloadLength = 0;
        for (int k = 0; k < n; k++) {
            long len = payloads.get(k).byteSize();
            if (len > chunks.writeCapacity(k)) {
                return "its DDP result " + k + " of " + len + " bytes is over the " + chunks.writeCapacity(k)
                        + " bytes of the call's write chunk " + k;
            }
            payloadLength += len;
        }
        WriteList offered = chunks.writes;
        Reply r = reply();
        RpcRdmaHeader h = r.h;
        if (offered.chunkCount() > h.writeList().chunkCapacity()
                || offered.segments().count() > h.writeList().segmentCapacity()
                || chunks.reply != null && chunks.reply.count() > h.replyChunk().capacity()) {
            giveBack(r);
            return "its transport header alone is over the inline threshold of " + sendInline;
        }
        h.clear().xid(xid).credit(credit).proc(RpcRdma.RDMA_MSG);
        WriteList returned = h.writeList();
        returned.copyFrom(offered);
        for (int c = 0; c < returned.chunkCount(); c++) {
            returned.fillChunk(c, c < n ? payloads.get(c).byteSize() : 0);
        }
        long length = reply.byteSize();
        boolean viaReplyChunk = RpcRdmaEncoder.encodedLength(h) + length > sendInline;
        if (viaReplyChunk) {
            if (chunks.reply == null) {
                giveBack(r);
                return "it is " + length + " bytes, over the " + (sendInline - RpcRdmaEncoder.encodedLength(h))
                        + " bytes that fit the negotiated inline threshold of " + sendInline
                        + ", and the call offered no Reply chunk";
            }
            if (length > chunks.replyCapacity()) {
                giveBack(r);
                return "it is " + length + " bytes, over the " + chunks.replyCapacity()
                        + " bytes of the call's Reply chunk";
            }
            h.proc(RpcRdma.RDMA_NOMSG).hasReplyChunk(true);
            SegmentList rc = h.replyChunk();
            rc.copyFrom(chunks.reply);
            long left = length;
            for (int i = 0; i < rc.count(); i++) {
                long used = Math.min(left, rc.length(i));
                rc.setLength(i, used);
                left -= used;
            }
        }
        if (RpcRdmaEncoder.encodedLength(h) > sendInline) {
            giveBack(r);
            return "its transport header alone is over the inline threshold of " + sendInline;
        }
        if (!viaReplyChunk && n == 0) {
            sends.sendWithHeader(h, reply, chunks.invalidateRkey);
            giveBack(r);
            return null;
        }
        if (link.rdmaDepth() == 0) {
            giveBack(r);
            return "it needs RDMA Write, which this side does not do";
        }
        if (payloadLength + length > maxChunkBytes) {
            giveBack(r);
            return "it would write " + (payloadLength + length) + " bytes, over our limit of " + maxChunkBytes;
        }
        // One buffer: [payload 0 | payload 1 | ... | reply]. The inline reply (DDP case) is
        // sent from it too, after the Writes are posted, when the caller's segments may be gone.
        ChunkBuffer buf = link.allocateChunk(payloadLength + length);
        MemorySegment mem = buf.segment();
        long at = 0;
        for (int k = 0; k < n; k++) { // by index: an iterator would be an object per reply
            MemorySegment p = payloads.get(k);
            MemorySegment.copy(p, 0, mem, at, p.byteSize());
            at += p.byteSize();
        }
        MemorySegment.copy(reply, 0, mem, payloadLength, length);
        RdmaQueue.Job job = rdma.job(buf, true, returned.segments().count()
                + (viaReplyChunk ? h.replyChunk().count() : 0));
        at = 0;
        for (int k = 0; k < n; k++) {
            job.addSegments(returned.segments(), returned.chunkFirstSegment(k), returned.chunkSegmentCount(k), at);
            at += payloads.get(k).byteSize();
        }
        if (viaReplyChunk) {
            job.addSegments(h.replyChunk(), 0, h.replyChunk().count(), payloadLength);
            stats.replyChunksUsed.increment();
        }
        r.inline = viaReplyChunk ? null : mem.asSlice(payloadLength, length);
        r.invalidateRkey = chunks.invalidateRkey;
        r.buf = buf;
        // ORDER: the Send (with Invalidate, RFC 8797 §7) follows the Writes on the same queue
        job.posted = r.send;
        job.done = r.finish;
        job.abandoned = r.drop;
        // the Writes and, when a send context is free, the Send after them: one post
        boolean chained = link.openSendChain();
        try {
            rdma.submit(job);
        } finally {
            if (chained) {
                link.closeSendChain();
            }
        }
        return null;
    }

    /** {@code r} was not used for a job (its header may have gone into a Send: encoded or copied by now). */
    private void giveBack(Reply r) {
        synchronized (spare) {
            if (spare.size() < SPARE_REPLIES) {
                spare.addFirst(r);
            }
        }
    }
}
