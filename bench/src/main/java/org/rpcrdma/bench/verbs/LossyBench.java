package org.rpcrdma.bench.verbs;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;

/**
 * The loss table: for each impairment of the link between two Soft-RoCE devices
 * ({@link LossyLink}: clean, 0.1 %, 1 %, 5 % loss, 1 ms ± 0.5 ms delay with reordering, 1 %
 * duplication), on one connection (client on one device, server on the other, event mode):
 * {@code --seconds} of sequential 64 B echo calls (p50/p99), as long of sequential 6 KiB
 * long calls, as long of 64 B calls with {@code --window} in flight while the server keeps 2
 * backward calls in flight (calls/s); then {@code ib_send_lat} and {@code ib_send_bw} (64 B)
 * between the same two devices under the same netem; rxe's repair counters during each
 * part; and every call of the row executed exactly once (each end counts executions per XID).
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar org.rpcrdma.bench.verbs.LossyBench [--seconds S] [--window W]
 *      [--only LABEL,...] [--out DIR]
 * </pre>
 * Writes DIR/table.txt and DIR/results.json (after every row, so a run cut short keeps
 * its rows). Exit status 0 when every call of every row was answered exactly once.
 */
public final class LossyBench {
    /** An impairment: its label and netem parameters (empty: a clean link). */
    record Impairment(String label, String netem) {}

    static final List<Impairment> IMPAIRMENTS = List.of(new Impairment("clean", ""),
            new Impairment("loss-0.1%", "loss 0.1%"), new Impairment("loss-1%", "loss 1%"),
            new Impairment("loss-5%", "loss 5%"),
            new Impairment("delay-1ms+-0.5ms-reorder", "delay 1ms 0.5ms reorder 25% 50%"),
            new Impairment("duplicate-1%", "duplicate 1%"));
    /** Few: under loss perftest's run is all the likelier to hang the more it sends (Soft-RoCE's stalls). */
    static final int LAT_ITERATIONS = 500;
    static final int BW_ITERATIONS = 2000;
    static final int PERFTEST_TIMEOUT_SECONDS = 60;

    private final LossyLink link;
    private final Path dir;
    private final int seconds;
    private final int window;
    private final XidLedger serverLedger = new XidLedger();
    private final XidLedger clientLedger = new XidLedger();
    private final CallOptions options = LossyCalls.options(120);

    private LossyBench(LossyLink link, Path dir, int seconds, int window) {
        this.link = link;
        this.dir = dir;
        this.seconds = seconds;
        this.window = window;
    }

    public static void main(String[] args) throws Exception {
        int seconds = 5;
        int window = 8;
        List<String> only = null;
        Path dir = Path.of("lossy-out");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--window" -> window = Integer.parseInt(args[++i]);
                case "--only" -> only = List.of(args[++i].split(","));
                case "--out" -> dir = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        List<Impairment> rows = new ArrayList<>();
        for (Impairment m : IMPAIRMENTS) {
            if (only == null || only.contains(m.label())) {
                rows.add(m);
            }
        }
        System.exit(new LossyBench(LossyLink.fromEnvironment(), dir, seconds, window).run(rows) ? 0 : 1);
    }

    /** The options of both ends: event mode (two vCPUs, rxe's and netem's kernel work), calls resent after a reconnect. */
    static RpcRdmaOptions rpcOptions() {
        return RpcRdmaOptions.builder().busyPoll(false).credits(32).backwardCredits(4).callTimeoutMillis(180_000)
                .connectTimeoutMillis(120_000).silenceTimeoutMillis(15_000).build();
    }

