package org.rpcrdma.bench.verbs;

import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

/**
 * The chunk rows' goals ({@link ChunkRows}): each chunked call shape against the sum of the
 * perftest operations it is made of, measured in the same goal round: a Send round trip
 * ({@code ib_send_lat} at 64 B: the call's and the reply's Sends are small), plus an RDMA
 * Read of the payload ({@code ib_read_lat}, a round trip) where the server pulls it, plus a
 * one-way RDMA Write of it (half of {@code ib_write_lat}'s ping-pong) where the server
 * pushes it. p50 against the sum of the p50s, p99 against the sum of the p99s; judged by
 * the median over the rounds.
 *
 * <p>Beside it, not judged: the same operations with their ends in the rows' own modes
 * ({@link #baseInModes}). The rows' server waits on completion events and the busy sum has
 * no wake-up in it; perftest pays one too when an end waits ({@code -e}).
 */
final class ChunkGoals {
    static final double P50_LIMIT = 2;
    static final double P99_LIMIT = 5;
    /** ib_send_lat at 64 B with its server on completion events, its client busy: the rows' Send round trip. */
    static final String SEND_SERVER_EVENTS = "ib_send_lat-server-e";
    /** ib_read_lat with the reading end on completion events: the rows' server pulling a chunk. */
    static final String READ_READER_EVENTS = "ib_read_lat-reader-e";

    private ChunkGoals() {}

    /** What {@code series} is made of: reads, writes (besides the Send round trip). */
    static boolean reads(String series) {
        return !series.equals("chunk-ddp-read");
    }

    static boolean writes(String series) {
        return series.equals("chunk-echo") || series.equals("chunk-ddp-read");
    }

    /** The perftest sum for {@code series} at {@code size} in round {@code op}, by {@code f}; NaN if a part is missing. */
    static double base(List<Point> points, String series, int size, String op, ToDoubleFunction<Point> f) {
        Point send = find(points, "ib_send_lat", 64, op);
        Point read = find(points, "ib_read_lat", size, op);
        Point write = find(points, "ib_write_lat", size, op);
        if (send == null || reads(series) && read == null || writes(series) && write == null) {
            return Double.NaN;
        }
        return f.applyAsDouble(send) + (reads(series) ? f.applyAsDouble(read) : 0)
                + (writes(series) ? f.applyAsDouble(write) / 2 : 0);
    }

    /**
     * The perftest sum with the ends in the rows' modes: the Send round trip with its server
     * on events, the Read with its reading end on events, the Write as in {@link #base}
     * ({@code ib_write_lat} has no {@code -e}); NaN if a part is missing.
     */
    static double baseInModes(List<Point> points, String series, int size, String op, ToDoubleFunction<Point> f) {
        Point send = find(points, SEND_SERVER_EVENTS, 64, op);
        Point read = find(points, READ_READER_EVENTS, size, op);
        Point write = find(points, "ib_write_lat", size, op);
        if (send == null || reads(series) && read == null || writes(series) && write == null) {
            return Double.NaN;
        }
        return f.applyAsDouble(send) + (reads(series) ? f.applyAsDouble(read) : 0)
                + (writes(series) ? f.applyAsDouble(write) / 2 : 0);
    }

    static Point find(List<Point> points, String series, int size, String op) {
        return points.stream().filter(p -> p.ok() && p.series().equals(series) && p.size() == size
                && p.op().equals(op)).findFirst().orElse(null);
    }

    private static double median(double[] v) {
        double[] r = Arrays.stream(v).filter(Double::isFinite).sorted().toArray();
        if (r.length == 0) {
            return Double.NaN;
        }
        return r.length % 2 == 1 ? r[r.length / 2] : (r[r.length / 2 - 1] + r[r.length / 2]) / 2;
    }

    /**
     * The table: per JIT whose rounds are there (scripts/bench runs them under both, labelled
     * "c2-r1".."c1-r3"), each shape at each size against its perftest sum of the same round.
     */
    static void print(List<Point> points, PrintWriter o) {
        if (points.stream().noneMatch(p -> p.series().startsWith("chunk-"))) {
            return;
        }
        o.println();
        o.println("Chunk rows (" + ChunkRows.THRESHOLD / 1024 + " KiB inline; server on completion events, its default;"
                + " client in the run's mode): p50 / p99 us, ours against the perftest sum of the same round (ib_send_lat 64 B"
                + " + ib_read_lat + ib_write_lat / 2, the parts the shape is made of); median of the rounds' ratios:");
        o.printf(Locale.ROOT, "  %-3s %-16s %7s  %-40s %-40s %10s %10s   %s%n", "jit", "shape", "size",
                "ours p50/p99 per round", "perftest sum p50/p99 per round", "p50 ratio", "p99 ratio",
                "p50/p99 ratio to perftest with the ends in the rows' modes (not judged)");
        for (String jit : Goals.jits(points)) {
            int[] rounds = Goals.rounds(points, jit);
            String label = jit.isEmpty() ? "-" : jit.toUpperCase(Locale.ROOT);
            for (int size : ChunkRows.SIZES) {
                for (String series : ChunkRows.SERIES) {
                    row(points, jit, rounds, label, series, size, o);
                }
            }
        }
        o.printf(Locale.ROOT, "  goal: p50 <= %.0fx, p99 <= %.0fx the perftest sum%n", P50_LIMIT, P99_LIMIT);
    }

    private static void row(List<Point> points, String jit, int[] rounds, String label, String series, int size,
            PrintWriter o) {
        StringBuilder ours = new StringBuilder();
        StringBuilder base = new StringBuilder();
        double[] r50 = new double[rounds.length];
        double[] r99 = new double[rounds.length];
        double[] m50s = new double[rounds.length];
        double[] m99s = new double[rounds.length];
        for (int i = 0; i < rounds.length; i++) {
            String op = Goals.round(jit, rounds[i]);
            Point p = find(points, series, size, op);
            double b50 = base(points, series, size, op, Point::p50);
            double b99 = base(points, series, size, op, Point::p99);
            ours.append(p == null ? " -" : String.format(Locale.ROOT, " %.0f/%.0f", p.p50(), p.p99()));
            base.append(String.format(Locale.ROOT, " %.0f/%.0f", b50, b99));
            r50[i] = p == null ? Double.NaN : p.p50() / b50;
            r99[i] = p == null ? Double.NaN : p.p99() / b99;
            m50s[i] = p == null ? Double.NaN : p.p50() / baseInModes(points, series, size, op, Point::p50);
            m99s[i] = p == null ? Double.NaN : p.p99() / baseInModes(points, series, size, op, Point::p99);
        }
        double m50 = median(r50);
        double m99 = median(r99);
        double inModes50 = median(m50s);
        double inModes99 = median(m99s);
        o.printf(Locale.ROOT, "  %-3s %-16s %7d  %-40s %-40s %5.2fx %s %5.2fx %s   %s%n", label, series, size, ours, base,
                m50, m50 <= P50_LIMIT ? "met" : "NOT", m99, m99 <= P99_LIMIT ? "met" : "NOT",
                Double.isNaN(inModes50) ? "-" : String.format(Locale.ROOT, "%.2fx / %.2fx", inModes50, inModes99));
    }
}
