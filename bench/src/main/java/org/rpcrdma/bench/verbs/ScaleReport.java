package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The scale bench's results: a row per number of connections, the goals (the server's
 * threads and registered receive memory flat from 10 to 1,000 connections, total calls/s at
 * 1,000 not below 10's) with met / not met, as table.txt, results.json and scale.gp (gnuplot:
 * threads, memory and calls/s against connections on a log axis; scale.svg, or scale.png
 * with {@code -e 'fmt="png"'}).
 */
final class ScaleReport {
    private static final double MIB = 1024.0 * 1024;
    /** Flat: at most this much more at the largest N than at 10. */
    static final double FLAT = 1.10;

    private ScaleReport() {}

    /** One N: what the clients saw and what the server JVM reported. */
    record Row(int n, int connected, String stopped, double connectP50Ms, double connectMaxMs, int backwardClients,
            CallPump.Result forward, Map<String, String> backward, XidLedger.Check backwardCheck,
            Map<String, String> server, String failure) {

        static Row of(int n, int connected, String stopped, List<Double> connectMs, int backwardClients,
                CallPump.Result forward, Map<String, String> backward, XidLedger.Check backwardCheck,
                Map<String, String> server) {
            return new Row(n, connected, stopped, percentile(connectMs, 50), percentile(connectMs, 100),
                    backwardClients, forward, backward, backwardCheck, server, "");
        }

        static Row failed(int n, int connected, List<Double> connectMs, String why) {
            return new Row(n, connected, "", percentile(connectMs, 50), percentile(connectMs, 100), 0, null, Map.of(),
                    null, Map.of(), why);
        }

        /** A number the server reported; -1 when it did not. */
        long server(String key) {
            String v = server.get(key);
            return v == null ? -1 : (long) Double.parseDouble(v);
        }

        long back(String key) {
            String v = backward.get(key);
            return v == null ? -1 : (long) Double.parseDouble(v);
        }

        double forwardPerSecond() {
            return forward == null || forward.seconds() == 0 ? 0 : forward.answered() / forward.seconds();
        }

        double backwardPerSecond() {
            String s = backward.get("backSeconds");
            return s == null || Double.parseDouble(s) == 0 ? 0 : back("backAnswered") / Double.parseDouble(s);
        }

        double totalPerSecond() {
            return forwardPerSecond() + backwardPerSecond();
        }

        /** What went wrong with the calls: empty when every one was answered with its bytes, executed once. */
        List<String> problems() {
            List<String> p = new ArrayList<>();
            if (!failure.isEmpty()) {
                p.add(failure);
                return p;
            }
            if (!forward.clean()) {
                p.add(String.format(Locale.ROOT, "forward: %d sent, %d answered, %d failed, %d wrong, %d unanswered%s",
                        forward.sent(), forward.answered(), forward.failed(), forward.bad(), forward.unanswered(),
                        forward.firstProblem() == null ? "" : " (first: " + forward.firstProblem() + ")"));
            }
            if (server("lost") != 0 || server("duplicated") != 0 || server("stray") != 0
                    || server("executions") != forward.sent()) {
                p.add(String.format(Locale.ROOT, "server executions: %d for %d calls sent, %d lost, %d twice, %d stray",
                        server("executions"), forward.sent(), server("lost"), server("duplicated"), server("stray")));
            }
            if (back("backSent") < 0 || back("backAnswered") != back("backSent") || back("backFailed") != 0
                    || back("backBad") != 0 || back("backUnanswered") != 0) {
                p.add("backward: " + backward);
            }
            if (backwardCheck != null && !backwardCheck.exactlyOnce()) {
                p.add("client executions of backward calls: " + backwardCheck);
            }
            return p;
        }

        boolean exactlyOnce() {
            return problems().isEmpty();
        }

        String line() {
            return String.format(Locale.ROOT, "%d connections: connect p50 %.0f ms max %.0f ms; server threads %d ours"
                    + " / %d; receive memory %.1f MiB; %.0f calls/s (%.0f forward, %.0f backward); %s%s", connected,
                    connectP50Ms, connectMaxMs, server("threadsOurs"), server("threadsTotal"),
                    server("receiveMemory") / MIB, totalPerSecond(), forwardPerSecond(), backwardPerSecond(),
                    exactlyOnce() ? "every call answered once" : String.join("; ", problems()),
                    stopped.isEmpty() ? "" : "; " + stopped);
        }
    }

    /** A goal: {@code ratio} of the largest N to N = 10. */
    record Goal(String what, double atTen, double atTop, int top, boolean met) {
        double ratio() {
            return atTen == 0 ? Double.NaN : atTop / atTen;
        }
    }

