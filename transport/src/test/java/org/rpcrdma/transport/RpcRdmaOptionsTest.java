package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RpcRdmaOptionsTest {
    @Test
    void defaultsAreSensible() {
        RpcRdmaOptions o = RpcRdmaOptions.defaults();
        assertEquals(20049, RpcRdmaOptions.DEFAULT_PORT);
        assertEquals(60_000, o.callTimeoutMillis());
        assertEquals(16, o.backwardCallLimit());
        assertEquals(4096, o.inlineThreshold());
        assertEquals(32, o.credits());
        assertEquals(0, o.backwardCredits());
        assertTrue(o.receiveBuffers(true) >= o.credits() + o.backwardCredits());
        assertTrue(o.receiveBuffers(false) >= o.credits() + o.backwardCallLimit());
    }

    @Test
    void invalidValuesNameTheOption() {
        RpcRdmaOptions d = RpcRdmaOptions.defaults();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withCredits(0)).getMessage().startsWith("credits"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withInlineThreshold(512)).getMessage()
                .startsWith("inlineThreshold"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withInlineThreshold(1026)).getMessage()
                .contains("multiple of 1024"));
        assertThrows(IllegalArgumentException.class, () -> d.withBackwardCredits(-1));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withCallTimeoutMillis(-1)).getMessage()
                .startsWith("callTimeoutMillis"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withBackwardCallLimit(0)).getMessage()
                .startsWith("backwardCallLimit"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withReconnectAttempts(-1)).getMessage()
                .startsWith("reconnectAttempts"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withBackchannelWaitMillis(-5)).getMessage()
                .startsWith("backchannelWaitMillis"));
        assertEquals(0, d.withReconnectAttempts(0).reconnectAttempts());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withMaxChunkBytes(1000)).getMessage()
                .startsWith("maxChunkBytes"), "below the inline threshold");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withMaxChunkSegments(0)).getMessage()
                .startsWith("maxChunkSegments"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withChunkMemoryBytes(-1)).getMessage()
                .startsWith("chunkMemoryBytes"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withRdmaDepth(0)).getMessage()
                .startsWith("rdmaDepth"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withRdmaDepth(256)).getMessage()
                .startsWith("rdmaDepth"));
        assertEquals(17 << 20, d.withMaxChunkBytes(17 << 20).maxChunkBytes());
    }

    /** RFC 8797 §4.2 can carry only multiples of 1024 (KiB - 1 in a byte). */
    @Test
    void inlineThresholdsRfc8797CannotCarryAreRefusedWhenBuilt() {
        RpcRdmaOptions d = RpcRdmaOptions.defaults();
        for (int bad : new int[] {1028, 2052, 4100, 262140}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.withInlineThreshold(bad));
            assertTrue(e.getMessage().contains("multiple of 1024") && e.getMessage().contains("RFC 8797"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> d.withInlineThreshold(263168));
        for (int good : new int[] {1024, 2048, 4096, 65536, 262144}) {
            assertEquals(good, d.withInlineThreshold(good).inlineThreshold());
        }
    }
}
