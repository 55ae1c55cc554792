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
    /** The defaults each setter's javadoc states. */
    @Test
    void defaultsAreTheDocumentedOnes() {
        RpcRdmaOptions o = RpcRdmaOptions.defaults();
        assertEquals(20049, RpcRdmaOptions.DEFAULT_PORT);
        assertEquals(List.of(4096, 32, 0, 16, false, 0, 5000, 60_000L, 8, 8, 0L, 3, (1 << 20) + (64 << 10), 64,
                        4L << 20, 16, true, true, true, 64L << 20, 0, 60_000L,
                        Math.min(4, Runtime.getRuntime().availableProcessors()), false),
                List.of(o.inlineThreshold(), o.credits(), o.backwardCredits(), o.backwardCallLimit(), o.busyPoll(),
                        o.pollSpinMicros(), o.connectTimeoutMillis(), o.callTimeoutMillis(), o.receiveBatch(),
                        o.signalEvery(), o.backchannelWaitMillis(), o.reconnectAttempts(), o.maxChunkBytes(),
                        o.maxChunkSegments(), o.chunkMemoryBytes(), o.rdmaDepth(), o.memoryWindows(),
                        o.remoteInvalidation(), o.backwardChunks(), o.registrationCacheBytes(), o.sharedReceives(),
                        o.silenceTimeoutMillis(), o.completionThreads(), o.shareClientThreads()));
        assertEquals(o, RpcRdmaOptions.builder().build());
        assertTrue(ConnectionSizing.receiveBuffers(o, true) >= o.credits() + o.backwardCredits());
        assertTrue(ConnectionSizing.receiveBuffers(o, false) >= o.credits() + o.backwardCallLimit());
    }

    private static String refused(RpcRdmaOptions.Builder b) {
        return assertThrows(IllegalArgumentException.class, b::build).getMessage();
    }

    @Test
    void invalidValuesNameTheOption() {
        RpcRdmaOptions d = RpcRdmaOptions.defaults();
        assertTrue(refused(d.toBuilder().credits(0)).startsWith("credits"));
        assertTrue(refused(d.toBuilder().inlineThreshold(512)).startsWith("inlineThreshold"));
        assertTrue(refused(d.toBuilder().inlineThreshold(1026)).contains("multiple of 1024"));
        assertTrue(refused(d.toBuilder().backwardCredits(-1)).startsWith("backwardCredits"));
        assertTrue(refused(d.toBuilder().callTimeoutMillis(-1)).startsWith("callTimeoutMillis"));
        assertTrue(refused(d.toBuilder().backwardCallLimit(0)).startsWith("backwardCallLimit"));
        assertTrue(refused(d.toBuilder().reconnectAttempts(-1)).startsWith("reconnectAttempts"));
        assertTrue(refused(d.toBuilder().backchannelWaitMillis(-5)).startsWith("backchannelWaitMillis"));
        assertEquals(0, d.toBuilder().reconnectAttempts(0).build().reconnectAttempts());
        assertTrue(refused(d.toBuilder().maxChunkBytes(1000)).startsWith("maxChunkBytes"), "below the inline threshold");
        assertTrue(refused(d.toBuilder().maxChunkSegments(0)).startsWith("maxChunkSegments"));
        assertTrue(refused(d.toBuilder().chunkMemoryBytes(-1)).startsWith("chunkMemoryBytes"));
        assertTrue(refused(d.toBuilder().rdmaDepth(0)).startsWith("rdmaDepth"));
        assertTrue(refused(d.toBuilder().rdmaDepth(256)).startsWith("rdmaDepth"));
        assertTrue(refused(d.toBuilder().sharedReceives(63)).startsWith("sharedReceives"));
        assertTrue(refused(d.toBuilder().silenceTimeoutMillis(-1)).startsWith("silenceTimeoutMillis"));
        assertEquals(0, d.toBuilder().silenceTimeoutMillis(0).build().silenceTimeoutMillis(), "0: never");
        assertEquals(0, d.toBuilder().sharedReceives(0).build().sharedReceives(), "0: receives per connection");
        assertTrue(refused(d.toBuilder().completionThreads(-1)).startsWith("completionThreads"));
        assertTrue(refused(d.toBuilder().completionThreads(1025)).startsWith("completionThreads"));
        assertEquals(0, d.toBuilder().completionThreads(0).build().completionThreads(), "0: a poller per connection");
        assertEquals(17 << 20, d.toBuilder().maxChunkBytes(17 << 20).build().maxChunkBytes());
    }

    /** RFC 8797 §4.2 can carry only multiples of 1024 (KiB - 1 in a byte). */
    @Test
    void inlineThresholdsRfc8797CannotCarryAreRefusedWhenBuilt() {
        RpcRdmaOptions d = RpcRdmaOptions.defaults();
        for (int bad : new int[] {1028, 2052, 4100, 262140}) {
            String e = refused(d.toBuilder().inlineThreshold(bad));
            assertTrue(e.contains("multiple of 1024") && e.contains("RFC 8797"), e);
        }
        assertTrue(refused(d.toBuilder().inlineThreshold(263168)).startsWith("inlineThreshold"));
        for (int good : new int[] {1024, 2048, 4096, 65536, 262144}) {
            assertEquals(good, d.toBuilder().inlineThreshold(good).build().inlineThreshold());
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
                .registrationCacheBytes(1 << 20).sharedReceives(512).silenceTimeoutMillis(5000).completionThreads(5)
                .shareClientThreads(true).build();
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
        assertEquals(24, names.size(), "every option is covered: " + names);
        assertEquals(o, back);
        assertEquals(o.hashCode(), back.hashCode());
        assertNotEquals(o, o.toBuilder().credits(8).build());
        assertEquals(8, o.toBuilder().credits(8).build().credits());
        assertEquals(o, o.toBuilder().credits(8).credits(7).build());
    }
}
