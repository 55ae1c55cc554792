package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

class GoalsTest {
    private static Point p(String series, int round, int size, double min, double p50, double p99) {
        return new Point(series, Goals.round(round), 4096, size, "ok", 1000, min, p50, p99, p99, p50);
    }

    /** One round: ib_send_lat p50 {@code ib}, busy p50 {@code busy}, the rest fixed. */
    private static List<Point> round(int r, double ib, double busy) {
        return List.of(
                p("ib_send_lat", r, 64, 25, ib, 250),
                p("verbs-2thread", r, 64, 26, 1.1 * ib, 300),
                p("mode-busy", r, 0, 35, busy, 700),
                p("mode-mixed", r, 0, 40, 2.1 * ib, 900),
                p("mode-event", r, 0, 60, 150, 1000));
    }

    private static List<Point> run(List<List<Point>> rounds) {
        List<Point> all = new ArrayList<>();
        // the curve's own points (op "" or "null") are no round's
        all.add(new Point("ib_send_lat", "", 0, 64, "ok", 1000, 1, 1, 1, 1, 1));
        all.add(new Point("mode-busy", "null", 4096, 0, "ok", 1000, 1000, 1000, 1000, 1000, 1000));
        rounds.forEach(all::addAll);
        return all;
    }

    @Test
    void eachRoundsRatioIsOursOverItsOwnIbSendLatAndTheMedianIsJudged() {
        // busy / ib per round: 45/30 = 1.5, 80/32 = 2.5, 28/20 = 1.4 -> median 1.5 (at the limit: met)
        List<Point> run = run(List.of(round(1, 30, 45), round(2, 32, 80), round(3, 20, 28)));
        assertArrayEquals(new int[] {1, 2, 3}, Goals.rounds(run));
        List<Goals.Line> lines = Goals.evaluate(run);
        assertEquals(13, lines.size()); // 7 against ib_send_lat, 6 shape spreads
        assertArrayEquals(new double[] {1.5, 2.5, 1.4}, lines.get(0).ratios(), 1e-9);
        assertEquals(1.5, lines.get(0).ratio(), 1e-9);
        assertTrue(lines.get(0).met());
        assertEquals(700 / 250.0, lines.get(1).ratio(), 1e-9); // busy p99
        assertTrue(lines.get(1).met());
        assertEquals(2.1, lines.get(2).ratio(), 1e-9); // mixed p50
        assertFalse(lines.get(2).met());
        assertEquals(2.4, lines.get(3).ratio(), 1e-9); // event min 60 / 25
        assertTrue(lines.get(3).met());
        assertEquals(1.1, lines.get(4).ratio(), 1e-9); // raw 2-thread p50
        assertTrue(lines.get(4).met());
    }

    @Test
    void oneBadRoundDoesNotDecideButABadMajorityDoes() {
        assertTrue(Goals.evaluate(run(List.of(round(1, 30, 40), round(2, 30, 90), round(3, 30, 41)))).get(0).met());
        assertFalse(Goals.evaluate(run(List.of(round(1, 30, 40), round(2, 30, 90), round(3, 30, 91)))).get(0).met());
    }

    @Test
    void anEvenNumberOfRoundsTakesTheMeanOfTheMiddleTwo() {
        Goals.Line l = Goals.evaluate(run(List.of(round(1, 30, 30), round(2, 30, 42), round(3, 30, 48),
                round(4, 30, 90)))).get(0);
        assertEquals((1.4 + 1.6) / 2, l.ratio(), 1e-9);
    }

    @Test
    void aMissingOrFailedPointCountsInNoRoundAndNothingMeasuredIsNeverMet() {
        List<Point> r2 = new ArrayList<>(round(2, 30, 200));
        r2.set(2, Point.failed("mode-busy", Goals.round(2), 4096, 0, "error: connect failed"));
        List<Goals.Line> lines = Goals.evaluate(run(List.of(round(1, 30, 42), r2)));
        assertTrue(Double.isNaN(lines.get(0).ratios()[1]));
        assertEquals(1.4, lines.get(0).ratio(), 1e-9); // the one measured round

        List<Point> none = List.of(Point.failed("mode-busy", Goals.round(1), 4096, 0, "error: connect failed"));
        assertTrue(Goals.evaluate(none).stream().noneMatch(Goals.Line::met));
        StringWriter w = new StringWriter();
        Goals.print(none, new PrintWriter(w, true));
        assertTrue(w.toString().contains("not measured"), w.toString());
        assertFalse(w.toString().contains(" met"), w.toString());
    }

