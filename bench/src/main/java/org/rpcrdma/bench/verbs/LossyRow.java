package org.rpcrdma.bench.verbs;

import java.util.Locale;
import java.util.Map;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

/**
 * One impairment's row of the lossy bench: our calls' latency and throughput beside
 * perftest's on the same link, the repairs rxe made meanwhile, and whether every call was
 * answered exactly once (latency in µs round trips, rates per second).
 *
 * @param inline sequential 64 B echo calls
 * @param chunked sequential 6 KiB long calls (a Position-Zero Read chunk)
 * @param callsPerSecond forward 64 B calls answered per second with {@code window} in flight
 * @param backwardPerSecond backward calls answered per second meanwhile (2 in flight)
 * @param rpcRepairs rxe's {@link LossyLink#REPAIRS} during our calls; {@code perftestRepairs} during perftest's
 * @param forward the forward calls' executions (all phases); {@code backward} the backward ones'
 * @param failed calls that ended in an error; {@code bad} replies with wrong bytes
 */
record LossyRow(String label, String netem, Point inline, Point chunked, int window, double callsPerSecond,
        double backwardPerSecond, Point sendLat, Perftest.Rate sendBw, Map<String, Long> rpcRepairs,
        Map<String, Long> perftestRepairs, XidLedger.Check forward, XidLedger.Check backward, long failed, long bad,
        long reconnects, String firstProblem) {

    boolean exactlyOnce() {
        return forward.exactlyOnce() && backward.exactlyOnce() && failed == 0 && bad == 0;
    }

    long lost() {
        return (long) forward.lost() + backward.lost();
    }

    long duplicated() {
        return (long) forward.duplicated() + backward.duplicated();
    }

    static String header(int window) {
        return String.format(Locale.ROOT, "%-26s %17s %17s %13s %17s %12s %6s %6s %24s %8s %s%n", "impairment",
                "inline p50/p99", "6KiB long p50/p99", "calls/s w" + window + "+bk", "ib_send_lat p50/99",
                "ib_send_bw/s", "x lat", "x bw", "rxe retry/seqNAK/dup/oos", "pt retry", "lost/dup/stray");
    }

    String line() {
        return String.format(Locale.ROOT, "%-26s %17s %17s %13s %17s %12s %6s %6s %24s %8s %d/%d/%d%s%n", label,
                pair(inline), pair(chunked), String.format(Locale.ROOT, "%.0f+%.0f", callsPerSecond, backwardPerSecond),
                pair(sendLat), sendBw.ok() ? String.format(Locale.ROOT, "%.0f", sendBw.msgsPerSecond()) : "missing",
                ratio(inline.ok() && sendLat.ok(), inline.p50() / sendLat.p50()),
                ratio(sendBw.ok(), sendBw.msgsPerSecond() / callsPerSecond),
                rpcRepairs.get("completer_retry_err") + "/" + rpcRepairs.get("rcvd_seq_err") + "/"
                        + rpcRepairs.get("duplicate_request") + "/" + rpcRepairs.get("out_of_seq_request"),
                perftestRepairs.get("completer_retry_err"), lost(), duplicated(),
                (long) forward.stray() + backward.stray(),
                failed + bad > 0 ? "  " + failed + " failed, " + bad + " bad: " + firstProblem : "");
    }

    private static String pair(Point p) {
        return p.ok() ? String.format(Locale.ROOT, "%.0f/%.0f", p.p50(), p.p99()) : "missing";
    }

    private static String ratio(boolean ok, double r) {
        return ok && Double.isFinite(r) ? String.format(Locale.ROOT, "%.1f", r) : "-";
    }

    /** The row as a JSON object. */
    String json() {
        StringBuilder b = new StringBuilder("{");
        b.append("\"label\": ").append(FlatJson.quote(label)).append(", \"netem\": ").append(FlatJson.quote(netem));
        b.append(", \"inline\": ").append(point(inline)).append(", \"chunked\": ").append(point(chunked));
        b.append(", \"window\": ").append(window).append(", \"callsPerSecond\": ").append(num(callsPerSecond));
        b.append(", \"backwardPerSecond\": ").append(num(backwardPerSecond));
        b.append(", \"ib_send_lat\": ").append(point(sendLat));
        b.append(", \"ib_send_bw\": {\"status\": ").append(FlatJson.quote(sendBw.status())).append(", \"size\": ")
                .append(sendBw.size()).append(", \"iterations\": ").append(sendBw.iterations())
                .append(", \"msgsPerSecond\": ").append(num(sendBw.msgsPerSecond())).append(", \"mbPerSecond\": ")
                .append(num(sendBw.mbPerSecond())).append('}');
        b.append(", \"rxeDuringCalls\": ").append(FlatJson.write(rpcRepairs));
        b.append(", \"rxeDuringPerftest\": ").append(FlatJson.write(perftestRepairs));
        b.append(", \"forward\": ").append(check(forward)).append(", \"backward\": ").append(check(backward));
        b.append(", \"failed\": ").append(failed).append(", \"bad\": ").append(bad);
        b.append(", \"reconnects\": ").append(reconnects);
        b.append(", \"exactlyOnce\": ").append(exactlyOnce());
        b.append(", \"firstProblem\": ").append(firstProblem == null ? "null" : FlatJson.quote(firstProblem));
        return b.append('}').toString();
    }

    private static String point(Point p) {
        return String.format(Locale.ROOT, "{\"status\": %s, \"count\": %d, \"min\": %s, \"p50\": %s, \"p99\": %s,"
                + " \"p999\": %s}", FlatJson.quote(p.status()), p.count(), num(p.min()), num(p.p50()), num(p.p99()),
                num(p.p999()));
    }

    private static String check(XidLedger.Check c) {
        return String.format(Locale.ROOT, "{\"sent\": %d, \"executions\": %d, \"lost\": %d, \"duplicated\": %d,"
                + " \"stray\": %d}", c.sent(), c.executions(), c.lost(), c.duplicated(), c.stray());
    }

    private static String num(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.1f", v) : "null";
    }
}
