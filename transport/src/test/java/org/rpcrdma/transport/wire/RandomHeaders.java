package org.rpcrdma.transport.wire;

import static org.rpcrdma.transport.wire.RpcRdma.*;

import java.util.SplittableRandom;
import org.rpcrdma.xdr.Xdr;

/**
 * Seeded generator of valid RPC-over-RDMA messages (header + inline RPC message), every
 * proc and list shape, obeying the rules the decoder enforces, so
 * {@code decode(encode(h))} must succeed and give {@code h} back.
 */
final class RandomHeaders {
    private RandomHeaders() {}

    /** A generated message: the header and the full wire bytes (header + RPC message). */
    record Sample(RpcRdmaHeader header, byte[] bytes, int rpcLength) { }

    static Sample next(SplittableRandom rnd) {
        RpcRdmaHeader h = Wire.bigHeader().clear();
        int xid = rnd.nextInt();
        h.xid(xid).credit(rnd.nextInt(4) == 0 ? rnd.nextInt() : rnd.nextInt(256));
        int kind = rnd.nextInt(10);
        int rpcLength = 0;
        int msgType = -1;
        switch (kind) {
            case 0, 1, 2, 3 -> { // RDMA_MSG Call: read chunks, write list, reply chunk
                h.proc(RDMA_MSG);
                rpcLength = 8 + 4 * rnd.nextInt(40);
                msgType = RPC_CALL;
                addReadChunks(rnd, h.readList(), rpcLength, 4);
                addWriteChunks(rnd, h.writeList());
                maybeReplyChunk(rnd, h, false);
            }
            case 4, 5 -> { // RDMA_MSG Reply: returned write chunks, empty/zero-length reply chunk
                h.proc(RDMA_MSG);
                rpcLength = 8 + 4 * rnd.nextInt(40);
                msgType = RPC_REPLY;
                addWriteChunks(rnd, h.writeList());
                maybeReplyChunk(rnd, h, true);
            }
            case 6 -> { // RDMA_MSGP, decoded as RDMA_MSG
                h.msgp(rnd.nextInt(), rnd.nextInt());
                rpcLength = 8 + 4 * rnd.nextInt(8);
                msgType = rnd.nextBoolean() ? RPC_CALL : RPC_REPLY;
                if (msgType == RPC_CALL) {
                    addReadChunks(rnd, h.readList(), rpcLength, 2);
                }
            }
            case 7 -> { // RDMA_NOMSG Long Call (P0) or Long Reply (reply chunk)
                h.proc(RDMA_NOMSG);
                if (rnd.nextBoolean()) {
                    ReadList r = h.readList();
                    int segs = 1 + rnd.nextInt(4);
                    long p0 = 0;
                    for (int i = 0; i < segs; i++) {
                        long len = 4 + rnd.nextInt(8192);
                        r.add(0, rnd.nextInt(), len, rnd.nextLong());
                        p0 += len;
                    }
                    addReadChunks(rnd, r, p0, 2);
                    addWriteChunks(rnd, h.writeList());
                    maybeReplyChunk(rnd, h, false);
                } else {
                    h.hasReplyChunk(true);
                    addSegments(rnd, h.replyChunk(), 1 + rnd.nextInt(6));
                }
            }
            case 8 -> { // RDMA_ERROR
                if (rnd.nextBoolean()) {
                    h.errVers(rnd.nextInt(), rnd.nextInt());
                } else {
                    h.errChunk();
                }
            }
            default -> h.proc(RDMA_DONE);
        }
        byte[] header = Wire.encode(h);
        byte[] rpc = new byte[rpcLength];
        if (rpcLength > 0) {
            rnd.nextBytes(rpc);
            java.nio.ByteBuffer.wrap(rpc).putInt(0, xid).putInt(4, msgType);
        }
        return new Sample(h, Wire.cat(header, rpc), rpcLength);
    }

    /**
     * Adds up to {@code maxChunks} read chunks (1-3 segments each, same position) placed
     * consistently into a reduced stream of {@code reducedLength} bytes.
     */
    private static void addReadChunks(SplittableRandom rnd, ReadList r, long reducedLength, int maxChunks) {
        int chunks = rnd.nextInt(maxChunks + 1);
        long inlineAt = 0;   // where in the reduced stream the next chunk lands
        long removed = 0;    // bytes of earlier chunks incl. roundup
        for (int c = 0; c < chunks; c++) {
            long room = reducedLength - inlineAt;
            long gap = 4 * (long) rnd.nextInt((int) Math.min(room / 4, 16) + 1);
            inlineAt += gap;
            long position = inlineAt + removed;
            if (position == 0) {
                // Position 0 would make a Position-Zero chunk: start one word later instead.
                if (reducedLength - inlineAt < 4) {
                    return;
                }
                inlineAt += 4;
                position += 4;
            }
            int segs = 1 + rnd.nextInt(3);
            long len = 0;
            for (int s = 0; s < segs; s++) {
                long l = rnd.nextInt(3) == 0 ? rnd.nextInt(8) : rnd.nextInt(1 << 20);
                r.add((int) position, rnd.nextInt(), l, rnd.nextLong());
                len += l;
            }
            removed += Xdr.roundUp(len);
        }
    }

    private static void addWriteChunks(SplittableRandom rnd, WriteList w) {
        int chunks = rnd.nextInt(4);
        for (int c = 0; c < chunks; c++) {
            w.beginChunk();
            int segs = 1 + rnd.nextInt(rnd.nextInt(8) == 0 ? 16 : 4);
            for (int s = 0; s < segs; s++) {
                w.addSegment(rnd.nextInt(), rnd.nextInt(5) == 0 ? 0 : Integer.toUnsignedLong(rnd.nextInt()),
                        rnd.nextLong());
            }
        }
    }

    private static void maybeReplyChunk(SplittableRandom rnd, RpcRdmaHeader h, boolean reply) {
        if (rnd.nextInt(3) != 0) {
            return;
        }
        h.hasReplyChunk(true);
        int segs = 1 + rnd.nextInt(4);
        for (int s = 0; s < segs; s++) {
            h.replyChunk().add(rnd.nextInt(), reply ? 0 : rnd.nextInt(1 << 16), rnd.nextLong());
        }
    }

    private static void addSegments(SplittableRandom rnd, SegmentList list, int n) {
        for (int s = 0; s < n; s++) {
            list.add(rnd.nextInt(), Integer.toUnsignedLong(rnd.nextInt()), rnd.nextLong());
        }
    }
}