    static double percentile(List<Double> v, double p) {
        if (v.isEmpty()) {
            return 0;
        }
        List<Double> s = new ArrayList<>(v);
        s.sort(null);
        int i = (int) Math.ceil(p / 100 * s.size()) - 1;
        return s.get(Math.max(0, Math.min(s.size() - 1, i)));
    }

    /** The goals, judged between the row at 10 and the largest N measured; empty when either is missing. */
    static List<Goal> goals(List<Row> rows) {
        Row ten = null;
        Row top = null;
        for (Row r : rows) {
            if (!r.failure().isEmpty()) {
                continue;
            }
            if (r.n() == 10) {
                ten = r;
            }
            if (r.n() > 10 && (top == null || r.connected() > top.connected())) {
                top = r;
            }
        }
        List<Goal> g = new ArrayList<>();
        if (ten == null || top == null) {
            return g;
        }
        g.add(flat("server threads (ours)", ten.server("threadsOurs"), top.server("threadsOurs"), top));
        g.add(flat("server threads (JVM)", ten.server("threadsTotal"), top.server("threadsTotal"), top));
        g.add(flat("registered receive memory", ten.server("receiveMemory"), top.server("receiveMemory"), top));
        g.add(new Goal("total calls/s (not below)", ten.totalPerSecond(), top.totalPerSecond(), top.connected(),
                top.totalPerSecond() >= ten.totalPerSecond()));
        return g;
    }

    private static Goal flat(String what, double atTen, double atTop, Row top) {
        return new Goal(what + " flat", atTen, atTop, top.connected(), atTop <= atTen * FLAT);
    }

    static String table(String setup, List<Row> rows) {
        StringBuilder b = new StringBuilder();
        b.append("Scale: one server JVM, N client connections from one client JVM (").append(setup).append(")\n\n");
        b.append(String.format(Locale.ROOT, "%6s %6s %15s %13s %9s %8s %18s %9s %9s %8s %8s %8s %8s  %s%n", "N",
                "conns", "connect ms p50/max", "threads our/all", "recv MiB", "MR MiB", "qp/cq/mr/srq", "NMT MiB",
                "heap MiB", "fwd/s", "back/s", "total/s", "calls", "calls checked"));
        for (Row r : rows) {
            if (!r.failure().isEmpty()) {
                b.append(String.format(Locale.ROOT, "%6d %6d  stopped: %s%n", r.n(), r.connected(), r.failure()));
                continue;
            }
            b.append(String.format(Locale.ROOT, "%6d %6d %8.0f/%-6.0f %6d/%-6d %9.2f %8.1f %18s %9.1f %9.1f %8.0f %8.0f"
                    + " %8.0f %8d  %s%n", r.n(), r.connected(), r.connectP50Ms(), r.connectMaxMs(),
                    r.server("threadsOurs"), r.server("threadsTotal"), r.server("receiveMemory") / MIB,
                    r.server("mrBytes") / MIB, r.server("qp") + "/" + r.server("cq") + "/" + r.server("mr") + "/"
                    + r.server("srq"), r.server("nmtCommitted") / MIB, r.server("heapAfterGc") / MIB,
                    r.forwardPerSecond(), r.backwardPerSecond(), r.totalPerSecond(),
                    r.forward().sent() + Math.max(0, r.back("backSent")),
                    r.exactlyOnce() ? "all answered once" : "FAILED"));
        }
        for (Row r : rows) {
            if (!r.stopped().isEmpty()) {
                b.append("N=").append(r.n()).append(": ").append(r.stopped()).append('\n');
            }
            String rdma = r.server().get("rdmaProblem");
            if (rdma != null) {
                b.append("N=").append(r.n()).append(": rdma res show stopped (the figures it did not reach are -1): ")
                        .append(rdma).append('\n');
            }
            if (r.failure().isEmpty() && !r.exactlyOnce()) {
                b.append("N=").append(r.n()).append(": ").append(String.join("; ", r.problems())).append('\n');
            }
        }
        b.append("(server JVM: threads named rpcrdma* / all; recv: RpcRdmaServer.receiveMemoryBytes(); MR: bytes of its"
                + " memory regions and qp/cq/mr/srq: its objects, both from `rdma res show`; NMT: committed native"
                + " memory (-XX:NativeMemoryTracking=summary); heap after a GC. calls/s: answered, checked;"
                + " backward calls to a random tenth of the clients, 2 in flight each)\n");
        List<Goal> goals = goals(rows);
        if (goals.isEmpty()) {
            b.append("goals: not judged (need a row at N = 10 and one above it)\n");
        }
        for (Goal g : goals) {
            b.append(String.format(Locale.ROOT, "goal: %-40s %12.1f at 10, %12.1f at %d: ratio %.2f  %s%n", g.what(),
                    g.atTen(), g.atTop(), g.top(), g.ratio(), g.met() ? "met" : "NOT met"));
        }
        return b.toString();
    }

