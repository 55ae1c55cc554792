package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.io.PrintStream;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

/**
 * What {@link LatencyCurve} writes: results.json (every point), table.txt (the tables and
 * ratios it also prints), points.tsv (every point again, for a second JVM of the run to read), one whitespace-separated data file per curve, and chart.gp, a
 * gnuplot script that draws p50 and p99 against size (one line per threshold and op, the
 * baselines on the same axes) into latency.svg, or latency.png with {@code -e 'fmt="png"'}.
 */
final class Report {
    private static final String IB = "ib_send_lat";
    private static final String V2 = "verbs-2thread";
    private static final String V1 = "verbs-1thread";
    /** perftest's RDMA Read and Write latency at the chunk sizes (what one chunk transfer costs alone). */
    private static final String IBR = "ib_read_lat";
    private static final String IBW = "ib_write_lat";

    private final List<Point> points;
    private final int[] sizes;
    private final String description;

    Report(List<Point> points, int[] sizes, String description) {
        this.points = List.copyOf(points);
        this.sizes = sizes.clone();
        this.description = description;
    }

    private Point find(String series, String op, int size) {
        for (Point p : points) {
            if (p.series().equals(series) && p.op().equals(op) && p.size() == size) {
                return p;
            }
        }
        return null;
    }

    static String rpcSeries(int threshold) {
        return "rpc-" + threshold / 1024 + "k";
    }

    private static String cell(Point p) {
        if (p == null) {
            return "-";
        }
        if (p.ok()) {
            return String.format(Locale.ROOT, "%.1f/%.1f", p.p50(), p.p99());
        }
        if (p.status().startsWith("needs chunks")) {
            return "chunks";
        }
        return p.status().startsWith("missing") ? "missing" : "error";
    }

    /** The tables and ratios (table.txt also lists every point with all its percentiles). */
    void print(PrintStream out) {
        out.print(text(false));
        out.flush();
    }

    String text(boolean everyPoint) {
        StringWriter w = new StringWriter();
        var o = new java.io.PrintWriter(w);
        o.println();
        o.println("Round trip in microseconds, p50/p99 (" + description + ").");
        o.println("size: RPC argument bytes (the call's Send is 68 bytes more), Send bytes for the baselines;");
        o.println("ib_send_lat and ib_write_lat are doubled (they print half a round trip; an RDMA Read, ib_read_lat,");
        o.println("is one round trip as printed; both only at sizes past the smallest threshold's edge). Past a");
        o.println("threshold's edge the call goes as a");
        o.println("long call (Position-Zero Read chunk, pulled by RDMA Read) and an echo's reply through a Reply chunk");
        o.println("(RDMA Write); 'missing': the baseline tool failed at that size.");
        o.println();
        matrix(o, "echo (reply carries the arguments back)", "echo", true);
        o.println();
        matrix(o, "null (empty reply)", "null", false);
        o.println();
        ratios(o);
        o.println();
        Goals.print(points, o);
        ChunkGoals.print(points, o);
        if (!everyPoint) {
            o.flush();
            return w.toString();
        }
        o.println();
        o.println("Every point (min, p50, p99, p99.9 in us):");
        o.printf(Locale.ROOT, "%-20s %-8s %8s %9s %9s %9s %9s %9s  %s%n", "series", "op", "size", "calls", "min", "p50",
                "p99", "p99.9", "status");
        for (Point p : points) {
            o.printf(Locale.ROOT, "%-20s %-8s %8d %9d %9.1f %9.1f %9.1f %9.1f  %s%n", p.series(), p.op(), p.size(),
                    p.count(), p.min(), p.p50(), p.p99(), p.p999(), p.status());
        }
        o.flush();
        return w.toString();
    }

    private void matrix(java.io.PrintWriter o, String title, String op, boolean baselines) {
        List<String> heads = new ArrayList<>();
        if (baselines) {
            heads.addAll(List.of(IB, V2, V1));
            if (points.stream().anyMatch(p -> p.series().equals(IBR) || p.series().equals(IBW))) {
                heads.addAll(List.of(IBR, IBW));
            }
        }
        for (int t : LatencyCurve.THRESHOLDS) {
            heads.add(rpcSeries(t));
        }
        o.println(title + ":");
        o.printf("%8s", "size");
        for (String h : heads) {
            o.printf(" %15s", h);
        }
        o.println();
        for (int size : sizes) {
            o.printf("%8d", size);
            for (String h : heads) {
                o.printf(" %15s", cell(find(h, h.startsWith("rpc-") ? op : "", size)));
            }
            o.println();
        }
    }

