package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CallSweepTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** Silence is reported once the period passed with calls awaited and no reply, once. */
    @Test
    void silenceIsReportedAfterItsPeriodOnce() {
        CallSweep s = new CallSweep(2000);
        long t0 = 1_000_000 * MS;
        assertFalse(s.silentFor(t0, 1), "stamps the start");
        assertFalse(s.silentFor(t0 + 1999 * MS, 1), "not before the period");
        assertTrue(s.silentFor(t0 + 2000 * MS, 1), "at the period");
        assertFalse(s.silentFor(t0 + 2001 * MS, 1), "reported once: a new silence starts");
        s.peerAnswered();
        assertFalse(s.silentFor(t0 + 5000 * MS, 1), "a reply ended the silence: stamps again");
        assertFalse(s.silentFor(t0 + 6000 * MS, 0), "nothing awaited: no silence");
        assertFalse(s.silentFor(t0 + 9000 * MS, 1), "stamps again");
    }

    /** A period of 0 turns the rule off: no silence however long. */
    @Test
    void aPeriodOfZeroNeverDeclaresSilence() {
        CallSweep s = new CallSweep(0);
        long t0 = 1_000_000 * MS;
        for (long h = 0; h < 48; h++) {
            assertFalse(s.silentFor(t0 + TimeUnit.HOURS.toNanos(h), 5), "after " + h + " h");
        }
    }
}
