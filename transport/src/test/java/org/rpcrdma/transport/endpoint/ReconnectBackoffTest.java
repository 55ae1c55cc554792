package org.rpcrdma.transport.endpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * When a client that lost its connection tries again: a bounded number of times for calls
 * alone, and while callbacks are possible for as long as it takes (RFC 8167 §5.4).
 */
class ReconnectBackoffTest {
    private static final long T0 = 1_000_000_000L;
    private static final RpcRdmaOptions THREE = RpcRdmaOptions.builder().reconnectAttempts(3).build();

    @Test
    void byDefaultABackchannelIsKeptWithoutLimit() {
        assertEquals(0, RpcRdmaOptions.defaults().backchannelWaitMillis(),
                "RFC 8167 §5.4: backward requesters wait indefinitely; clients keep their connection");
        ReconnectBackoff b = new ReconnectBackoff(THREE, true, T0);
        assertTrue(b.unlimited());
        assertTrue(b.mayAttempt(4, T0 + TimeUnit.HOURS.toNanos(1)));
        assertTrue(b.mayAttempt(100_000, T0 + TimeUnit.DAYS.toNanos(30)));
        assertEquals(100, b.delayMillis(1));
        assertEquals(200, b.delayMillis(2));
        assertEquals(800, b.delayMillis(4));
        assertEquals(ReconnectBackoff.MAX_DELAY_MILLIS, b.delayMillis(10), "doubling, capped");
        assertEquals(ReconnectBackoff.MAX_DELAY_MILLIS, b.delayMillis(100_000), "no overflow");
    }

    @Test
    void callsAloneGetTheirAttemptsAndNoMore() {
        ReconnectBackoff b = new ReconnectBackoff(THREE, false, T0);
        assertFalse(b.unlimited());
        assertTrue(b.mayAttempt(3, T0));
        assertFalse(b.mayAttempt(4, T0));
        assertEquals(100, b.delayMillis(1));
        assertEquals(300, b.delayMillis(3));
        assertEquals(1000, b.delayMillis(50));
    }

    @Test
    void aBoundedBackchannelWaitKeepsTryingThatLongAndAtLeastTheAttempts() {
        ReconnectBackoff b = new ReconnectBackoff(THREE.toBuilder().backchannelWaitMillis(500).build(), true, T0);
        assertFalse(b.unlimited());
        assertTrue(b.mayAttempt(3, T0 + TimeUnit.SECONDS.toNanos(10)), "the attempts, whatever the time");
        assertTrue(b.mayAttempt(9, T0 + TimeUnit.MILLISECONDS.toNanos(400)));
        assertFalse(b.mayAttempt(9, T0 + TimeUnit.MILLISECONDS.toNanos(500)));
    }

    @Test
    void noAttemptsMeansNoneEvenWithABackchannelWhenBounded() {
        RpcRdmaOptions o = THREE.toBuilder().reconnectAttempts(0).backchannelWaitMillis(1).build();
        ReconnectBackoff b = new ReconnectBackoff(o, true, T0);
        assertFalse(b.mayAttempt(1, T0 + TimeUnit.MILLISECONDS.toNanos(2)));
    }
}
