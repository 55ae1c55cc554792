package org.rpcrdma.bench.verbs;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

/**
 * The bench's latency goals, evaluated from the goal rounds of one run (one boot, one JVM): each is
 * a ratio of ours to {@code ib_send_lat}'s at 64 B, so the emulator's absolute speed cancels
 * out. Ours is a NULL call with no arguments (a 68-byte Send) in each completion mode
 * ({@link Mode}).
 *
 * <p>Why rounds: on a software device one connection's p50 is not the next one's (busy NULL
 * calls in one boot: 37.8 to 65.3 µs from one connection to the next, {@code ib_send_lat}'s
 * 21.2 to 34.6 µs), so one point of each compared once decides nothing. Each round measures
 * {@code ib_send_lat}, the raw Java ping-pong and the three modes back to back, all labelled
 * {@code r<N>}; a goal's ratio is taken within each round (the same minute of the same boot)
 * and judged by the median over the rounds, every round's ratio printed beside it.
 */
final class Goals {
    private Goals() {}

    /** The op label of round {@code n}'s points. */
    static String round(int n) {
        return "r" + n;
    }

    /** One goal: the median over the rounds of {@code ours / base} {@code <= limit}; NaN where a point is missing. */
    record Line(String what, double[] ratios, double limit) {
        /** The median of the rounds' ratios that were measured; NaN if none was. */
        double ratio() {
            double[] r = Arrays.stream(ratios).filter(Double::isFinite).sorted().toArray();
            if (r.length == 0) {
                return Double.NaN;
            }
            return r.length % 2 == 1 ? r[r.length / 2] : (r[r.length / 2 - 1] + r[r.length / 2]) / 2;
        }

        boolean met() {
            return ratio() <= limit; // false for NaN
        }
    }

    static List<Line> evaluate(List<Point> points) {
        int[] rounds = rounds(points);
        List<Line> lines = new ArrayList<>();
        lines.add(line(points, rounds, "busy-poll, NULL p50", Mode.BUSY.series(), Point::p50, 1.5));
        lines.add(line(points, rounds, "busy-poll, NULL p99", Mode.BUSY.series(), Point::p99, 3));
        lines.add(line(points, rounds, "client polls, server adaptive 100 us, NULL p50", Mode.MIXED.series(),
                Point::p50, 2));
        lines.add(line(points, rounds, "events, NULL min", Mode.EVENT.series(), Point::min, 3));
        lines.add(line(points, rounds, "raw verbs in Java, thread per side, p50", "verbs-2thread", Point::p50, 1.2));
        return lines;
    }

    private static Line line(List<Point> points, int[] rounds, String what, String series, ToDoubleFunction<Point> f,
            double limit) {
        double[] ratios = new double[rounds.length];
        for (int i = 0; i < rounds.length; i++) {
            Point ours = find(points, series, rounds[i]);
            Point base = find(points, "ib_send_lat", rounds[i]);
            ratios[i] = ours == null || base == null ? Double.NaN : f.applyAsDouble(ours) / f.applyAsDouble(base);
        }
        return new Line(what, ratios, limit);
    }

    /** The rounds present, in order (points whose op is {@code r<N>}). */
    static int[] rounds(List<Point> points) {
        TreeSet<Integer> r = new TreeSet<>();
        for (Point p : points) {
            if (p.op().matches("r[0-9]+")) {
                r.add(Integer.parseInt(p.op().substring(1)));
            }
        }
        return r.stream().mapToInt(Integer::intValue).toArray();
    }

    private static Point find(List<Point> points, String series, int round) {
        return points.stream().filter(p -> p.ok() && p.series().equals(series) && p.op().equals(round(round)))
                .findFirst().orElse(null);
    }

    static void print(List<Point> points, PrintWriter o) {
        int[] rounds = rounds(points);
        o.println("Goals: ours / ib_send_lat at 64 B measured in the same round, " + rounds.length
                + " rounds (" + modeThreshold(points) + "); judged by the median of the rounds' ratios:");
        for (Line l : evaluate(points)) {
            StringBuilder each = new StringBuilder();
            for (double r : l.ratios()) {
                each.append(Double.isNaN(r) ? "    -" : String.format(Locale.ROOT, " %4.2f", r));
            }
            if (Double.isNaN(l.ratio())) {
                o.printf(Locale.ROOT, "  %-48s %-24s not measured  goal <= %.1fx%n", l.what(), each, l.limit());
            } else {
                o.printf(Locale.ROOT, "  %-48s %-24s median %5.2fx  goal <= %.1fx  %s%n", l.what(), each, l.ratio(),
                        l.limit(), l.met() ? "met" : "NOT met");
            }
        }
    }

    private static String modeThreshold(List<Point> points) {
        return points.stream().filter(p -> p.series().startsWith("mode-")).findFirst()
                .map(p -> "NULL: no arguments, " + p.threshold() / 1024 + " KiB inline").orElse("no mode points");
    }
}
