package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

class GoalsTest {
    private static Point p(String series, int size, double min, double p50, double p99) {
        return new Point(series, series.startsWith("mode-") ? "null" : "", 4096, size, "ok", 1000, min, p50, p99, p99, p50);
    }

    private static final List<Point> RUN = List.of(
            p("ib_send_lat", 1, 20, 25, 200),
            p("ib_send_lat", 64, 25, 30, 250),
            p("verbs-2thread", 64, 26, 33, 300),
            p("mode-busy", 0, 35, 45, 700),
            p("mode-mixed", 0, 40, 61, 900),
            p("mode-event", 0, 60, 150, 1000));

    @Test
    void ratiosAreOursOverIbSendLatAt64Bytes() {
        List<Goals.Line> lines = Goals.evaluate(RUN);
        assertEquals(5, lines.size());
        assertEquals(1.5, lines.get(0).ratio(), 1e-9); // busy p50 45 / 30
        assertTrue(lines.get(0).met()); // at the limit counts
        assertEquals(2.8, lines.get(1).ratio(), 1e-9); // busy p99 700 / 250
        assertTrue(lines.get(1).met());
        assertEquals(61 / 30.0, lines.get(2).ratio(), 1e-9); // mixed p50
        assertFalse(lines.get(2).met());
        assertEquals(2.4, lines.get(3).ratio(), 1e-9); // event min 60 / 25
        assertTrue(lines.get(3).met());
        assertEquals(1.1, lines.get(4).ratio(), 1e-9); // raw 2-thread p50 33 / 30
        assertTrue(lines.get(4).met());
    }

    @Test
    void aMissingOrFailedPointIsNotMeasuredNeverMet() {
        List<Point> run = List.of(p("ib_send_lat", 64, 25, 30, 250),
                Point.failed("mode-busy", "null", 4096, 0, "error: connect failed"));
        List<Goals.Line> lines = Goals.evaluate(run);
        assertTrue(lines.stream().noneMatch(Goals.Line::met));
        StringWriter w = new StringWriter();
        Goals.print(run, new PrintWriter(w, true));
        assertTrue(w.toString().contains("not measured"), w.toString());
        assertFalse(w.toString().contains(" met"), w.toString());
    }

    @Test
    void withoutIbSendLatNothingIsMet() {
        List<Point> run = List.of(p("mode-busy", 0, 35, 45, 700), p("mode-event", 0, 60, 150, 1000));
        assertTrue(Goals.evaluate(run).stream().noneMatch(Goals.Line::met));
    }

    @Test
    void printsEachGoalWithItsVerdict() {
        StringWriter w = new StringWriter();
        Goals.print(RUN, new PrintWriter(w, true));
        String s = w.toString();
        assertTrue(s.contains("at 64 B"), s);
        assertTrue(s.contains("4 KiB inline"), s);
        assertEquals(4, s.lines().filter(l -> l.endsWith("x  met")).count(), s); // busy p50, busy p99, event min, raw
        assertEquals(1, s.lines().filter(l -> l.endsWith("NOT met")).count(), s); // mixed
    }
}
