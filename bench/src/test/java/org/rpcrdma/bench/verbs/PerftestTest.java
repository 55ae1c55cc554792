package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

class PerftestTest {
    /** ib_send_bw 4.5's report (rdma_cm, 64 B, 5000 iterations), as the client prints it. */
    private static final List<String> SEND_BW = List.of(
            "---------------------------------------------------------------------------------------",
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
            " 64         5000             3.42               3.17               0.051936",
            "---------------------------------------------------------------------------------------");

    @Test
    void aBandwidthReportGivesMessagesAndMegabytesPerSecond() {
        Perftest.Rate r = Perftest.parseRate("ib_send_bw", 64, 5000, SEND_BW);
        assertTrue(r.ok(), r.status());
        assertEquals(51936, r.msgsPerSecond(), 0.5);
        assertEquals(3.17, r.mbPerSecond(), 1e-9);
        assertNull(Perftest.parseRate("ib_send_bw", 64, 1000, SEND_BW), "another run's iterations");
        Perftest.Rate nan = Perftest.parseRate("ib_send_bw", 64, 5000, List.of(" 64  5000  inf  -nan  0.05"));
        assertFalse(nan.ok());
        assertTrue(nan.status().startsWith("missing"), nan.status());
    }

    @Test
    void aSendLatencyReportIsDoubledToARoundTrip() {
        List<String> lines = List.of(
                " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
                        + "   99% percentile[usec]   99.9% percentile[usec] ",
                " 64      1000          13.50          250.1        14.30             15.10        3.2"
                        + "             40.00                  120.00");
        Point p = Perftest.parseLatency("ib_send_lat", "loss-1%", 64, 1000, lines);
        assertTrue(p.ok(), p.status());
        assertEquals(27.0, p.min(), 1e-9);
        assertEquals(28.6, p.p50(), 1e-9);
        assertEquals(80.0, p.p99(), 1e-9);
        assertNull(Perftest.parseLatency("ib_send_lat", "", 64, 1000, SEND_BW));
    }
}