    @Test
    void withoutIbSendLatNothingIsMet() {
        List<Point> run = new ArrayList<>(round(1, 30, 40));
        run.remove(0);
        assertTrue(Goals.evaluate(run).stream().noneMatch(Goals.Line::met));
    }

    @Test
    void printsEachGoalWithEveryRoundAndItsVerdict() {
        StringWriter w = new StringWriter();
        Goals.print(run(List.of(round(1, 30, 45), round(2, 32, 80), round(3, 20, 28))), new PrintWriter(w, true));
        String s = w.toString();
        assertTrue(s.contains("3 rounds"), s);
        assertTrue(s.contains("4 KiB inline"), s);
        assertTrue(s.contains("1.50 2.50 1.40"), s);
        assertEquals(4, s.lines().filter(l -> l.endsWith("x  met")).count(), s); // busy p50, busy p99, event min, raw
        assertEquals(1, s.lines().filter(l -> l.endsWith("NOT met")).count(), s); // mixed
    }

    /** A round under {@code jit}: ib_send_lat p50 30, p99 300; in busy mode the four shapes at the given p50s. */
    private static List<Point> shapes(String jit, int r, double wait, double future, double read, double callback) {
        String op = Goals.round(jit, r);
        List<Point> l = new ArrayList<>();
        l.add(new Point("ib_send_lat", op, 0, 64, "ok", 1000, 25, 30, 300, 300, 30));
        double[] p50 = {wait, future, read, callback};
        Shape[] s = {Shape.WAIT, Shape.FUTURE, Shape.READ, Shape.CALLBACK};
        for (int i = 0; i < s.length; i++) {
            l.add(new Point(s[i].series(Mode.BUSY), op, 4096, 0, "ok", 1000, 30, p50[i], 3 * p50[i], 4 * p50[i], p50[i]));
        }
        return l;
    }

    @Test
    void eachJitIsJudgedOnItsOwnRoundsWithTheBlockingCallAndTheShapesSpread() {
        List<Point> run = new ArrayList<>();
        run.addAll(shapes("c2", 1, 50, 55, 50, 45)); // spread 55/45
        run.addAll(shapes("c1", 1, 90, 70, 60, 66)); // spread 90/60
        assertEquals(List.of("c2", "c1"), Goals.jits(run));
        List<Goals.Line> lines = Goals.evaluate(run);
        assertEquals(26, lines.size());
        Goals.Line c2Wait = lines.get(5);
        assertEquals("C2: busy-poll, blocking call (callAndWait) p50", c2Wait.what());
        assertEquals(50 / 30.0, c2Wait.ratio(), 1e-9);
        assertTrue(c2Wait.met());
        assertEquals(150 / 300.0, lines.get(6).ratio(), 1e-9); // its p99
        Goals.Line c2Spread = lines.get(7);
        assertEquals("C2: busy: slowest shape / fastest, p50", c2Spread.what());
        assertEquals(55 / 45.0, c2Spread.ratio(), 1e-9);
        assertFalse(c2Spread.met());
        Goals.Line c1Wait = lines.get(13 + 5);
        assertEquals("C1: busy-poll, blocking call (callAndWait) p50", c1Wait.what());
        assertEquals(3.0, c1Wait.ratio(), 1e-9);
        assertFalse(c1Wait.met());
        assertEquals(1.5, lines.get(13 + 7).ratio(), 1e-9);
        assertTrue(Double.isNaN(lines.get(13 + 9).ratio())); // mixed: no shape measured

        StringWriter w = new StringWriter();
        Goals.print(run, new PrintWriter(w, true));
        String t = w.toString();
        assertTrue(t.contains("  c1      busy   wait           90.0     270.0     3.00     0.90"), t);
        assertTrue(t.contains("  c2      busy   callback       45.0     135.0     1.50     0.45"), t);
    }
}
