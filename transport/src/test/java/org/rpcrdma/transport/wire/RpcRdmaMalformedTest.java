package org.rpcrdma.transport.wire;

import static org.junit.jupiter.api.Assertions.*;
import static org.rpcrdma.transport.wire.ProtocolViolation.*;
import static org.rpcrdma.transport.wire.RpcRdma.*;
import static org.rpcrdma.transport.wire.Wire.*;

import java.lang.foreign.MemorySegment;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One malformed input per {@link ProtocolViolation}, each asserting the exact violation,
 * the answer it calls for and the exception subtype. The parameterized test fails if a
 * violation is added without an example here.
 */
class RpcRdmaMalformedTest {
    static final int X = 0x0badf00d;
    static final byte[] CALL = rpc(X, RPC_CALL, 2);
    static final byte[] REPLY = rpc(X, RPC_REPLY, 2);

    static byte[] fixed(int proc) {
        return words(X, 1, 16, proc);
    }

    static final Map<ProtocolViolation, byte[]> EXAMPLES = new EnumMap<>(ProtocolViolation.class);

    static {
        EXAMPLES.put(HEADER_TRUNCATED, words(X));
        EXAMPLES.put(FIXED_HEADER_TRUNCATED, words(X, 1, 16));
        EXAMPLES.put(BAD_VERSION, cat(words(X, 2, 16, RDMA_MSG, 0, 0, 0), CALL));
        EXAMPLES.put(BAD_PROC, cat(words(X, 1, 16, 5, 0, 0, 0), CALL));
        EXAMPLES.put(MSGP_TRUNCATED, words(X, 1, 16, RDMA_MSGP, 64));
        EXAMPLES.put(BAD_DISCRIMINATOR, cat(fixed(RDMA_MSG), words(2, 0, 0), CALL));
        // A read segment cut short (only position and handle).
        EXAMPLES.put(READ_LIST_TRUNCATED, cat(fixed(RDMA_MSG), words(1, 8, 0x1234)));
        // A write chunk claiming 1000 segments in a short message: the count overruns it.
        EXAMPLES.put(WRITE_LIST_TRUNCATED, cat(fixed(RDMA_MSG), words(0, 1, 1000), hloo(1, 2, 3), words(0, 0)));
        EXAMPLES.put(REPLY_CHUNK_TRUNCATED, cat(fixed(RDMA_MSG), words(0, 0, 1, 3), hloo(1, 2, 3)));
        // See tooManySegments* and tooManyChunks: need a small header; placeholder input here.
        EXAMPLES.put(TOO_MANY_SEGMENTS, null);
        EXAMPLES.put(TOO_MANY_CHUNKS, null);
        // A Reply chunk of no segments (a write chunk of none is allowed: a responder's unused result).
        EXAMPLES.put(EMPTY_CHUNK, cat(fixed(RDMA_MSG), words(0, 0, 1, 0), CALL));
        EXAMPLES.put(MISALIGNED_POSITION, cat(fixed(RDMA_MSG), readEntry(6, 1, 4, 0), words(0, 0, 0), CALL));
        EXAMPLES.put(DESCENDING_POSITION, cat(fixed(RDMA_MSG),
                readEntry(12, 1, 4, 0), readEntry(8, 2, 4, 0), words(0, 0, 0), CALL));
        // Chunk 0 at 4 is 8 bytes long (fills 4..12); chunk 1 at 8 starts inside it.
        EXAMPLES.put(OVERLAPPING_READ_CHUNKS, cat(fixed(RDMA_MSG),
                readEntry(4, 1, 8, 0), readEntry(8, 2, 4, 0), words(0, 0, 0), CALL));
        // The inline RPC message is 16 bytes; a chunk at 20 would land past its end.
        EXAMPLES.put(POSITION_BEYOND_MESSAGE, cat(fixed(RDMA_MSG), readEntry(20, 1, 4, 0), words(0, 0, 0), CALL));
        EXAMPLES.put(POSITION_ZERO_IN_MSG, cat(fixed(RDMA_MSG), readEntry(0, 1, 64, 0), words(0, 0, 0), CALL));
        EXAMPLES.put(NOMSG_WITHOUT_CHUNK, cat(fixed(RDMA_NOMSG), words(0, 0, 0)));
        EXAMPLES.put(RPC_MESSAGE_TRUNCATED, cat(fixed(RDMA_MSG), words(0, 0, 0), words(X)));
        EXAMPLES.put(XID_MISMATCH, cat(fixed(RDMA_MSG), words(0, 0, 0), rpc(X + 1, RPC_CALL, 2)));
        EXAMPLES.put(BAD_MSG_TYPE, cat(fixed(RDMA_MSG), words(0, 0, 0), rpc(X, 2, 2)));
        EXAMPLES.put(READ_LIST_IN_REPLY, cat(fixed(RDMA_MSG), readEntry(8, 1, 4, 0), words(0, 0, 0), REPLY));
        EXAMPLES.put(REPLY_CHUNK_IN_MSG_REPLY, cat(fixed(RDMA_MSG), words(0, 0, 1, 1), hloo(1, 100, 0), REPLY));
        EXAMPLES.put(ERROR_TRUNCATED, cat(fixed(RDMA_ERROR), words(ERR_VERS, 1)));
        EXAMPLES.put(BAD_ERROR_CODE, cat(fixed(RDMA_ERROR), words(3)));
    }

