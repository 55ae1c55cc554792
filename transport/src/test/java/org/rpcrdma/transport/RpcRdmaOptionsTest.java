package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RpcRdmaOptionsTest {
    @Test
    void defaultsAreSensible() {
        RpcRdmaOptions o = RpcRdmaOptions.defaults();
        assertEquals(20049, o.port());
        assertEquals(4096, o.inlineThreshold());
        assertEquals(32, o.credits());
        assertEquals(0, o.backwardCredits());
        assertTrue(o.receiveBuffers() >= o.credits() + o.backwardCredits());
    }

    @Test
    void invalidValuesNameTheOption() {
        RpcRdmaOptions d = RpcRdmaOptions.defaults();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withPort(0)).getMessage().startsWith("port"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withCredits(0)).getMessage().startsWith("credits"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withInlineThreshold(512)).getMessage()
                .startsWith("inlineThreshold"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withInlineThreshold(1026)).getMessage()
                .contains("multiple of 4"));
        assertThrows(IllegalArgumentException.class, () -> d.withBackwardCredits(-1));
        assertEquals(7, d.withPort(7).port());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withReconnectAttempts(-1)).getMessage()
                .startsWith("reconnectAttempts"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> d.withBackchannelWaitMillis(-5)).getMessage()
                .startsWith("backchannelWaitMillis"));
        assertEquals(0, d.withReconnectAttempts(0).reconnectAttempts());
    }
}