    private void ratios(java.io.PrintWriter o) {
        o.println("Ratios to ib_send_lat at the same size (ours / ib_send_lat; RPC: echo at the smallest inline");
        o.println("threshold that holds the call; 'k+ch': no threshold holds it, chunks at the largest one):");
        o.printf("%8s %8s %9s %9s %7s %9s %9s %7s %12s %12s%n", "size", "inline", "ours p50", "ib p50", "ratio",
                "ours p99", "ib p99", "ratio", "2thread p50", "2thread p99");
        for (int size : sizes) {
            Point ib = find(IB, "", size);
            if (ib == null) {
                continue;
            }
            Point ours = null; // inline at the smallest threshold that holds the call, else chunked at the largest
            for (int t : LatencyCurve.THRESHOLDS) {
                Point p = find(rpcSeries(t), "echo", size);
                if (p != null && p.ok()) {
                    ours = p;
                    if (size <= LatencyCurve.lastInline(t)) {
                        break;
                    }
                }
            }
            Point v2 = find(V2, "", size);
            if (!ib.ok()) {
                o.printf("%8d  ib_send_lat %s%n", size, ib.status());
                continue;
            }
            String v2r = v2 != null && v2.ok()
                    ? String.format(Locale.ROOT, "%12.2f %12.2f", v2.p50() / ib.p50(), v2.p99() / ib.p99())
                    : String.format("%12s %12s", "-", "-");
            if (ours == null) {
                o.printf(Locale.ROOT, "%8d %8s %9s %9.1f %7s %9s %9.1f %7s %s%n", size, "chunks", "-", ib.p50(), "-",
                        "-", ib.p99(), "-", v2r);
            } else {
                o.printf(Locale.ROOT, "%8d %8s %9.1f %9.1f %7.2f %9.1f %9.1f %7.2f %s%n", size,
                        ours.threshold() / 1024 + (size <= LatencyCurve.lastInline(ours.threshold()) ? "k" : "k+ch"), ours.p50(), ib.p50(), ours.p50() / ib.p50(), ours.p99(), ib.p99(),
                        ours.p99() / ib.p99(), v2r);
            }
        }
    }

    /** What an earlier JVM of the same run measured ({@link #read}): its description and its points. */
    record Earlier(String description, List<Point> points) {}

