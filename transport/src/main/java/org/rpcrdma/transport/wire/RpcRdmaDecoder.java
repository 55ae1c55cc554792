package org.rpcrdma.transport.wire;

import static org.rpcrdma.transport.wire.ProtocolViolation.*;
import static org.rpcrdma.transport.wire.RpcRdma.*;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.rpcrdma.xdr.Xdr;

/**
 * Decodes a received RPC-over-RDMA Version 1 message (RFC 8166 §4) into a caller-owned
 * {@link RpcRdmaHeader}.
 *
 * <p>Contract: for any bytes, {@link #decode} either fills the header or throws one
 * {@link RpcRdmaProtocolException} naming the {@link ProtocolViolation} and the answer
 * it calls for. It never reads outside {@code [offset, offset + length)} and throws no
 * unchecked exception for any input (the mutation fuzz test holds it to that). Every
 * length check happens before the read it guards, as in Linux's
 * {@code svc_rdma_xdr_decode_req} / {@code xdr_check_read_list}; all counts are taken
 * as unsigned and compared in 64-bit arithmetic so no count can wrap.
 *
 * <p>Decoding an inline RDMA_MSG allocates nothing; only the error path allocates (the
 * exception, without a stack trace).
 *
 * <p>Checks, beyond the XDR shape: version (§4.2.2), proc (§4.2.4), read positions
 * aligned and non-descending (§3.4.5), read chunks that neither overlap nor lie beyond
 * the message they belong to, no Position-Zero Read chunk in RDMA_MSG and a chunk that
 * carries the message in RDMA_NOMSG (§3.5.3), inline RPC XID equal to rdma_xid (§4.2.1),
 * and for an inline Reply no Read list (§4.3.1) nor used Reply chunk (§4.3.3).
 * RDMA_MSGP is read (align, thresh) and then treated as RDMA_MSG; RDMA_DONE is
 * recognised and carries nothing (§4.6).
 */
public final class RpcRdmaDecoder {
    private RpcRdmaDecoder() {}

    /**
     * Decodes a buffer's remaining bytes. Offsets in the result are relative to the
     * buffer's position.
     */
    public static void decode(ByteBuffer buf, RpcRdmaHeader into) throws RpcRdmaProtocolException {
        decode(MemorySegment.ofBuffer(buf), 0, buf.remaining(), into);
    }

    /**
     * Decodes the message in {@code [offset, offset + length)} of {@code seg}.
     *
     * @param seg    receive buffer
     * @param offset where the transport header starts
     * @param length bytes received
     * @param into   header to fill; its contents are unspecified if this throws
     * @throws RpcRdmaProtocolException if the message is malformed
     * @throws IndexOutOfBoundsException if the range is outside {@code seg} (caller bug)
     */
    public static void decode(MemorySegment seg, long offset, int length, RpcRdmaHeader into)
            throws RpcRdmaProtocolException {
        java.util.Objects.checkFromIndexSize(offset, length, seg.byteSize());
        if (length >= INLINE_MSG_HEADER_BYTES + 8 && decodePlainMsg(seg, offset, length, into)) {
            return;
        }
        decodeAny(seg, offset, length, into);
    }

