package org.rpcrdma.transport.chunk;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.ApiBridge;
import org.rpcrdma.transport.wire.ReadList;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.transport.wire.SegmentList;
import org.rpcrdma.xdr.Xdr;

/**
 * Assembles a call that came with read chunks into one logical RPC message in chunk memory
 * (≈ Linux {@code svc_rdma_process_read_list}): the inline part is copied out of the
 * receive buffer at once (so the buffer goes back to the pool now, not after the RDMA
 * Reads), each read chunk is pulled by RDMA Read to its XDR position, and the roundup pad
 * after a chunk is zeros we write ourselves: it is neither transferred nor inlined, and the
 * inline content resumes 4-byte aligned (RFC 8166 §3.4.5; implementation-experience draft
 * §3.6-3.7). A Position-Zero Read chunk carries the call (RDMA_NOMSG, §3.5.3), less the
 * data of any other read chunks, which are pulled into it at their positions.
 *
 * <p>Call only after {@link ChunkRules#refusal} accepted the header: positions, bounds and
 * the total length are trusted here.
 */
public final class ReadChunkPuller {
    private final Link link;
    private final RdmaQueue rdma;

    public ReadChunkPuller(Link link, RdmaQueue rdma) {
        this.link = link;
        this.rdma = rdma;
    }

    /**
     * Starts pulling the call of header {@code h} (inline bytes in {@code buf}). When every
     * Read has completed, {@code pulled} gets the assembled message (release it to free the
     * chunk memory); if the connection is lost first, the memory is freed and nothing is
     * called. Everything needed from {@code buf} and {@code h} is taken before this returns.
     */
    public void pull(RpcRdmaHeader h, MemorySegment buf, Consumer<ReceivedMessage> pulled) {
        long length = ChunkRules.assembledLength(h);
        ChunkBuffer dst = link.allocateChunk(length);
        MemorySegment out = dst.segment();
        ReadList reads = h.readList();
        SegmentList segs = reads.segments();
        // a Position-Zero segment may be cut in two around each other chunk
        RdmaQueue.Job job = rdma.job(dst, false, segs.count() + reads.chunkCount());
        boolean ok = false;
        try {
            if (h.proc() == RpcRdma.RDMA_NOMSG) {
                // The Position-Zero chunk carries the call without the other chunks' data and
                // pads (implementation-experience draft §3.4.1): its bytes are read straight to
                // their places around them, as inline bytes are copied for RDMA_MSG below.
                int pz = reads.chunkSegmentCount(0);
                long r = 0; // next byte of the Position-Zero chunk not yet placed
                long d = 0; // XDR stream position of the next byte of the assembled message
                for (int c = 1; c < reads.chunkCount(); c++) {
                    long pos = reads.chunkPosition(c);
                    addRange(job, segs, pz, r, pos - d, d);
                    r += pos - d;
                    d = pos;
                    long len = reads.chunkLength(c);
                    job.addSegments(segs, reads.chunkFirstSegment(c), reads.chunkSegmentCount(c), d);
                    long padded = Xdr.roundUp(len);
                    out.asSlice(d + len, padded - len).fill((byte) 0);
                    d += padded;
                }
                addRange(job, segs, pz, r, reads.chunkLength(0) - r, d);
            } else {
                long in = h.messageOffset(); // next inline byte not yet copied
                long d = 0; // XDR stream position of the next byte of the assembled message
                for (int c = 0; c < reads.chunkCount(); c++) {
                    long pos = reads.chunkPosition(c);
                    long inline = pos - d;
                    MemorySegment.copy(buf, in, out, d, inline);
                    in += inline;
                    d = pos;
                    long len = reads.chunkLength(c);
                    job.addSegments(segs, reads.chunkFirstSegment(c), reads.chunkSegmentCount(c), d);
                    long padded = Xdr.roundUp(len);
                    out.asSlice(d + len, padded - len).fill((byte) 0);
                    d += padded;
                }
                MemorySegment.copy(buf, in, out, d, h.messageOffset() + h.messageLength() - in);
            }
            ok = true;
        } finally {
            if (!ok) {
                dst.release();
            }
        }
        Runnable free = dst::release;
        job.done = () -> pulled.accept(ApiBridge.access().message(out, free, -1));
        job.abandoned = free;
        rdma.submit(job);
    }

    /**
     * Reads bytes {@code [from, from + n)} of the chunk made of segments {@code [0, count)}
     * of {@code segs} to {@code at}: a Read for each piece of a segment in that range.
     */
    private static void addRange(RdmaQueue.Job job, SegmentList segs, int count, long from, long n, long at) {
        long start = 0; // chunk offset where segment i starts
        for (int i = 0; i < count && n > 0; i++) {
            long len = segs.length(i);
            long lo = Math.max(from, start);
            long hi = Math.min(from + n, start + len);
            if (lo < hi) {
                job.add(at + (lo - from), (int) (hi - lo), segs.handle(i), segs.offset(i) + (lo - start));
            }
            start += len;
        }
    }
}