    /**
     * The points.tsv {@link #write} wrote: a first line with the description, then a point a
     * line (tab-separated), so a second JVM of the run (another JIT) reports both.
     */
    static Earlier read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        List<Point> points = new ArrayList<>();
        for (String l : lines.subList(1, lines.size())) {
            String[] f = l.split("\t", -1);
            points.add(new Point(f[0], f[1], Integer.parseInt(f[2]), Integer.parseInt(f[3]), f[4],
                    Long.parseLong(f[5]), Double.parseDouble(f[6]), Double.parseDouble(f[7]), Double.parseDouble(f[8]),
                    Double.parseDouble(f[9]), Double.parseDouble(f[10])));
        }
        return new Earlier(lines.get(0), points);
    }

    void write(Path dir) throws IOException {
        StringBuilder tsv = new StringBuilder(description.replace('\n', ' ')).append('\n');
        for (Point p : points) {
            tsv.append(String.join("\t", p.series(), p.op(), Integer.toString(p.threshold()),
                    Integer.toString(p.size()), p.status().replace('\t', ' ').replace('\n', ' '),
                    Long.toString(p.count()), Double.toString(p.min()), Double.toString(p.p50()),
                    Double.toString(p.p99()), Double.toString(p.p999()), Double.toString(p.mean()))).append('\n');
        }
        Files.writeString(dir.resolve("points.tsv"), tsv);
        Files.writeString(dir.resolve("table.txt"), text(true));
        Files.writeString(dir.resolve("results.json"), json());
        Map<String, String> curves = curves();
        for (var e : curves.entrySet()) {
            StringBuilder b = new StringBuilder("# size(0 plotted at 0.5) p50 p99 p99.9 min (us, round trip)\n");
            for (Point p : points) {
                if (p.ok() && (p.series() + (p.op().isEmpty() ? "" : "-" + p.op())).equals(e.getKey())) {
                    b.append(String.format(Locale.ROOT, "%s %.3f %.3f %.3f %.3f%n", p.size() == 0 ? "0.5" : p.size(),
                            p.p50(), p.p99(), p.p999(), p.min()));
                }
            }
            Files.writeString(dir.resolve("curve-" + e.getKey() + ".dat"), b);
        }
        Files.writeString(dir.resolve("chart.gp"), gnuplot(curves));
    }

    /** Curve file key to gnuplot "with" style, in drawing order: baselines first. */
    private Map<String, String> curves() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put(IB, "lines lw 3 lc rgb 'black' title 'ib\\_send\\_lat (perftest)'");
        c.put(V2, "lines lw 2 lc rgb '#777777' title 'raw verbs, thread per side'");
        c.put(V1, "lines lw 2 dt 2 lc rgb '#777777' title 'raw verbs, one thread'");
        c.put(IBR, "lines lw 2 dt 3 lc rgb '#8c564b' title 'ib\\_read\\_lat (perftest)'");
        c.put(IBW, "lines lw 2 dt 4 lc rgb '#e377c2' title 'ib\\_write\\_lat x2 (perftest)'");
        String[] colours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"};
        for (int i = 0; i < LatencyCurve.THRESHOLDS.length; i++) {
            int k = LatencyCurve.THRESHOLDS[i] / 1024;
            c.put(rpcSeries(LatencyCurve.THRESHOLDS[i]) + "-echo",
                    "linespoints pt 7 ps 0.6 lw 2 lc rgb '" + colours[i] + "' title 'RPC echo, inline " + k + " KiB'");
            c.put(rpcSeries(LatencyCurve.THRESHOLDS[i]) + "-null",
                    "linespoints pt 6 ps 0.6 lw 1 dt 2 lc rgb '" + colours[i] + "' title 'RPC null, inline " + k + " KiB'");
        }
        return c;
    }

    private String gnuplot(Map<String, String> curves) {
        StringBuilder g = new StringBuilder();
        g.append("# gnuplot chart.gp (SVG) or gnuplot -e 'fmt=\"png\"' chart.gp, in this directory\n");
        g.append("if (!exists(\"fmt\")) fmt = \"svg\"\n");
        g.append("if (fmt eq \"png\") {\n  set terminal png size 1200,1000\n  set output \"latency.png\"\n} else {\n"
                + "  set terminal svg size 1200,1000 dynamic background rgb \"white\"\n  set output \"latency.svg\"\n}\n");
        g.append("set logscale xy\nset grid\nset key outside right top\nset xrange [0.35:2000000]\n");
        g.append("set xtics (\"0\" 0.5, \"1\" 1, \"16\" 16, \"256\" 256, \"1K\" 1024, \"4K\" 4096, \"16K\" 16384, "
                + "\"64K\" 65536, \"256K\" 262144, \"1M\" 1048576)\n");
        g.append("set xlabel \"message size (bytes: RPC arguments; Send bytes for the baselines)\"\n");
        for (int t : LatencyCurve.THRESHOLDS) {
            g.append(String.format(Locale.ROOT, "set arrow from %d, graph 0 to %d, graph 1 nohead dt 3 lc rgb '#bbbbbb'%n",
                    LatencyCurve.lastInline(t), LatencyCurve.lastInline(t)));
        }
        g.append("set multiplot layout 2,1 title \"round trip against size (").append(description.replace("\"", ""))
                .append(")\\ndotted: last argument size that fits each inline threshold\"\n");
        String[] cols = {"2", "3"};
        String[] names = {"p50", "p99"};
        for (int i = 0; i < 2; i++) {
            g.append("set ylabel \"").append(names[i]).append(" round trip (us)\"\n");
            List<String> plots = new ArrayList<>();
            for (var e : curves.entrySet()) {
                boolean any = false;
                for (Point p : points) {
                    any |= p.ok() && (p.series() + (p.op().isEmpty() ? "" : "-" + p.op())).equals(e.getKey());
                }
                if (any) {
                    plots.add("\"curve-" + e.getKey() + ".dat\" using 1:" + cols[i] + " with " + e.getValue());
                }
            }
            g.append("plot ").append(String.join(", \\\n     ", plots)).append("\n");
        }
        g.append("unset multiplot\n");
        return g.toString();
    }

    private String json() {
        StringBuilder b = new StringBuilder();
        b.append("{\n  \"description\": ").append(FlatJson.quote(description)).append(",\n");
        b.append("  \"unit\": \"microseconds, round trip\",\n  \"points\": [\n");
        for (int i = 0; i < points.size(); i++) {
            Point p = points.get(i);
            b.append("    {\"series\": ").append(FlatJson.quote(p.series()))
                    .append(", \"op\": ").append(FlatJson.quote(p.op()))
                    .append(", \"inlineThreshold\": ").append(p.threshold()).append(", \"size\": ").append(p.size())
                    .append(", \"status\": ").append(FlatJson.quote(p.status())).append(", \"count\": ").append(p.count());
            if (p.ok()) {
                b.append(String.format(Locale.ROOT, ", \"min\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"p99_9\": %.3f,"
                        + " \"mean\": %.3f", p.min(), p.p50(), p.p99(), p.p999(), p.mean()));
            }
            b.append(i + 1 < points.size() ? "},\n" : "}\n");
        }
        return b.append("  ]\n}\n").toString();
    }
}
