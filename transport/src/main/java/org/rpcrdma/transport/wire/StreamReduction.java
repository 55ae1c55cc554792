package org.rpcrdma.transport.wire;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.rpcrdma.xdr.Xdr;

/**
 * Chunk arithmetic as pure functions: how an RPC message's XDR stream is split into
 * inline bytes and chunks (RFC 8166 §3.4.1 "reducing" the stream) and put back together.
 *
 * <p>Rules (RFC 8166 §3.4.5, §3.4.6):
 * <ul>
 * <li>A chunk carries one whole DDP-eligible XDR data item, which starts 4-byte aligned.
 *     Its position is the item's byte offset in the full (unreduced) stream, measured
 *     from the first byte of the RPC XID.
 * <li>The item's XDR roundup is neither moved in the chunk nor left inline: the inline
 *     content after a chunk resumes 4-byte aligned, without pad. So a chunk of length L
 *     removes roundup(L) bytes from the stream. A responder never writes pad into a
 *     Write chunk: it writes exactly L bytes.
 * </ul>
 * In full-stream terms chunk i fills {@code [P_i, P_i + roundup(L_i))} and lands at
 * offset {@code P_i - sum_{j<i} roundup(L_j)} of the reduced stream.
 *
 * <p>Example: a 40-byte message with a 5-byte item at position 16 (3 pad bytes, 20..23)
 * reduces to inline bytes {@code [0,16) + [24,40)} (32 bytes) and a 5-byte chunk at
 * position 16; reassembly gives inline[0,16), chunk (5), zero pad (3), inline[16,32).
 */
public final class StreamReduction {
    private StreamReduction() {}

    /** One run of bytes of a reassembled message. */
    public sealed interface Piece permits Inline, Chunk, Pad {
        /** Bytes this piece contributes. */
        long length();
    }

    /** Bytes {@code [offset, offset + length)} of the reduced (inline) stream. */
    public record Inline(long offset, long length) implements Piece { }

    /**
     * All of chunk {@code index}: it sits at {@code position} of the full stream and was
     * cut from {@code inlineOffset} of the reduced stream.
     */
    public record Chunk(int index, long position, long inlineOffset, long length) implements Piece { }

    /** XDR roundup after a chunk: zero bytes that were never transferred. */
    public record Pad(long length) implements Piece { }

    /**
     * Bytes {@code [offset, offset + length)} of the original message: an inline run, or a
     * DDP-eligible item moved to a chunk (then {@code offset} is its chunk position).
     */
    public record Range(long offset, long length) { }

    /**
     * The result of reducing a message.
     *
     * @param inline       ranges of the original message that stay inline, in order
     * @param inlineLength total inline bytes (the reduced stream's length)
     * @param chunks       the items moved to chunks, in order; their positions are the
     *                     read-chunk positions to advertise
     */
    public record Reduced(List<Range> inline, long inlineLength, List<Range> chunks) { }

    /**
     * Splits a message of {@code messageLength} bytes into inline ranges and chunks.
     * {@code itemOffsets[i]}/{@code itemLengths[i]} designate the DDP-eligible items
     * (RFC 8166 §3.4.2), in ascending order.
     *
     * @throws IllegalArgumentException if an item is misaligned, overlaps the previous one,
     *         or (with its roundup) extends past the message: a caller bug
     */
    public static Reduced reduce(long messageLength, long[] itemOffsets, long[] itemLengths) {
        if (itemOffsets.length != itemLengths.length) {
            throw new IllegalArgumentException("offsets and lengths differ in count");
        }
        List<Range> inline = new ArrayList<>();
        List<Range> chunks = new ArrayList<>(itemOffsets.length);
        long cursor = 0;
        long inlineLength = 0;
        for (int i = 0; i < itemOffsets.length; i++) {
            long off = itemOffsets[i];
            long len = itemLengths[i];
            if (len < 0 || !Xdr.isAligned(off)) {
                throw new IllegalArgumentException("item " + i + " at " + off + " (length " + len
                        + ") is not a 4-byte aligned XDR item");
            }
            if (off < cursor) {
                throw new IllegalArgumentException("item " + i + " at " + off + " overlaps the previous one");
            }
            long end = off + Xdr.roundUp(len);
            if (end > messageLength) {
                throw new IllegalArgumentException("item " + i + " with its roundup ends at " + end
                        + ", past the " + messageLength + "-byte message");
            }
            if (off > cursor) {
                inline.add(new Range(cursor, off - cursor));
                inlineLength += off - cursor;
            }
            chunks.add(new Range(off, len));
            cursor = end;
        }
        if (cursor < messageLength) {
            inline.add(new Range(cursor, messageLength - cursor));
            inlineLength += messageLength - cursor;
        }
        return new Reduced(List.copyOf(inline), inlineLength, List.copyOf(chunks));
    }

