package org.rpcrdma.transport.chunk;

import org.rpcrdma.transport.wire.ReadList;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.Xdr;

/**
 * Our limits on a received call's chunk lists, checked after the decoder's protocol checks
 * (positions aligned, non-descending, not overlapping, within the message: RFC 8166 §3.4.5)
 * and before anything is allocated or read (≈ the "Implementation limits" and "Sanity
 * checks" of Linux {@code xdr_check_read_list}). A call that breaks one is answered
 * RDMA_ERROR / ERR_CHUNK (RFC 8166 §4.5.2); nothing the peer claims is ever allocated
 * beyond {@code maxChunkBytes}.
 */
public final class ChunkRules {
    private ChunkRules() {}

    /**
     * Why we will not serve the call whose header is {@code h}, or null if we will.
     *
     * @param canRdma whether this side does RDMA Read and Write at all
     */
    public static String refusal(RpcRdmaHeader h, int maxChunkBytes, int maxSegments, boolean canRdma) {
        ReadList reads = h.readList();
        long segments = (long) reads.segmentCount() + h.writeList().segments().count()
                + (h.hasReplyChunk() ? h.replyChunk().count() : 0);
        if (segments > maxSegments) {
            return segments + " RDMA segments, over our limit of " + maxSegments;
        }
        if (reads.isEmpty()) {
            return null; // write and reply chunks: used only if the reply needs them
        }
        if (!canRdma) {
            return "read chunks, and this side does no RDMA Read";
        }
        if (h.proc() == RpcRdma.RDMA_NOMSG) {
            // further read chunks are allowed beside the Position-Zero one (implementation-
            // experience draft §3.4.1): they count towards the call's length
            long len = assembledLength(h);
            if (len < 8 || len > maxChunkBytes) {
                return "a long call of " + len + " bytes (limit " + maxChunkBytes + ")";
            }
            return null;
        }
        long total = h.messageLength();
        for (int c = 0; c < reads.chunkCount(); c++) {
            total += Xdr.roundUp(reads.chunkLength(c));
            if (total > maxChunkBytes) {
                return "read chunks that make the call over " + maxChunkBytes + " bytes";
            }
        }
        return null;
    }

    /**
     * The length of the call once its read chunks are in place: the inline part (for
     * RDMA_NOMSG, the Position-Zero Read chunk) plus each other chunk with its XDR pad.
     */
    static long assembledLength(RpcRdmaHeader h) {
        ReadList reads = h.readList();
        boolean nomsg = h.proc() == RpcRdma.RDMA_NOMSG;
        long total = nomsg ? reads.chunkLength(0) : h.messageLength();
        for (int c = nomsg ? 1 : 0; c < reads.chunkCount(); c++) {
            total += Xdr.roundUp(reads.chunkLength(c));
        }
        return total;
    }
}
