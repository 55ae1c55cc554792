package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

class LossyBenchTest {
    private static final Map<String, Long> REPAIRS = Map.of("completer_retry_err", 18L, "rcvd_seq_err", 2L,
            "duplicate_request", 1L, "out_of_seq_request", 3L, "retry_exceeded_err", 0L);

    private static LossyRow row(XidLedger.Check forward, Point lat) {
        Point p = new Point("rpc-inline", "", 4096, 64, "ok", 100, 90, 110.4, 300.2, 400, 120);
        return new LossyRow("loss-1%", "loss 1%", p, p, 8, 500, 40, lat,
                new Perftest.Rate("ib_send_bw", 64, "ok", 2000, 30000, 1.9), REPAIRS, REPAIRS, forward,
                new XidLedger.Check(10, 10, 0, 0, 0), 0, 0, 0, null);
    }

    @Test
    void aHungPerftestIsMissingWithItsReasonAndTheCallsStillCount() {
        LossyRow r = row(new XidLedger.Check(100, 100, 0, 0, 0),
                Point.failed("ib_send_lat", "loss-1%", 0, 64, "missing (timed out after 60 s)"));
        String t = LossyBench.table("setup", List.of(r));
        assertTrue(t.contains(" missing "), t);
        assertTrue(t.contains("loss-1%: ib_send_lat missing (timed out after 60 s); ib_send_bw ok"), t);
        assertTrue(t.contains("18/2/1/3"), "rxe's repairs: " + t);
        assertTrue(t.contains("calls lost 0, duplicated 0, failed or wrong 0: every call answered exactly once"), t);
        assertTrue(r.json().contains("\"ib_send_lat\": {\"status\": \"missing (timed out after 60 s)\""), r.json());
        assertTrue(r.json().contains("\"p50\": null"), r.json());
    }

    @Test
    void aLostOrTwiceRunCallFailsTheTable() {
        LossyRow r = row(new XidLedger.Check(100, 100, 1, 1, 0),
                new Point("ib_send_lat", "", 0, 64, "ok", 500, 20, 30, 60, 90, 33));
        assertFalse(r.exactlyOnce());
        String t = LossyBench.table("setup", List.of(r));
        assertTrue(t.contains("calls lost 1, duplicated 1, failed or wrong 0: NOT EXACTLY ONCE"), t);
        assertTrue(t.contains(" 3.7 "), "our inline p50 / ib_send_lat's: " + t);
    }
}