    /**
     * Plans the reassembly of a message from {@code reducedLength} inline bytes and chunks
     * at {@code positions} with {@code lengths} (ascending positions, one per chunk).
     *
     * @param xid rdma_xid, for the error
     * @throws RpcRdmaProtocolException if a position is misaligned, goes down, falls
     *         inside the previous chunk, or lies beyond the inline bytes (ERR_CHUNK)
     */
    public static List<Piece> reassemble(int xid, long reducedLength, long[] positions, long[] lengths)
            throws RpcRdmaProtocolException {
        if (positions.length != lengths.length) {
            throw new IllegalArgumentException("positions and lengths differ in count");
        }
        List<Piece> pieces = new ArrayList<>(positions.length * 3 + 1);
        long removed = 0;
        long prevEnd = 0;
        long inlineCursor = 0;
        for (int i = 0; i < positions.length; i++) {
            long pos = positions[i];
            long len = lengths[i];
            if (pos < 0 || len < 0 || !Xdr.isAligned(pos)) {
                throw RpcRdmaProtocolException.of(ProtocolViolation.MISALIGNED_POSITION, true, xid,
                        "chunk " + i + " at position " + pos);
            }
            if (i > 0 && pos < positions[i - 1]) {
                throw RpcRdmaProtocolException.of(ProtocolViolation.DESCENDING_POSITION, true, xid,
                        "chunk " + i + " at " + pos + " after " + positions[i - 1]);
            }
            if (pos < prevEnd) {
                throw RpcRdmaProtocolException.of(ProtocolViolation.OVERLAPPING_READ_CHUNKS, true, xid,
                        "chunk " + i + " at " + pos + " starts inside the previous one, ending at " + prevEnd);
            }
            long at = pos - removed;
            if (at > reducedLength) {
                throw RpcRdmaProtocolException.of(ProtocolViolation.POSITION_BEYOND_MESSAGE, true, xid,
                        "chunk " + i + " at " + pos + " lands at " + at + " of " + reducedLength + " inline bytes");
            }
            if (at > inlineCursor) {
                pieces.add(new Inline(inlineCursor, at - inlineCursor));
            }
            pieces.add(new Chunk(i, pos, at, len));
            int pad = Xdr.padLength(len);
            if (pad > 0) {
                pieces.add(new Pad(pad));
            }
            inlineCursor = at;
            removed += Xdr.roundUp(len);
            prevEnd = pos + Xdr.roundUp(len);
        }
        if (reducedLength > inlineCursor) {
            pieces.add(new Inline(inlineCursor, reducedLength - inlineCursor));
        }
        return List.copyOf(pieces);
    }

    /**
     * Plans the reassembly of a received Read list's chunks {@code firstChunk..} into a
     * message of {@code reducedLength} inline bytes (pass 1 to skip a Position-Zero chunk,
     * whose contents are then the reduced stream).
     */
    public static List<Piece> reassemble(int xid, long reducedLength, ReadList reads, int firstChunk)
            throws RpcRdmaProtocolException {
        int n = reads.chunkCount() - firstChunk;
        long[] positions = new long[Math.max(n, 0)];
        long[] lengths = new long[positions.length];
        for (int i = 0; i < positions.length; i++) {
            positions[i] = reads.chunkPosition(firstChunk + i);
            lengths[i] = reads.chunkLength(firstChunk + i);
        }
        return reassemble(xid, reducedLength, positions, lengths);
    }

    /** Total length of the reassembled message. */
    public static long totalLength(List<Piece> pieces) {
        long n = 0;
        for (Piece p : pieces) {
            n += p.length();
        }
        return n;
    }

    /**
     * Copies the pieces into {@code dst} from offset 0: inline ranges from {@code inline},
     * chunk {@code i} from {@code chunks[i]}, pad as zeros.
     *
     * @return bytes written
     */
    public static long assemble(List<Piece> pieces, MemorySegment inline, MemorySegment[] chunks,
                                MemorySegment dst) {
        long at = 0;
        for (Piece p : pieces) {
            switch (p) {
                case Inline in -> MemorySegment.copy(inline, in.offset(), dst, at, in.length());
                case Chunk c -> MemorySegment.copy(chunks[c.index()], 0, dst, at, c.length());
                case Pad pad -> dst.asSlice(at, pad.length()).fill((byte) 0);
            }
            at += p.length();
        }
        return at;
    }

    /**
     * Whether a message can go in one Send: the transport header plus the RPC message must
     * fit the inline threshold (RFC 8166 §3.3.2).
     */
    public static boolean fitsInline(int headerLength, long messageLength, int inlineThreshold) {
        return headerLength + messageLength <= inlineThreshold;
    }
}
