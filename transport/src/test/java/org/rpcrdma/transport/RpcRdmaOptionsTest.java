package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.rpc.ConnectionSizing;

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
        assertTrue(ConnectionSizing.receiveBuffers(o, true) >= o.credits() + o.backwardCredits());
        assertTrue(ConnectionSizing.receiveBuffers(o, false) >= o.credits() + o.backwardCallLimit());
    }

    @Test
    void invalidValuesNameTheOption() {
        RpcRdmaOptions d = RpcRdmaOptions.defaults();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withCredits(0)).getMessage().startsWith("credits"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.toBuilder().sharedReceives(63).build())
                .getMessage().startsWith("sharedReceives"));
        assertEquals(0, d.toBuilder().sharedReceives(0).build().sharedReceives(), "0: receives per connection");
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

    @Test
    void theBuilderValidatesInBuildNamingTheOptionAndTheRule() {
        RpcRdmaOptions.Builder b = RpcRdmaOptions.builder().credits(MAX + 1); // a setter does not check
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertEquals("credits must be in [1, " + MAX + "], got " + (MAX + 1), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> RpcRdmaOptions.builder().inlineThreshold(8192).maxChunkBytes(4096).build());
        assertEquals("maxChunkBytes must be in [8192, 1073741824], got 4096", e.getMessage(),
                "checked against the inline threshold set on the same builder");
        assertEquals(RpcRdmaOptions.defaults(), RpcRdmaOptions.builder().build());
        assertEquals(RpcRdmaOptions.defaults().hashCode(), RpcRdmaOptions.builder().build().hashCode());
    }

    private static final int MAX = RpcRdmaOptions.MAX_CREDITS;

    /** Every option set to a value other than its default: a round trip through toBuilder keeps each. */
    @Test
    void aRoundTripThroughToBuilderKeepsEveryValue() throws Exception {
        RpcRdmaOptions d = RpcRdmaOptions.defaults();
        RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(8192).credits(7).backwardCredits(3)
                .backwardCallLimit(5).busyPoll(true).pollSpinMicros(11).connectTimeoutMillis(1234)
                .callTimeoutMillis(4321).receiveBatch(4).signalEvery(2).backchannelWaitMillis(99)
                .reconnectAttempts(9).maxChunkBytes(1 << 21).maxChunkSegments(17).chunkMemoryBytes(1 << 22 | 1 << 12)
                .rdmaDepth(3).memoryWindows(false).remoteInvalidation(false).backwardChunks(false)
                .registrationCacheBytes(1 << 20).sharedReceives(512).build();
        RpcRdmaOptions back = o.toBuilder().build();
        List<String> names = new ArrayList<>();
        for (Method m : RpcRdmaOptions.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0
                    && m.getReturnType().isPrimitive() && !m.getName().equals("hashCode")) {
                names.add(m.getName());
                assertNotEquals(m.invoke(d), m.invoke(o), m.getName() + " is set to a value other than its default");
                assertEquals(m.invoke(o), m.invoke(back), m.getName() + " survives toBuilder().build()");
                assertTrue(o.toString().contains(m.getName() + "=" + m.invoke(o)), o.toString());
            }
        }
        assertEquals(21, names.size(), "every option is covered: " + names);
        assertEquals(o, back);
        assertEquals(o.hashCode(), back.hashCode());
        assertNotEquals(o, o.withCredits(8));
        assertEquals(8, o.withCredits(8).credits());
        assertEquals(o, o.withCredits(8).withCredits(7));
    }
}