    /**
     * The message almost every Send carries: RDMA_MSG with three empty chunk lists and an
     * inline RPC CALL or REPLY with the same XID (RFC 8166 §4.3.1). Read as four 64-bit
     * words and one 32-bit word instead of nine 32-bit ones: under C1, the guest's JIT, every
     * access is a chain of calls, and the header codec took a third of an in-memory round
     * trip's CPU (async-profiler). Anything else (false) takes {@link #decodeAny},
     * which checks and names every fault; what this accepts, that would decode the same way.
     */
    static boolean decodePlainMsg(MemorySegment seg, long offset, int length, RpcRdmaHeader into) {
        long xidVers = Xdr.getLong(seg, offset);
        long creditProc = Xdr.getLong(seg, offset + 8);
        long lists = Xdr.getLong(seg, offset + 16); // Read list and Write list discriminators
        long replyXid = Xdr.getLong(seg, offset + 24); // Reply chunk discriminator, RPC xid
        int xid = (int) (xidVers >>> 32);
        if ((int) xidVers != RPCRDMA_VERSION || (int) creditProc != RDMA_MSG || lists != 0
                || replyXid >>> 32 != 0 || (int) replyXid != xid) {
            return false;
        }
        int msgType = Xdr.getInt(seg, offset + INLINE_MSG_HEADER_BYTES + 4);
        if (msgType != RPC_CALL && msgType != RPC_REPLY) {
            return false;
        }
        into.clear();
        into.setFixed(xid, RPCRDMA_VERSION, (int) (creditProc >>> 32), RDMA_MSG);
        into.setDecoded(INLINE_MSG_HEADER_BYTES, offset + INLINE_MSG_HEADER_BYTES, length - INLINE_MSG_HEADER_BYTES,
                xid, msgType);
        return true;
    }

    /** Decodes any message, checking every rule; {@link #decode} without its fast path. */
    static void decodeAny(MemorySegment seg, long offset, int length, RpcRdmaHeader into)
            throws RpcRdmaProtocolException {
        final long end = offset + length;

        if (length < 4) {
            throw fail(HEADER_TRUNCATED, false, 0, "only " + length + " bytes, no rdma_xid");
        }
        int xid = Xdr.getInt(seg, offset);
        if (length < 8) {
            throw fail(HEADER_TRUNCATED, true, xid, "only " + length + " bytes, no rdma_vers");
        }
        int vers = Xdr.getInt(seg, offset + 4);
        // RFC 8166 §4.5.1: check the version before anything else in the header.
        if (vers != RPCRDMA_VERSION) {
            throw fail(BAD_VERSION, true, xid, "rdma_vers " + Integer.toUnsignedString(vers));
        }
        if (length < FIXED_MAXSZ * Xdr.UNIT) {
            throw fail(FIXED_HEADER_TRUNCATED, true, xid, "only " + length + " bytes, fixed header is 16");
        }
        int credit = Xdr.getInt(seg, offset + 8);
        int proc = Xdr.getInt(seg, offset + 12);
        into.clear();
        into.setFixed(xid, vers, credit, proc);
        long p = offset + FIXED_MAXSZ * Xdr.UNIT;

        switch (proc) {
            case RDMA_MSG, RDMA_NOMSG -> p = decodeChunkLists(seg, p, end, xid, into);
            case RDMA_MSGP -> {
                // RFC 8166 §4.6.1: read align/thresh, then treat as RDMA_MSG.
                if (end - p < 8) {
                    throw fail(MSGP_TRUNCATED, true, xid, "no rdma_align/rdma_thresh");
                }
                into.setMsgp(Xdr.getInt(seg, p), Xdr.getInt(seg, p + 4));
                p = decodeChunkLists(seg, p + 8, end, xid, into);
            }
            case RDMA_DONE -> {
                // RFC 8166 §4.6.2: Read-Read is gone; nothing to do with it.
                into.setDecoded((int) (p - offset), p, 0, 0, RpcRdmaHeader.MSG_TYPE_UNKNOWN);
                return;
            }
            case RDMA_ERROR -> {
                p = decodeError(seg, p, end, xid, into);
                into.setDecoded((int) (p - offset), p, 0, 0, RpcRdmaHeader.MSG_TYPE_UNKNOWN);
                return;
            }
            default -> throw fail(BAD_PROC, true, xid, "rdma_proc " + Integer.toUnsignedString(proc));
        }

        int headerLength = (int) (p - offset);
        if (proc == RDMA_NOMSG) {
            checkNomsg(into, xid);
            into.setDecoded(headerLength, p, 0, 0, RpcRdmaHeader.MSG_TYPE_UNKNOWN);
            return;
        }
        checkInlineMessage(seg, p, end, xid, into, headerLength);
    }