    static String json(String setup, List<Row> rows) {
        StringBuilder b = new StringBuilder("{\n  \"description\": ").append(FlatJson.quote(setup))
                .append(",\n  \"rows\": [\n");
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("n", r.n());
            m.put("connected", r.connected());
            m.put("stopped", r.stopped());
            m.put("failure", r.failure());
            m.put("connectP50Ms", r.connectP50Ms());
            m.put("connectMaxMs", r.connectMaxMs());
            m.put("forwardPerSecond", r.forwardPerSecond());
            m.put("backwardPerSecond", r.backwardPerSecond());
            m.put("totalPerSecond", r.totalPerSecond());
            m.put("backwardClients", r.backwardClients());
            if (r.forward() != null) {
                m.put("forwardSent", r.forward().sent());
                m.put("forwardAnswered", r.forward().answered());
            }
            m.put("exactlyOnce", r.exactlyOnce());
            m.put("problems", String.join("; ", r.problems()));
            b.append("    {\"bench\": ").append(FlatJson.write(m)).append(", \"server\": ")
                    .append(FlatJson.write(numbers(r.server()))).append(", \"backward\": ")
                    .append(FlatJson.write(numbers(r.backward()))).append('}').append(i + 1 < rows.size() ? "," : "")
                    .append('\n');
        }
        b.append("  ],\n  \"goals\": [\n");
        List<Goal> goals = goals(rows);
        for (int i = 0; i < goals.size(); i++) {
            Goal g = goals.get(i);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("goal", g.what());
            m.put("atTen", g.atTen());
            m.put("atTop", g.atTop());
            m.put("top", g.top());
            m.put("met", g.met());
            b.append("    ").append(FlatJson.write(m)).append(i + 1 < goals.size() ? "," : "").append('\n');
        }
        return b.append("  ]\n}\n").toString();
    }

    /** The control channel's strings back to numbers where they are numbers. */
    private static Map<String, Object> numbers(Map<String, String> m) {
        Map<String, Object> out = new LinkedHashMap<>();
        m.forEach((k, v) -> {
            try {
                out.put(k, v.contains(".") ? (Object) Double.parseDouble(v) : (Object) Long.parseLong(v));
            } catch (NumberFormatException e) {
                out.put(k, v);
            }
        });
        return out;
    }

    static String gnuplot(List<Row> rows) {
        StringBuilder d = new StringBuilder("$scale << EOD\n# N threadsOurs threadsTotal recvMiB mrMiB totalPerSecond"
                + " forwardPerSecond backwardPerSecond\n");
        for (Row r : rows) {
            if (r.failure().isEmpty()) {
                d.append(String.format(Locale.ROOT, "%d %d %d %.3f %.3f %.1f %.1f %.1f%n", r.connected(),
                        r.server("threadsOurs"), r.server("threadsTotal"), r.server("receiveMemory") / MIB,
                        r.server("mrBytes") / MIB, r.totalPerSecond(), r.forwardPerSecond(), r.backwardPerSecond()));
            }
        }
        d.append("EOD\n");
        d.append("# gnuplot scale.gp (SVG) or gnuplot -e 'fmt=\"png\"' scale.gp, in this directory\n");
        d.append("if (!exists(\"fmt\")) fmt = \"svg\"\n");
        d.append("if (fmt eq \"png\") {\n  set terminal png size 1500,500\n  set output \"scale.png\"\n} else {\n"
                + "  set terminal svg size 1500,500 dynamic background rgb \"white\"\n  set output \"scale.svg\"\n}\n");
        d.append("set multiplot layout 1,3 title \"one server, N client connections (Soft-RoCE guest)\"\n");
        d.append("set logscale x\nset xlabel \"client connections\"\nset grid\nset key top left\nset yrange [0:*]\n");
        d.append("set title \"server JVM threads\"\nplot $scale using 1:2 with linespoints title \"rpcrdma*\","
                + " $scale using 1:3 with linespoints title \"all\"\n");
        d.append("set title \"server memory (MiB)\"\nplot $scale using 1:4 with linespoints title \"registered receive\","
                + " $scale using 1:5 with linespoints title \"all MRs (rdma res)\"\n");
        d.append("set title \"calls/s (answered)\"\nplot $scale using 1:6 with linespoints title \"total\","
                + " $scale using 1:7 with linespoints title \"forward\", $scale using 1:8 with linespoints title"
                + " \"backward\"\n");
        d.append("unset multiplot\n");
        return d.toString();
    }

    static void write(Path dir, String setup, List<Row> rows) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("table.txt"), table(setup, rows));
        Files.writeString(dir.resolve("results.json"), json(setup, rows));
        Files.writeString(dir.resolve("scale.gp"), gnuplot(rows));
    }
}
