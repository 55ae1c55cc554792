package org.rpcrdma.transport.chunk;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * R in our private data (RFC 8797 §3.2, §4.1) promises that every rkey we expose may be
 * invalidated by the peer's Send with Invalidate: it is advertised only when every
 * exposure is a memory window, and while it is negotiated nothing falls back to a
 * registration (which the peer cannot invalidate), whatever the peer set.
 */
class InvalidationPromiseTest {
    @Test
    void rIsAdvertisedOnlyWhenEveryExposureIsAWindow() {
        assertTrue(InvalidationPromise.advertise(true, true));
        assertFalse(InvalidationPromise.advertise(true, false), "windows off or none on the device: R clear");
        assertFalse(InvalidationPromise.advertise(false, true), "the option off: R clear");
        assertFalse(InvalidationPromise.advertise(false, false));
    }

    @Test
    void noRegistrationStandsInForAWindowWhileWeSetR() {
        assertFalse(InvalidationPromise.mayRegister(true));
        assertTrue(InvalidationPromise.mayRegister(false));
    }
}