    // ---- lists ----

    private static long decodeChunkLists(MemorySegment seg, long p, long end, int xid, RpcRdmaHeader h)
            throws RpcRdmaProtocolException {
        p = decodeReadList(seg, p, end, xid, h.readList());
        p = decodeWriteList(seg, p, end, xid, h.writeList());
        return decodeReplyChunk(seg, p, end, xid, h);
    }

    /**
     * Read list: {@code 1 - PHLOO - ... - 1 - PHLOO - 0}. Positions must be 4-byte
     * aligned and never go down (RFC 8166 §3.4.5).
     */
    static long decodeReadList(MemorySegment seg, long p, long end, int xid, ReadList list)
            throws RpcRdmaProtocolException {
        long prevPosition = 0;
        while (true) {
            if (end - p < 4) {
                throw fail(READ_LIST_TRUNCATED, true, xid, "no discriminator after "
                        + list.segmentCount() + " read segments");
            }
            int present = Xdr.getInt(seg, p);
            p += 4;
            if (present == 0) {
                return p;
            }
            if (present != 1) {
                throw fail(BAD_DISCRIMINATOR, true, xid, "read list discriminator "
                        + Integer.toUnsignedString(present));
            }
            if (end - p < READSEG_MAXSZ * Xdr.UNIT) {
                throw fail(READ_LIST_TRUNCATED, true, xid, "read segment "
                        + list.segmentCount() + " cut short");
            }
            if (list.segmentCount() == list.capacity()) {
                throw fail(TOO_MANY_SEGMENTS, true, xid, "more than " + list.capacity()
                        + " read segments");
            }
            int position = Xdr.getInt(seg, p);
            long pos = Integer.toUnsignedLong(position);
            if (!Xdr.isAligned(pos)) {
                throw fail(MISALIGNED_POSITION, true, xid, "read position " + pos);
            }
            if (pos < prevPosition) {
                throw fail(DESCENDING_POSITION, true, xid, "read position " + pos
                        + " after " + prevPosition);
            }
            prevPosition = pos;
            list.addUnchecked(position, Xdr.getInt(seg, p + 4), Xdr.getInt(seg, p + 8),
                    Xdr.getLong(seg, p + 12));
            p += READSEG_MAXSZ * Xdr.UNIT;
        }
    }

    /** Write list: {@code 1 - N - HLOO ... - 1 - N - HLOO ... - 0}; N may be 0. */
    static long decodeWriteList(MemorySegment seg, long p, long end, int xid, WriteList list)
            throws RpcRdmaProtocolException {
        while (true) {
            if (end - p < 4) {
                throw fail(WRITE_LIST_TRUNCATED, true, xid, "no discriminator after "
                        + list.chunkCount() + " write chunks");
            }
            int present = Xdr.getInt(seg, p);
            p += 4;
            if (present == 0) {
                return p;
            }
            if (present != 1) {
                throw fail(BAD_DISCRIMINATOR, true, xid, "write list discriminator "
                        + Integer.toUnsignedString(present));
            }
            if (end - p < 4) {
                throw fail(WRITE_LIST_TRUNCATED, true, xid, "no segment count for write chunk "
                        + list.chunkCount());
            }
            // A chunk of no segments is allowed: deployed responders return one for a result
            // they did not use (a failed NFS READ; implementation-experience draft §3.8).
            long n = Xdr.getUnsignedInt(seg, p);
            p += 4;
            if (n * (SEGMENT_MAXSZ * Xdr.UNIT) > end - p) {
                throw fail(WRITE_LIST_TRUNCATED, true, xid, "write chunk " + list.chunkCount()
                        + " claims " + n + " segments, " + (end - p) + " bytes left");
            }
            if (list.chunkCount() == list.chunkCapacity()) {
                throw fail(TOO_MANY_CHUNKS, true, xid, "more than " + list.chunkCapacity()
                        + " write chunks");
            }
            if (n > list.segmentCapacity() - list.segments().count()) {
                throw fail(TOO_MANY_SEGMENTS, true, xid, "write chunk " + list.chunkCount()
                        + " has " + n + " segments, room for "
                        + (list.segmentCapacity() - list.segments().count()));
            }
            list.beginChunkUnchecked();
            for (long i = 0; i < n; i++) {
                list.addSegmentUnchecked(Xdr.getInt(seg, p), Xdr.getInt(seg, p + 4), Xdr.getLong(seg, p + 8));
                p += SEGMENT_MAXSZ * Xdr.UNIT;
            }
        }
    }

