package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ScaleReportTest {
    /** A clean row: {@code sent} forward calls in 10 s, 100 backward ones, each executed once. */
    private static ScaleReport.Row row(int n, int connected, long threads, long memory, int sent, String stopped) {
        CallPump.Result fwd = new CallPump.Result(0, sent, sent, 0, 0, 0, 10.0, null, java.util.List.of());
        Map<String, String> back = Map.of("backSent", "100", "backAnswered", "100", "backFailed", "0", "backBad", "0",
                "backUnanswered", "0", "backSeconds", "10.0");
        Map<String, String> server = Map.of("threadsOurs", Long.toString(threads), "threadsTotal",
                Long.toString(threads + 20), "receiveMemory", Long.toString(memory), "executions",
                Integer.toString(sent), "lost", "0", "duplicated", "0", "stray", "0");
        return ScaleReport.Row.of(n, connected, stopped, List.of(40.0, 50.0, 90.0), 1, fwd, back,
                new XidLedger.Check(100, 100, 0, 0, 0), server);
    }

    @Test
    void flatThreadsAndMemoryAndNoFewerCallsMeetTheGoals() {
        List<ScaleReport.Row> rows = List.of(row(1, 1, 3, 1 << 24, 5000, ""), row(10, 10, 3, 1 << 24, 9000, ""),
                row(1000, 1000, 3, 1 << 24, 9900, ""));
        List<ScaleReport.Goal> g = ScaleReport.goals(rows);
        assertEquals(4, g.size());
        assertTrue(g.stream().allMatch(ScaleReport.Goal::met), g.toString());
        assertEquals(1000, g.get(0).top());
        assertEquals(1000.0, g.get(3).atTop(), 1e-9); // (9,900 + 100) / 10 s
        assertTrue(rows.stream().allMatch(ScaleReport.Row::exactlyOnce));
    }

    @Test
    void aThreadPerConnectionIsNotFlatAndTheTableSaysSo() {
        List<ScaleReport.Row> rows = List.of(row(10, 10, 12, 1 << 24, 9000, ""),
                row(1000, 1000, 1002, 1 << 24, 8000, ""));
        List<ScaleReport.Goal> g = ScaleReport.goals(rows);
        assertFalse(g.get(0).met());
        assertEquals(83.5, g.get(0).ratio(), 0.01);
        assertTrue(g.get(2).met(), "receive memory flat");
        assertFalse(g.get(3).met(), "fewer calls/s at 1,000");
        String t = ScaleReport.table("x", rows);
        assertTrue(t.contains("server threads (ours) flat") && t.contains("NOT met"), t);
    }

    @Test
    void aRowStoppedByTheDeviceIsJudgedAtTheConnectionsItReachedAndAFailedRowIsReported() {
        List<ScaleReport.Row> rows = List.of(row(10, 10, 3, 1 << 24, 9000, ""),
                row(1000, 640, 3, 1 << 24, 9500, "connection 641 refused: out of QPs"),
                ScaleReport.Row.failed(2000, 640, List.of(), "no answer from the server JVM in 120 s"));
        List<ScaleReport.Goal> g = ScaleReport.goals(rows);
        assertEquals(640, g.get(0).top());
        String t = ScaleReport.table("x", rows);
        assertTrue(t.contains("N=1000: connection 641 refused: out of QPs"), t);
        assertTrue(t.contains("stopped: no answer from the server JVM in 120 s"), t);
        assertFalse(rows.get(2).exactlyOnce());
        String json = ScaleReport.json("x", rows);
        assertTrue(json.contains("\"connected\": 640") && json.contains("\"met\": true"), json);
    }

    @Test
    void aLostOrDuplicatedCallFailsTheRow() {
        CallPump.Result fwd = new CallPump.Result(0, 10, 10, 0, 0, 0, 1.0, null, java.util.List.of());
        Map<String, String> server = Map.of("executions", "10", "lost", "1", "duplicated", "1", "stray", "0");
        Map<String, String> back = Map.of("backSent", "0", "backAnswered", "0", "backFailed", "0", "backBad", "0",
                "backUnanswered", "0", "backSeconds", "1.0");
        ScaleReport.Row r = ScaleReport.Row.of(10, 10, "", List.of(), 1, fwd, back, new XidLedger.Check(0, 0, 0, 0, 0),
                server);
        assertEquals(List.of("server executions: 10 for 10 calls sent, 1 lost, 1 twice, 0 stray"), r.problems());
    }

    @Test
    void controlLinesRoundTrip() {
        Map<String, String> m = FlatJson.read(FlatJson.write(Map.of("port", 20049, "why", "a \"quoted\"\nline")));
        assertEquals("20049", m.get("port"));
        assertEquals("a \"quoted\"\nline", m.get("why"));
    }

    @Test
    void connectPercentiles() {
        assertEquals(50.0, ScaleReport.percentile(List.of(90.0, 40.0, 50.0), 50));
        assertEquals(90.0, ScaleReport.percentile(List.of(90.0, 40.0, 50.0), 100));
        assertEquals(0.0, ScaleReport.percentile(List.of(), 50));
    }
}