    static RpcRdmaProtocolException decodeFails(byte[] b, RpcRdmaHeader into) {
        return assertThrows(RpcRdmaProtocolException.class,
                () -> RpcRdmaDecoder.decode(MemorySegment.ofArray(b), 0, b.length, into));
    }

    static void assertViolation(ProtocolViolation v, RpcRdmaProtocolException e) {
        assertEquals(v, e.violation(), e.getMessage());
        assertEquals(v.response(), e.response());
        switch (v.response()) {
            case ERR_VERS -> assertInstanceOf(RpcRdmaProtocolException.VersionMismatch.class, e);
            case ERR_CHUNK -> assertInstanceOf(RpcRdmaProtocolException.ChunkError.class, e);
            case DROP_CONNECTION -> assertInstanceOf(RpcRdmaProtocolException.Fatal.class, e);
        }
        assertEquals(0, e.getStackTrace().length, "stack-trace-free");
        assertTrue(e.getMessage().startsWith(v.name()), e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(ProtocolViolation.class)
    void everyViolationHasAnExample(ProtocolViolation v) {
        assertTrue(EXAMPLES.containsKey(v), "no malformed example for " + v);
        byte[] b = EXAMPLES.get(v);
        if (b == null) {
            return; // covered by a dedicated test below
        }
        RpcRdmaProtocolException e = decodeFails(b, bigHeader());
        assertViolation(v, e);
        assertTrue(e.hasXid());
        assertEquals(X, e.xid());
    }

    @Test
    void versionNotOneIsErrVers() {
        for (int vers : new int[] {0, 2, -1, 0x01000000}) {
            RpcRdmaProtocolException e = decodeFails(cat(words(X, vers, 1, RDMA_MSG, 0, 0, 0), CALL), bigHeader());
            assertViolation(BAD_VERSION, e);
        }
        // The version is checked before the header's length: 8 bytes are enough.
        assertViolation(BAD_VERSION, decodeFails(words(X, 7), bigHeader()));
    }

    @Test
    void unknownProcIsErrChunk() {
        for (int proc : new int[] {5, 6, -1, 0x100}) {
            assertViolation(BAD_PROC, decodeFails(cat(words(X, 1, 1, proc), words(0, 0, 0), CALL), bigHeader()));
        }
    }

    @Test
    void truncatedFixedHeader() {
        RpcRdmaProtocolException e = decodeFails(new byte[3], bigHeader());
        assertViolation(HEADER_TRUNCATED, e);
        assertFalse(e.hasXid(), "3 bytes carry no xid");
        e = decodeFails(words(X), bigHeader());
        assertViolation(HEADER_TRUNCATED, e);
        assertTrue(e.hasXid());
        assertViolation(HEADER_TRUNCATED, decodeFails(new byte[0], bigHeader()));
        // version 1 recognised: an XDR error the responder answers with ERR_CHUNK (RFC 8166 §4.5.2)
        e = decodeFails(words(X, 1, 0), bigHeader());
        assertViolation(FIXED_HEADER_TRUNCATED, e);
        assertTrue(e.hasXid());
    }

    @Test
    void truncatedLists() {
        // No discriminators at all after the fixed header.
        assertViolation(READ_LIST_TRUNCATED, decodeFails(fixed(RDMA_MSG), bigHeader()));
        // Read list ends but write list discriminator missing.
        assertViolation(WRITE_LIST_TRUNCATED, decodeFails(cat(fixed(RDMA_MSG), words(0)), bigHeader()));
        // Read list with a segment but no terminating discriminator.
        assertViolation(READ_LIST_TRUNCATED, decodeFails(cat(fixed(RDMA_MSG), readEntry(8, 1, 1, 1)), bigHeader()));
        // Write chunk without its segment count.
        assertViolation(WRITE_LIST_TRUNCATED, decodeFails(cat(fixed(RDMA_MSG), words(0, 1)), bigHeader()));
        // Reply chunk discriminator missing.
        assertViolation(REPLY_CHUNK_TRUNCATED, decodeFails(cat(fixed(RDMA_MSG), words(0, 0)), bigHeader()));
        // Reply chunk without its count.
        assertViolation(REPLY_CHUNK_TRUNCATED, decodeFails(cat(fixed(RDMA_MSG), words(0, 0, 1)), bigHeader()));
    }

    @Test
    void segmentCountsThatOverrunTheMessage() {
        // 0xffffffff segments: must not wrap, must not allocate, must not loop.
        assertViolation(WRITE_LIST_TRUNCATED,
                decodeFails(cat(fixed(RDMA_MSG), words(0, 1, -1), hloo(1, 1, 1), words(0, 0), CALL), bigHeader()));
        assertViolation(REPLY_CHUNK_TRUNCATED,
                decodeFails(cat(fixed(RDMA_MSG), words(0, 0, 1, 0x40000001), hloo(1, 1, 1), CALL), bigHeader()));
        // Exactly one segment too many for the bytes present.
        assertViolation(WRITE_LIST_TRUNCATED,
                decodeFails(cat(fixed(RDMA_MSG), words(0, 1, 2), hloo(1, 1, 1)), bigHeader()));
    }

    @Test
    void tooManySegmentsForTheInlineThreshold() {
        // A header sized for a 1 KiB threshold holds 41 read segments; 42 present -> error.
        RpcRdmaHeader small = RpcRdmaHeader.forInlineThreshold(1024);
        byte[][] entries = new byte[43][];
        entries[0] = fixed(RDMA_MSG);
        for (int i = 1; i <= 42; i++) {
            entries[i] = readEntry(4, i, 4, 0);
        }
        byte[] msg = cat(cat(entries), words(0, 0, 0), CALL);
        assertViolation(TOO_MANY_SEGMENTS, decodeFails(msg, small));

        // 41 is fine (and the chunk at 4 fits the 16-byte inline message).
        byte[][] ok = new byte[42][];
        System.arraycopy(entries, 0, ok, 0, 42);
        byte[] good = cat(cat(ok), words(0, 0, 0), CALL);
        assertDoesNotThrow(() -> RpcRdmaDecoder.decode(MemorySegment.ofArray(good), 0, good.length, small));

        // Write chunk and reply chunk counts beyond capacity but within the message.
        RpcRdmaHeader tiny = new RpcRdmaHeader(4, 4, 2, 2);
        byte[] w = cat(fixed(RDMA_MSG), words(0, 1, 3), hloo(1, 1, 1), hloo(2, 2, 2), hloo(3, 3, 3), words(0, 0), CALL);
        assertViolation(TOO_MANY_SEGMENTS, decodeFails(w, tiny));
        byte[] r = cat(fixed(RDMA_MSG), words(0, 0, 1, 3), hloo(1, 1, 1), hloo(2, 2, 2), hloo(3, 3, 3), CALL);
        assertViolation(TOO_MANY_SEGMENTS, decodeFails(r, tiny));
    }

    @Test
    void tooManyChunks() {
        RpcRdmaHeader tiny = new RpcRdmaHeader(4, 2, 8, 2);
        byte[] w = cat(fixed(RDMA_MSG), words(0),
                words(1, 1), hloo(1, 1, 1), words(1, 1), hloo(2, 2, 2), words(1, 1), hloo(3, 3, 3), words(0),
                words(0), CALL);
        assertViolation(TOO_MANY_CHUNKS, decodeFails(w, tiny));
    }

    @Test
    void readPositionsMustBeAlignedAndNonDescending() {
        for (int pos : new int[] {1, 2, 3, 5, 0x7ffffffd}) {
            assertViolation(MISALIGNED_POSITION, decodeFails(
                    cat(fixed(RDMA_MSG), readEntry(pos, 1, 4, 0), words(0, 0, 0), CALL), bigHeader()));
        }
        // Descending after an equal run: 8, 8, 4.
        assertViolation(DESCENDING_POSITION, decodeFails(cat(fixed(RDMA_MSG),
                readEntry(8, 1, 4, 0), readEntry(8, 2, 4, 0), readEntry(4, 3, 4, 0), words(0, 0, 0), CALL),
                bigHeader()));
        // Positions compare unsigned: 0x80000000 then 4 descends.
        assertViolation(DESCENDING_POSITION, decodeFails(cat(fixed(RDMA_MSG),
                readEntry(0x80000000, 1, 4, 0), readEntry(4, 3, 4, 0), words(0, 0, 0), CALL), bigHeader()));
    }

    @Test
    void positionZeroChunkInRdmaMsg() {
        assertViolation(POSITION_ZERO_IN_MSG, decodeFails(cat(words(X, 1, 1, RDMA_MSGP, 4, 4),
                readEntry(0, 1, 64, 0), words(0, 0, 0), CALL), bigHeader()));
    }

    @Test
    void nomsgNeedsAChunkToCarryTheMessage() {
        // A Write list alone does not carry a message.
        assertViolation(NOMSG_WITHOUT_CHUNK, decodeFails(
                cat(fixed(RDMA_NOMSG), words(0, 1, 1), hloo(1, 1, 1), words(0, 0)), bigHeader()));
        // A non-zero-position read chunk alone does not either: no P0 chunk, no Reply chunk.
        assertViolation(NOMSG_WITHOUT_CHUNK, decodeFails(
                cat(fixed(RDMA_NOMSG), readEntry(8, 1, 4, 0), words(0, 0, 0)), bigHeader()));
    }

    @Test
    void nomsgLongCallReadChunksMustFitTheCallChunk() throws Exception {
        // P0 chunk of 32 bytes; a chunk at 36 would land past its end.
        byte[] bad = cat(fixed(RDMA_NOMSG), readEntry(0, 1, 32, 0), readEntry(36, 2, 8, 0), words(0, 0, 0));
        assertViolation(POSITION_BEYOND_MESSAGE, decodeFails(bad, bigHeader()));
        byte[] good = cat(fixed(RDMA_NOMSG), readEntry(0, 1, 32, 0), readEntry(32, 2, 8, 0), words(0, 0, 0));
        RpcRdmaHeader h = decode(good);
        assertEquals(2, h.readList().chunkCount());
    }

    @Test
    void rpcXidMustMatchRdmaXid() {
        RpcRdmaProtocolException e = decodeFails(
                cat(fixed(RDMA_MSG), words(0, 0, 0), rpc(0x12345678, RPC_REPLY, 0)), bigHeader());
        assertViolation(XID_MISMATCH, e);
        assertEquals(X, e.xid(), "the error answers the rdma_xid");
    }

    @Test
    void decoderDoesNotReadPastTheGivenLength() throws Exception {
        // A valid message followed by bytes outside the given length: only the length counts.
        byte[] msg = cat(fixed(RDMA_MSG), words(0, 0, 0), CALL);
        byte[] padded = cat(msg, words(0xffffffff, 0xffffffff));
        RpcRdmaHeader h = bigHeader();
        RpcRdmaDecoder.decode(MemorySegment.ofArray(padded), 0, msg.length, h);
        assertEquals(CALL.length, h.messageLength());
        // And a prefix cut anywhere inside the header is a typed error, never an IOOBE.
        for (int n = 0; n < 28; n++) {
            int len = n;
            assertThrows(RpcRdmaProtocolException.class,
                    () -> RpcRdmaDecoder.decode(MemorySegment.ofArray(padded), 0, len, bigHeader()));
        }
    }
}
