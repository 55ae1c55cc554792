package org.rpcrdma.bench.verbs;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

/**
 * Issue 11 §3's goals, evaluated from the points of one run (one boot, one JVM): each is a
 * ratio of ours to {@code ib_send_lat}'s at 64 B (or its smallest size), so the emulator's
 * absolute speed cancels out. Ours is a NULL call with no arguments (a 68-byte Send) at the
 * {@code mode-*} points, measured in each completion mode back to back ({@link Mode}).
 */
final class Goals {
    private Goals() {}

    /** One goal: {@code ours / base <= limit}; NaN when a point is missing. */
    record Line(String what, double ours, double base, double limit) {
        double ratio() {
            return ours / base;
        }

        boolean met() {
            return ratio() <= limit; // false for NaN
        }
    }

    static List<Line> evaluate(List<Point> points) {
        Point ib = baseline(points);
        List<Line> lines = new ArrayList<>();
        add(lines, "busy-poll, NULL p50", find(points, Mode.BUSY.series()), ib, Point::p50, 1.5);
        add(lines, "busy-poll, NULL p99", find(points, Mode.BUSY.series()), ib, Point::p99, 3);
        add(lines, "client polls, server adaptive 100 us, NULL p50", find(points, Mode.MIXED.series()), ib, Point::p50, 2);
        add(lines, "events, NULL min", find(points, Mode.EVENT.series()), ib, Point::min, 3);
        Point raw = ib == null ? null : points.stream()
                .filter(p -> p.ok() && p.series().equals("verbs-2thread") && p.size() == ib.size()).findFirst().orElse(null);
        add(lines, "raw verbs in Java, thread per side, p50", raw, ib, Point::p50, 1.2);
        return lines;
    }

    private static void add(List<Line> lines, String what, Point ours, Point base, ToDoubleFunction<Point> f, double limit) {
        lines.add(new Line(what, ours == null ? Double.NaN : f.applyAsDouble(ours),
                base == null ? Double.NaN : f.applyAsDouble(base), limit));
    }

    /** ib_send_lat at 64 B, else at its smallest measured size. */
    private static Point baseline(List<Point> points) {
        Point best = null;
        for (Point p : points) {
            if (p.ok() && p.series().equals("ib_send_lat")
                    && (best == null || p.size() == 64 || (best.size() != 64 && p.size() < best.size()))) {
                best = p;
            }
        }
        return best;
    }

    private static Point find(List<Point> points, String series) {
        return points.stream().filter(p -> p.ok() && p.series().equals(series)).findFirst().orElse(null);
    }

    static void print(List<Point> points, PrintWriter o) {
        Point ib = baseline(points);
        o.println("Goals (issue 11 §3), ours / ib_send_lat" + (ib == null ? " (not measured)" : " at " + ib.size() + " B")
                + " in this run; NULL: no arguments, " + modeThreshold(points) + ":");
        for (Line l : evaluate(points)) {
            if (Double.isNaN(l.ratio())) {
                o.printf(Locale.ROOT, "  %-48s %31s  goal <= %.1fx%n", l.what(), "not measured", l.limit());
            } else {
                o.printf(Locale.ROOT, "  %-48s %8.1f / %7.1f us = %5.2fx  goal <= %.1fx  %s%n", l.what(), l.ours(),
                        l.base(), l.ratio(), l.limit(), l.met() ? "met" : "NOT met");
            }
        }
    }

    private static String modeThreshold(List<Point> points) {
        return points.stream().filter(p -> p.series().startsWith("mode-")).findFirst()
                .map(p -> p.threshold() / 1024 + " KiB inline").orElse("no mode points");
    }
}
