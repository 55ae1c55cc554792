package org.rpcrdma.oncrpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RdmaErrorException;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * Typed calls whose results exceed the receive inline threshold (4 KiB by default) work
 * with no option: the call offers a Reply chunk sized from the result codec's bound, or
 * the client's default for a codec without one (RFC 8166 §3.5.4). What cannot be
 * answered says what to change.
 */
class LargeResultTest {
    private InMemoryPair pair;
    private OncRpcClient client;

    @BeforeEach
    void open() {
        pair = InMemoryPair.open(RpcRdmaOptions.defaults(), TestProgram.dispatcher());
        client = new OncRpcClient(pair.client(), TestProgram.PROG, TestProgram.V2);
    }

    @AfterEach
    void close() {
        pair.close();
    }

    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    @Test
    void sixtyKilobyteResultWithoutOptions() throws Exception {
        byte[] data = pattern(60_000);
        assertArrayEquals(data, client.call(TestProgram.ECHO_OPAQUE, data));
        assertArrayEquals(data, client.call(TestProgram.ECHO_OPAQUE, data, 10, TimeUnit.SECONDS));
        assertArrayEquals(data, client.callAsync(TestProgram.ECHO_OPAQUE, data).get(10, TimeUnit.SECONDS));
        assertArrayEquals(data, client.callAsync(TestProgram.ECHO_OPAQUE, data, 10, TimeUnit.SECONDS)
                .get(10, TimeUnit.SECONDS));
        assertArrayEquals(data, client.call(7, data, Codecs.OPAQUE, Codecs.OPAQUE, 10, TimeUnit.SECONDS));
        assertArrayEquals(data, client.callAsync(7, data, Codecs.OPAQUE, Codecs.OPAQUE, 10, TimeUnit.SECONDS)
                .get(10, TimeUnit.SECONDS));
        assertEquals(6, pair.client().stats().repliesThroughReplyChunk());
        assertEquals(0, pair.client().outstandingCalls());
    }

    @Test
    void boundedSmallResultOffersNoReplyChunk() throws Exception {
        byte[] data = pattern(16);
        assertArrayEquals(data, client.call(TestProgram.ECHO_OPAQUE16, data));
        assertEquals(0, pair.client().stats().repliesThroughReplyChunk());
        assertEquals(0, pair.server().stats().replyChunksUsed());
    }

    @Test
    void codecBoundSizesTheReplyChunk() {
        assertEquals(4 + 16, Codecs.opaque(16).maxEncodedSize());
        assertEquals(4 + 16, Codecs.string(13).maxEncodedSize());
        assertEquals(4 + 4 * 4, Codecs.intArray(4).maxEncodedSize());
        assertEquals(8, Codecs.fixedOpaque(5).maxEncodedSize());
        assertEquals(4 + 8, Codecs.optional(Codecs.HYPER).maxEncodedSize());
        assertTrue(Codecs.OPAQUE.maxEncodedSize() > Integer.MAX_VALUE);
        assertEquals(4 + 8, Codecs.array(Codecs.HYPER, 1).maxEncodedSize());
        assertEquals(-1, Codecs.array(TestProgram.PRIMS, 1).maxEncodedSize());
        assertEquals(-1, TestProgram.PRIMS.maxEncodedSize());
        assertEquals(36, TestProgram.PRIMS.withMaxEncodedSize(36).maxEncodedSize());
    }

    @Test
    void resultOverTheOfferedReplyChunkSaysWhatToChange() {
        OncRpcClient small = client.withMaxReplyBytes(8192);
        RdmaErrorException e = assertThrows(RdmaErrorException.class,
                () -> small.call(TestProgram.ECHO_OPAQUE, pattern(60_000)));
        assertEquals(RdmaErrorException.ERR_CHUNK, e.errorCode());
        assertTrue(e.getMessage().contains("withMaxReplyBytes"), e.getMessage());
        assertTrue(e.getMessage().contains("Reply chunk"), e.getMessage());
        assertEquals(0, pair.client().outstandingCalls());
    }

    @Test
    void resultOverAReplyLimitOfZeroSaysNoReplyChunk() {
        OncRpcClient inline = client.withMaxReplyBytes(0);
        RdmaErrorException e = assertThrows(RdmaErrorException.class,
                () -> inline.call(TestProgram.ECHO_OPAQUE, pattern(60_000)));
        assertTrue(e.getMessage().contains("the call offered no Reply chunk"), e.getMessage());
    }

    @Test
    void maxReplyBytesFormHasATimeout() throws Exception {
        try (InMemoryPair silent = InMemoryPair.open(RpcRdmaOptions.defaults(), call -> { })) {
            OncRpcClient c = new OncRpcClient(silent.client(), TestProgram.PROG, TestProgram.V2);
            MemorySegment receptacle = MemorySegment.ofArray(new byte[100]);
            long t0 = System.nanoTime();
            assertThrows(CallTimeoutException.class,
                    () -> c.call(TestProgram.ECHO_OPAQUE, pattern(10), receptacle, 65536, 200, TimeUnit.MILLISECONDS));
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30));
            assertEquals(1, silent.client().stats().callTimeouts());
        }
    }
}
