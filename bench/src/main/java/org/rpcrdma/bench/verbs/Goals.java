package org.rpcrdma.bench.verbs;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.function.ToDoubleFunction;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

/**
 * The bench's latency goals, evaluated from the goal rounds of one run (one boot, one JVM): each is
 * a ratio of ours to {@code ib_send_lat}'s at 64 B, so the emulator's absolute speed cancels
 * out. Ours is a NULL call with no arguments (a 68-byte Send) in each completion mode
 * ({@link Mode}) and each call shape ({@link Shape}); the shapes are also compared with each
 * other (the slowest over the fastest), and every goal is judged per JIT (a run holds a C2
 * JVM's rounds and a C1 JVM's, labelled {@code c2-r<N>} and {@code c1-r<N>}).
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

    /** A goal round's op label: {@code r<N>}, or {@code <jit>-r<N>} for a JVM labelled with its JIT. */
    private static final Pattern ROUND = Pattern.compile("(?:([a-z0-9]+)-)?r([0-9]+)");

    /** The op label of round {@code n}'s points, no JIT named. */
    static String round(int n) {
        return "r" + n;
    }

    /** The op label of round {@code n}'s points in a JVM running {@code jit} ("c1", "c2", "tiered"). */
    static String round(String jit, int n) {
        return jit.isEmpty() ? round(n) : jit + "-r" + n;
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

    /**
     * Every goal, for each JIT whose rounds are there (in the order they came): against
     * {@code ib_send_lat}, the read-in-place NULL call in each mode, the raw ping-pong and
     * the blocking call a user writes first; then, in each mode, the slowest call shape over
     * the fastest at p50 and at p99 (within 10 %).
     */
    static List<Line> evaluate(List<Point> points) {
        List<Line> lines = new ArrayList<>();
        for (String jit : jits(points)) {
            String j = jit.isEmpty() ? "" : jit.toUpperCase(Locale.ROOT) + ": ";
            int[] rounds = rounds(points, jit);
            lines.add(line(points, jit, rounds, j + "busy-poll, NULL p50", Mode.BUSY.series(), Point::p50, 1.5));
            lines.add(line(points, jit, rounds, j + "busy-poll, NULL p99", Mode.BUSY.series(), Point::p99, 3));
            lines.add(line(points, jit, rounds, j + "client polls, server adaptive 100 us, NULL p50",
                    Mode.MIXED.series(), Point::p50, 2));
            lines.add(line(points, jit, rounds, j + "events, NULL min", Mode.EVENT.series(), Point::min, 3));
            lines.add(line(points, jit, rounds, j + "raw verbs in Java, thread per side, p50", "verbs-2thread",
                    Point::p50, 1.2));
            lines.add(line(points, jit, rounds, j + "busy-poll, blocking call (callAndWait) p50",
                    Shape.WAIT.series(Mode.BUSY), Point::p50, 2));
            lines.add(line(points, jit, rounds, j + "busy-poll, blocking call (callAndWait) p99",
                    Shape.WAIT.series(Mode.BUSY), Point::p99, 3));
            for (Mode m : new Mode[] {Mode.BUSY, Mode.MIXED, Mode.EVENT}) {
                lines.add(spread(points, jit, rounds, j + m.name() + ": slowest shape / fastest, p50", m, Point::p50));
                lines.add(spread(points, jit, rounds, j + m.name() + ": slowest shape / fastest, p99", m, Point::p99));
            }
        }
        return lines;
    }

    private static Line line(List<Point> points, String jit, int[] rounds, String what, String series,
            ToDoubleFunction<Point> f, double limit) {
        double[] ratios = new double[rounds.length];
        for (int i = 0; i < rounds.length; i++) {
            Point ours = find(points, series, jit, rounds[i]);
            Point base = find(points, "ib_send_lat", jit, rounds[i]);
            ratios[i] = ours == null || base == null ? Double.NaN : f.applyAsDouble(ours) / f.applyAsDouble(base);
        }
        return new Line(what, ratios, limit);
    }

    /** Per round: the slowest of the call shapes in mode {@code m} over the fastest; NaN unless all were measured. */
    private static Line spread(List<Point> points, String jit, int[] rounds, String what, Mode m,
            ToDoubleFunction<Point> f) {
        double[] ratios = new double[rounds.length];
        for (int i = 0; i < rounds.length; i++) {
            double lo = Double.POSITIVE_INFINITY;
            double hi = 0;
            for (Shape s : Shape.values()) {
                Point p = find(points, s.series(m), jit, rounds[i]);
                double v = p == null ? Double.NaN : f.applyAsDouble(p);
                lo = Math.min(lo, v); // NaN stays NaN
                hi = Math.max(hi, v);
            }
            ratios[i] = hi / lo;
        }
        return new Line(what, ratios, 1.1);
    }

    /** The JIT labels of the goal rounds present, in the order they first came ("" for rounds with none). */
    static List<String> jits(List<Point> points) {
        List<String> jits = new ArrayList<>();
        for (Point p : points) {
            Matcher m = ROUND.matcher(p.op());
            if (m.matches()) {
                String jit = m.group(1) == null ? "" : m.group(1);
                if (!jits.contains(jit)) {
                    jits.add(jit);
                }
            }
        }
        return jits;
    }

    /** The rounds present, in order, whatever their JIT. */
    static int[] rounds(List<Point> points) {
        TreeSet<Integer> r = new TreeSet<>();
        for (Point p : points) {
            Matcher m = ROUND.matcher(p.op());
            if (m.matches()) {
                r.add(Integer.parseInt(m.group(2)));
            }
        }
        return r.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The rounds present under {@code jit}, in order. */
    static int[] rounds(List<Point> points, String jit) {
        TreeSet<Integer> r = new TreeSet<>();
        for (Point p : points) {
            Matcher m = ROUND.matcher(p.op());
            if (m.matches() && jit.equals(m.group(1) == null ? "" : m.group(1))) {
                r.add(Integer.parseInt(m.group(2)));
            }
        }
        return r.stream().mapToInt(Integer::intValue).toArray();
    }

    private static Point find(List<Point> points, String series, String jit, int round) {
        String op = round(jit, round);
        return points.stream().filter(p -> p.ok() && p.series().equals(series) && p.op().equals(op))
                .findFirst().orElse(null);
    }

    static void print(List<Point> points, PrintWriter o) {
        int[] rounds = rounds(points);
        o.println("Goals: ours / ib_send_lat at 64 B measured in the same round, " + rounds.length
                + " rounds (" + modeThreshold(points) + "; 'shape' lines: the slowest call shape over the"
                + " fastest, wait/future/read/callback); judged by the median of the rounds' ratios:");
        for (Line l : evaluate(points)) {
            StringBuilder each = new StringBuilder();
            for (double r : l.ratios()) {
                each.append(Double.isNaN(r) ? "    -" : String.format(Locale.ROOT, " %4.2f", r));
            }
            if (Double.isNaN(l.ratio())) {
                o.printf(Locale.ROOT, "  %-52s %-24s not measured  goal <= %.1fx%n", l.what(), each, l.limit());
            } else {
                o.printf(Locale.ROOT, "  %-52s %-24s median %5.2fx  goal <= %.1fx  %s%n", l.what(), each, l.ratio(),
                        l.limit(), l.met() ? "met" : "NOT met");
            }
        }
        shapes(points, o);
    }

    /** Each JIT's call shapes in each mode, p50/p99 and their ratios to ib_send_lat's, medians over the rounds. */
    private static void shapes(List<Point> points, PrintWriter o) {
        if (points.stream().noneMatch(p -> p.series().startsWith("mode-") && ROUND.matcher(p.op()).matches())) {
            return;
        }
        o.println();
        o.println("Call shapes in the goal rounds: medians over the rounds of p50 / p99 in us, and of their ratios to"
                + " ib_send_lat's:");
        o.printf(Locale.ROOT, "  %-7s %-6s %-9s %9s %9s %8s %8s%n", "jit", "mode", "shape", "p50", "p99", "p50/ib",
                "p99/ib");
        for (String jit : jits(points)) {
            int[] rounds = rounds(points, jit);
            o.printf(Locale.ROOT, "  %-7s %-6s %-9s %9.1f %9.1f%n", jit.isEmpty() ? "-" : jit, "", "ib_send_lat",
                    median(points, "ib_send_lat", jit, rounds, Point::p50),
                    median(points, "ib_send_lat", jit, rounds, Point::p99));
            for (Mode m : new Mode[] {Mode.BUSY, Mode.MIXED, Mode.EVENT}) {
                for (Shape s : Shape.values()) {
                    o.printf(Locale.ROOT, "  %-7s %-6s %-9s %9.1f %9.1f %8.2f %8.2f%n", jit.isEmpty() ? "-" : jit,
                            m.name(), s.label, median(points, s.series(m), jit, rounds, Point::p50),
                            median(points, s.series(m), jit, rounds, Point::p99),
                            line(points, jit, rounds, "", s.series(m), Point::p50, 0).ratio(),
                            line(points, jit, rounds, "", s.series(m), Point::p99, 0).ratio());
                }
            }
        }
    }

    private static double median(List<Point> points, String series, String jit, int[] rounds,
            ToDoubleFunction<Point> f) {
        double[] v = new double[rounds.length];
        for (int i = 0; i < rounds.length; i++) {
            Point p = find(points, series, jit, rounds[i]);
            v[i] = p == null ? Double.NaN : f.applyAsDouble(p);
        }
        return new Line("", v, 0).ratio();
    }

    private static String modeThreshold(List<Point> points) {
        return points.stream().filter(p -> p.series().startsWith("mode-")).findFirst()
                .map(p -> "NULL: no arguments, " + p.threshold() / 1024 + " KiB inline").orElse("no mode points");
    }
}