    /** Reply chunk: {@code 0} or {@code 1 - N - HLOO ...}. */
    static long decodeReplyChunk(MemorySegment seg, long p, long end, int xid, RpcRdmaHeader h)
            throws RpcRdmaProtocolException {
        if (end - p < 4) {
            throw fail(REPLY_CHUNK_TRUNCATED, true, xid, "no discriminator");
        }
        int present = Xdr.getInt(seg, p);
        p += 4;
        if (present == 0) {
            h.hasReplyChunk(false);
            return p;
        }
        if (present != 1) {
            throw fail(BAD_DISCRIMINATOR, true, xid, "reply chunk discriminator "
                    + Integer.toUnsignedString(present));
        }
        if (end - p < 4) {
            throw fail(REPLY_CHUNK_TRUNCATED, true, xid, "no segment count");
        }
        long n = Xdr.getUnsignedInt(seg, p);
        p += 4;
        if (n == 0) {
            throw fail(EMPTY_CHUNK, true, xid, "reply chunk has no segments");
        }
        if (n * (SEGMENT_MAXSZ * Xdr.UNIT) > end - p) {
            throw fail(REPLY_CHUNK_TRUNCATED, true, xid, "reply chunk claims " + n
                    + " segments, " + (end - p) + " bytes left");
        }
        SegmentList list = h.replyChunk();
        if (n > list.capacity()) {
            throw fail(TOO_MANY_SEGMENTS, true, xid, "reply chunk has " + n + " segments, room for "
                    + list.capacity());
        }
        for (long i = 0; i < n; i++) {
            list.addUnchecked(Xdr.getInt(seg, p), Xdr.getInt(seg, p + 4), Xdr.getLong(seg, p + 8));
            p += SEGMENT_MAXSZ * Xdr.UNIT;
        }
        h.hasReplyChunk(true);
        return p;
    }

    private static long decodeError(MemorySegment seg, long p, long end, int xid, RpcRdmaHeader h)
            throws RpcRdmaProtocolException {
        if (end - p < 4) {
            throw fail(ERROR_TRUNCATED, true, xid, "no rdma_err");
        }
        int code = Xdr.getInt(seg, p);
        p += 4;
        switch (code) {
            case ERR_VERS -> {
                if (end - p < 8) {
                    throw fail(ERROR_TRUNCATED, true, xid, "ERR_VERS without vers_low/vers_high");
                }
                h.setError(code, Xdr.getInt(seg, p), Xdr.getInt(seg, p + 4));
                return p + 8;
            }
            case ERR_CHUNK -> {
                h.setError(code, 0, 0);
                return p;
            }
            default -> throw fail(BAD_ERROR_CODE, true, xid, "rdma_err " + Integer.toUnsignedString(code));
        }
    }

    // ---- semantic checks ----