    private boolean run(List<Impairment> impairments) throws Exception {
        Files.createDirectories(dir);
        String setup = String.format(Locale.ROOT, "client %s, server %s (%s) on a veth pair with netem on both ends;"
                + " per row: %d s of sequential 64 B echo calls, %d s of sequential %d B long calls, %d s of 64 B calls"
                + " with %d in flight and 2 backward calls beside them (event mode, both ends in one JVM);"
                + " ib_send_lat -s 64 -n %d and ib_send_bw -s 64 -n %d between the same devices (timeout %d s each:"
                + " missing if it hangs); rxe counters summed over both devices (retry = completer_retry_err, seqNAK ="
                + " rcvd_seq_err, dup = duplicate_request, oos = out_of_seq_request); lost/dup/stray: XIDs executed"
                + " 0 times, more than once, or never sent, counted by the executing end", link.clientDev(),
                link.serverDev(), link.serverIp().getHostAddress(),
                seconds, seconds, LossyCalls.SIZE, seconds, window, LAT_ITERATIONS, BW_ITERATIONS,
                PERFTEST_TIMEOUT_SECONDS);
        System.out.println("[lossy] " + setup);
        List<LossyRow> rows = new ArrayList<>();
        link.set("");
        RpcRdmaOptions o = rpcOptions();
        try (RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(link.serverIp(), 0), o,
                LossyCalls.handler(serverLedger), null);
                RpcRdmaClient client = RpcRdmaClient.connect(new InetSocketAddress(link.serverIp(), server.port()), o)) {
            client.enableBackchannel(LossyCalls.handler(clientLedger)).get(60, TimeUnit.SECONDS);
            // the JIT (C1) and the connection's memory warm, on the clean link, not counted
            LossyRow warm = row(client, server, new Impairment("warm-up", ""), 0, false);
            System.out.print("[lossy] warm-up: " + LossyRow.header(window) + "[lossy] warm-up: " + warm.line());
            int n = 1;
            for (Impairment m : impairments) {
                rows.add(row(client, server, m, n++, true));
                System.out.print("[lossy] " + LossyRow.header(window) + "[lossy] " + rows.getLast().line());
                write(setup, rows);
            }
        } finally {
            link.set("");
        }
        write(setup, rows);
        System.out.print(table(setup, rows));
        return rows.stream().allMatch(LossyRow::exactlyOnce);
    }

    private LossyRow row(RpcRdmaClient client, RpcRdmaServer server, Impairment m, int n, boolean perftest)
            throws Exception {
        serverLedger.clear();
        clientLedger.clear();
        int base = n << 24;
        int backBase = 0x40000000 | base;
        long reconnects = client.reconnects();
        link.set(m.netem());
        Map<String, Long> c0 = link.counters();
        long nanos = TimeUnit.SECONDS.toNanos(seconds);
        int[] next = {base};
        String[] firstProblem = {null};
        long[] bad = {0};
        Point inline = latency(client, LossyCalls.Kind.INLINE, next, nanos, bad, firstProblem);
        Point chunked = latency(client, LossyCalls.Kind.LONG_CALL, next, nanos, bad, firstProblem);
        CallPump back = new CallPump(List.of(server.backchannel(client.clientId())), 2, backBase,
                LossyCalls.of(options, LossyCalls.Kind.INLINE));
        CompletableFuture<CallPump.Result> backResult = CompletableFuture.supplyAsync(() -> {
            try {
                return back.run(nanos, TimeUnit.SECONDS.toNanos(150));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        CallPump.Result fwd = new CallPump(List.of(client), window, next[0],
                LossyCalls.of(options, LossyCalls.Kind.INLINE)).run(nanos, TimeUnit.SECONDS.toNanos(150));
        CallPump.Result bwd = backResult.get(200, TimeUnit.SECONDS);
        Map<String, Long> c1 = link.counters();
        XidLedger.Check forward = serverLedger.check(base, next[0] - base + fwd.sent());
        XidLedger.Check backward = clientLedger.check(backBase, bwd.sent());
        Point lat = Point.failed("ib_send_lat", m.label(), 0, 64, "not run");
        Perftest.Rate bw = Perftest.Rate.failed("ib_send_bw", 64, "not run");
        if (perftest) {
            Path logs = dir.resolve("perftest");
            Perftest.Ends ends = new Perftest.Ends(link.serverIp(), link.serverDev(), link.clientDev(),
                    PERFTEST_TIMEOUT_SECONDS);
            String op = m.label().replaceAll("[^A-Za-z0-9.]+", "_");
            lat = Perftest.latency("ib_send_lat", 64, 19100 + 2 * n, logs, ends, LAT_ITERATIONS, op);
            bw = Perftest.bandwidth("ib_send_bw", 64, 19101 + 2 * n, logs, ends, BW_ITERATIONS, op);
        }
        Map<String, Long> c2 = link.counters();
        String problem = firstProblem[0] != null ? firstProblem[0]
                : fwd.firstProblem() != null ? fwd.firstProblem() : bwd.firstProblem();
        return new LossyRow(m.label(), m.netem(), inline, chunked, window, fwd.answered() / fwd.seconds(),
                bwd.answered() / bwd.seconds(), lat, bw, LossyLink.repairs(c0, c1), LossyLink.repairs(c1, c2),
                forward, backward, fwd.failed() + bwd.failed() + fwd.unanswered() + bwd.unanswered(),
                bad[0] + fwd.bad() + bwd.bad(), client.reconnects() - reconnects, problem);
    }

    /** Sequential calls of {@code kind} for {@code nanos} (at least one), numbered from {@code next[0]} on. */
    private Point latency(RpcRdmaClient client, LossyCalls.Kind kind, int[] next, long nanos, long[] bad,
            String[] firstProblem) throws InterruptedException {
        Histogram h = new Histogram(3);
        long end = System.nanoTime() + nanos;
        String series = kind == LossyCalls.Kind.INLINE ? "rpc-inline" : "rpc-long";
        try {
            do {
                CallPump.Call c = LossyCalls.make(kind, next[0]++, options);
                long t0 = System.nanoTime();
                String p = client.callAndRead(c.bytes(), c.options(), c.check()::problem);
                h.recordValue(Math.max(1, System.nanoTime() - t0));
                if (p != null) {
                    bad[0]++;
                    if (firstProblem[0] == null) {
                        firstProblem[0] = p;
                    }
                }
            } while (System.nanoTime() < end);
        } catch (RuntimeException e) {
            if (firstProblem[0] == null) {
                firstProblem[0] = e.toString();
            }
            bad[0]++;
            return Point.failed(series, "", 4096, kind == LossyCalls.Kind.INLINE ? 64 : LossyCalls.SIZE,
                    "failed: " + e);
        }
        return Point.of(series, "", 4096, kind == LossyCalls.Kind.INLINE ? 64 : LossyCalls.SIZE, h);
    }

    static String table(String setup, List<LossyRow> rows) {
        StringBuilder b = new StringBuilder("Lossy link: " + setup + "\n\n");
        b.append(LossyRow.header(rows.isEmpty() ? 8 : rows.getFirst().window()));
        rows.forEach(r -> b.append(r.line()));
        for (LossyRow r : rows) {
            if (!r.sendLat().ok() || !r.sendBw().ok()) {
                b.append(r.label()).append(": ib_send_lat ").append(r.sendLat().status()).append("; ib_send_bw ")
                        .append(r.sendBw().status()).append('\n');
            }
        }
        b.append("\nlatency: round trips in us (p50/p99); x lat = our inline p50 / ib_send_lat p50 (its half round"
                + " trip doubled); x bw = ib_send_bw messages/s / our forward calls/s (a call is two messages);"
                + " pt retry: rxe's completer_retry_err during perftest\n");
        long lost = rows.stream().mapToLong(LossyRow::lost).sum();
        long dup = rows.stream().mapToLong(LossyRow::duplicated).sum();
        b.append(String.format(Locale.ROOT, "calls lost %d, duplicated %d, failed or wrong %d: %s%n", lost, dup,
                rows.stream().mapToLong(r -> r.failed() + r.bad()).sum(),
                rows.stream().allMatch(LossyRow::exactlyOnce) ? "every call answered exactly once" : "NOT EXACTLY ONCE"));
        return b.toString();
    }

    private void write(String setup, List<LossyRow> rows) throws java.io.IOException {
        Files.writeString(dir.resolve("table.txt"), table(setup, rows));
        StringBuilder j = new StringBuilder("{\"setup\": " + FlatJson.quote(setup) + ",\n \"rows\": [\n");
        for (int i = 0; i < rows.size(); i++) {
            j.append("  ").append(rows.get(i).json()).append(i + 1 < rows.size() ? ",\n" : "\n");
        }
        Files.writeString(dir.resolve("results.json"), j.append("]}\n").toString());
    }
}