    private static void checkNomsg(RpcRdmaHeader h, int xid) throws RpcRdmaProtocolException {
        ReadList reads = h.readList();
        if (reads.hasPositionZeroChunk()) {
            // A Long Call: further read chunks are placed into the message carried by the
            // Position-Zero chunk.
            checkReadChunkPositions(reads, 1, reads.chunkLength(0), xid);
            return;
        }
        // RFC 8166 §3.5.3 / §4.5.2: without a Position-Zero Read chunk the message can
        // only be a Reply in the Reply chunk.
        if (!h.hasReplyChunk()) {
            throw fail(NOMSG_WITHOUT_CHUNK, true, xid,
                    "RDMA_NOMSG has neither a Position-Zero Read chunk nor a Reply chunk");
        }
        if (!reads.isEmpty()) {
            throw fail(READ_LIST_IN_REPLY, true, xid,
                    "RDMA_NOMSG Reply (no Position-Zero chunk) carries a Read list");
        }
    }

    private static void checkInlineMessage(MemorySegment seg, long p, long end, int xid, RpcRdmaHeader h,
                                           int headerLength) throws RpcRdmaProtocolException {
        ReadList reads = h.readList();
        if (reads.hasPositionZeroChunk()) {
            throw fail(POSITION_ZERO_IN_MSG, true, xid, "Position-Zero Read chunk in "
                    + procName(h.proc()));
        }
        // An inline RPC message starts with xid and msg_type (RFC 5531 §9).
        if (end - p < 8) {
            throw fail(RPC_MESSAGE_TRUNCATED, true, xid, (end - p) + " bytes of RPC message");
        }
        int rpcXid = Xdr.getInt(seg, p);
        if (rpcXid != xid) {
            throw fail(XID_MISMATCH, true, xid, "RPC xid 0x" + Integer.toHexString(rpcXid)
                    + " != rdma_xid 0x" + Integer.toHexString(xid));
        }
        int msgType = Xdr.getInt(seg, p + 4);
        if (msgType == RPC_REPLY) {
            if (!reads.isEmpty()) {
                throw fail(READ_LIST_IN_REPLY, true, xid, "Reply carries a Read list");
            }
            if (h.hasReplyChunk() && h.replyChunk().totalLength() != 0) {
                throw fail(REPLY_CHUNK_IN_MSG_REPLY, true, xid, "RDMA_MSG Reply used the Reply chunk");
            }
        } else if (msgType != RPC_CALL) {
            throw fail(BAD_MSG_TYPE, true, xid, "msg_type " + Integer.toUnsignedString(msgType));
        }
        int messageLength = (int) (end - p);
        checkReadChunkPositions(reads, 0, messageLength, xid);
        h.setDecoded(headerLength, p, messageLength, rpcXid, msgType);
    }

    /**
     * Checks that read chunks {@code first..} fit the message they are inserted into,
     * whose reduced (transferred) length is {@code bound}: a chunk at position P with
     * length L fills [P, P + roundup(L)) of the full XDR stream, so the next chunk may
     * not start before that, and P minus the chunks before it must not lie past the
     * reduced message (cf. Linux {@code pcl_check_read_chunk_positions}).
     */
    static void checkReadChunkPositions(ReadList reads, int first, long bound, int xid)
            throws RpcRdmaProtocolException {
        long removed = 0;
        long prevEnd = 0;
        for (int c = first; c < reads.chunkCount(); c++) {
            long pos = reads.chunkPosition(c);
            long len = reads.chunkLength(c);
            if (pos < prevEnd) {
                throw fail(OVERLAPPING_READ_CHUNKS, true, xid, "read chunk at " + pos
                        + " starts inside the previous chunk, which ends at " + prevEnd);
            }
            if (pos - removed > bound) {
                throw fail(POSITION_BEYOND_MESSAGE, true, xid, "read chunk at " + pos
                        + " lands at offset " + (pos - removed) + " of a " + bound + "-byte message");
            }
            removed += Xdr.roundUp(len);
            prevEnd = pos + Xdr.roundUp(len);
        }
    }

    private static RpcRdmaProtocolException fail(ProtocolViolation v, boolean hasXid, int xid, String detail) {
        return RpcRdmaProtocolException.of(v, hasXid, xid, detail);
    }
}
