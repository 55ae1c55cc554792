package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.transport.RpcRdmaStats;

/**
 * The project's main benchmark: round-trip latency against message size, one curve per
 * negotiated inline threshold, with the raw-verbs floors beside it, all in one JVM on one
 * device (what {@code scripts/bench} runs).
 *
 * <p>Series, every point a round trip in microseconds with min, p50, p99, p99.9 (each call
 * timed with {@code System.nanoTime} into an HdrHistogram):
 * <ul>
 *   <li>{@code ib_send_lat}: perftest run first from here, a server and a client process on
 *       the same device (it prints half the round trip; doubled here). A crashed run is a
 *       missing point, and the bench goes on.
 *   <li>{@code ib_read_lat}, {@code ib_write_lat}: perftest's RDMA Read and Write latency at
 *       the sizes past the smallest threshold's inline edge, where chunks move the data (a
 *       Read is a round trip as printed; write_lat's ping-pong is doubled).
 *   <li>{@code verbs-2thread}: a raw RC Send/Recv ping-pong on our bindings with one thread
 *       per side, each busy-polling its own CQ (perftest's shape: two single-threaded ends).
 *   <li>{@code verbs-1thread}: the same with one thread driving both ends
 *       ({@link SendLatencyBenchmark}'s shape: no cross-thread wake-up at all).
 *   <li>{@code rpc-<T>}: an RPC-over-RDMA forward call through {@link RpcRdmaClient} to an
 *       {@link RpcRdmaServer} with inline threshold T. Message size = bytes of RPC arguments.
 *       {@code null}: the reply is empty (at size 0 exactly an ONC RPC NULL call);
 *       {@code echo}: the reply carries the arguments back. Past the threshold the call goes
 *       as a long call (RDMA_NOMSG with a Position-Zero Read chunk the server pulls by RDMA
 *       Read) and an echo's reply comes back through a Reply chunk (RDMA Write), so the curve
 *       shows where inline stops and chunks take over.
 * </ul>
 * For the verbs series the size is the Send's byte count (as for ib_send_lat); an RPC of
 * size S sends S + 68 bytes (28-byte RPC-over-RDMA header + 40-byte call header).
 *
 * <p>Usage: {@code LatencyCurve [--full] [--out DIR] [--perftest ib_send_lat|none]
 * [--warmup-ms N] [--measure-ms N] [--prewarm-ms N] [--event] [--server-spin US] [--no-modes] [--rounds N] [--sizes N,N..] [--thresholds N,N..]
 * [--no-chunk-rows | --chunk-only]}
 * ({@code --server-spin}: the server on completion events, adaptive for US µs, whatever the
 * client's mode; {@code --no-modes}: without the goal rounds at the end ({@code --rounds N}
 * of them, 3 quick, 5 full: ib_send_lat and the raw ping-pong at 64 B and the NULL call in each
 * completion mode, back to back, what {@link Goals} reads); {@code --prewarm-ms}: before anything is measured, N ms of RPC calls with
 * no device (an in-memory pair), then N ms of the one-thread raw ping-pong, then
 * calls in the run's mode until the JIT is quiet (at most 6 N ms), for a C2 JVM (see {@link JitPrewarm}); the last two narrow the run to some points, for a focused comparison); the device address comes from
 * {@code -Drpcrdma.ip}, RDMA_VM_IP or RPCRDMA_TEST_IP, its name (for perftest) from
 * RDMA_VM_DEV or RPCRDMA_TEST_DEVICE. Writes DIR/results.json, DIR/table.txt, one data file per
 * curve and DIR/chart.gp (gnuplot); prints progress per point, the table and the ratios.
 *
 * <p>This class runs the phases of the one run in order (the baselines, the pre-warm, the
 * raw ping-pongs, the RPC curves, the goal rounds) so they share one device, one boot and one set
 * of JVM flags, and counts the points as they come. The command line is {@link CurveOptions};
 * {@link Perftest} runs the baselines, {@link VerbsPingPong} the raw ping-pongs,
 * {@link RpcPoints} the RPC calls; {@link Report} and {@link Goals} do the output.
 */
public final class LatencyCurve {
    static final int[] THRESHOLDS = {1024, 4096, 16384, 65536, 262144};
    /** RPC-over-RDMA header (RDMA_MSG, three empty lists) + ONC RPC call header with AUTH_NONE. */
    static final int CALL_OVERHEAD = SendLatencyBenchmark.HEADER + 40;
    static final int REPLY_HEADER = 24;
    static final int PROC_NULL = 0;
    static final int PROC_ECHO = 1;

    /** One measured (or unmeasurable) point; times in microseconds, round trip. */
    record Point(String series, String op, int threshold, int size, String status, long count,
            double min, double p50, double p99, double p999, double mean) {
        boolean ok() {
            return status.equals("ok");
        }

        static Point failed(String series, String op, int threshold, int size, String status) {
            return new Point(series, op, threshold, size, status, 0, Double.NaN, Double.NaN, Double.NaN,
                    Double.NaN, Double.NaN);
        }

        static Point of(String series, String op, int threshold, int size, Histogram h) {
            return new Point(series, op, threshold, size, "ok", h.getTotalCount(), h.getMinValue() / 1e3,
                    h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3,
                    h.getValueAtPercentile(99.9) / 1e3, h.getMean() / 1e3);
        }
    }

    private final CurveOptions options;
    private final InetAddress ip;
    private final long warmupNanos;
    private final List<Point> points = new ArrayList<>();
    private final PrintStream out = System.out;
    private final RpcPoints rpc;
    private final VerbsPingPong verbs;
    private final ChunkRows chunks;
    private int done;
    private int total;

    LatencyCurve(CurveOptions options, InetAddress ip) {
        this.options = options;
        this.ip = ip;
        this.warmupNanos = options.warmupNanos();
        this.rpc = new RpcPoints(ip, options, out, this::progress);
        this.verbs = new VerbsPingPong(ip, options, this::progress);
        this.chunks = new ChunkRows(ip, options, out, this::progress);
    }

    /** Largest argument size an inline call fits under threshold {@code t}. */
    static int lastInline(int t) {
        return t - CALL_OVERHEAD;
    }

    public static void main(String[] args) throws Exception {
        CurveOptions o = CurveOptions.parse(args);
        Files.createDirectories(o.dir());
        LatencyCurve c = new LatencyCurve(o, SendLatencyBenchmark.address());
        String description = o.describe(c.ip);
        if (o.include() != null) { // an earlier JVM of this run (another JIT): its points first
            Report.Earlier earlier = Report.read(o.include());
            c.points.addAll(earlier.points());
            description = earlier.description() + "; then " + description;
        }
        c.run();
        Report r = new Report(c.points, o.sizes(), description);
        r.write(o.dir());
        r.print(System.out);
    }

    void run() throws InterruptedException {
        int[] sizes = options.sizes();
        int[] thresholds = options.thresholds();
        String perftest = options.perftest();
        boolean full = options.full();
        int verbsSizes = (int) java.util.Arrays.stream(sizes).filter(s -> s > 0).count();
        boolean ib = !perftest.equals("none");
        // RDMA Read and Write baselines where some curve goes through chunks (past the
        // smallest threshold's inline edge): what a chunk's RDMA Read or Write costs alone.
        int[] chunkSizes = ib ? java.util.Arrays.stream(sizes).filter(s -> s > lastInline(thresholds[0])).toArray()
                : new int[0];
        total = options.rounds() * ((ib ? 1 : 0) + 1 + 3 * Shape.values().length);
        if (options.chunkOnly()) {
            runChunkOnly(perftest, ib);
            return;
        }
        if (!options.chunkRows().equals("off")) {
            total += options.rounds() * chunks.pointsPerRound(ib);
        }
        if (!options.roundsOnly()) {
            total += (ib ? 3 : 2) * verbsSizes + 2 * chunkSizes.length + thresholds.length * 2 * sizes.length;
        }
        out.printf("[bench] %d points (%s)%n", total, options.describe(ip));
        if (options.roundsOnly()) {
            if (options.prewarmNanos() > 0) {
                rpc.prewarm(sizes, thresholds[0]);
            }
            rounds(perftest, ib, thresholds);
            return;
        }
        if (ib) {
            Path logs = options.dir().resolve("perftest");
            try {
                Files.createDirectories(logs);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            int port = 18515;
            for (int size : sizes) {
                if (size > 0) {
                    progress(Perftest.run(perftest, size, port++, logs, ip, full));
                }
            }
            for (String tool : new String[] {"ib_read_lat", "ib_write_lat"}) {
                for (int size : chunkSizes) {
                    progress(Perftest.run(tool, size, port++, logs, ip, full));
                }
            }
        }
        if (options.prewarmNanos() > 0) {
            rpc.prewarm(sizes, thresholds[0]);
        }
        verbs.run(sizes, true);
        verbs.run(sizes, false);
        for (int t : thresholds) {
            rpc.run(t, sizes);
        }
        rounds(perftest, ib, thresholds);
    }

    /** The goal rounds, labelled with this JVM's JIT ({@link Goals#round(String, int)}). */
    private void rounds(String perftest, boolean ib, int[] thresholds) throws InterruptedException {
        if (ib) {
            try {
                Files.createDirectories(options.dir().resolve("perftest"));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        if (options.prewarmNanos() > 0 && !options.chunkRows().equals("off") && options.rounds() > 0) {
            out.println("[bench] " + chunks.prewarm(ChunkRows.prewarmCap(options.prewarmNanos())));
            out.flush();
        }
        for (int r = 1; r <= options.rounds(); r++) {
            String op = Goals.round(options.jit(), r);
            if (ib) {
                // a port per JIT too: the two JVMs of one run must not meet a lingering listener
                int port = 18700 + r + (options.jit().equals("c1") ? 50 : 0);
                progress(Perftest.run(perftest, 64, port, options.dir().resolve("perftest"), ip, GOAL_IB_ITERATIONS, op));
            }
            verbs.run(new int[] {64}, true, op);
            runModes(modeThreshold(thresholds), op, r);
            if (!options.chunkRows().equals("off")) {
                chunks.round(op, r, ib);
            }
        }
    }

    /** {@code --chunk-only}: the pre-warm, then goal rounds of ib_send_lat at 64 B and the chunk rows alone. */
    private void runChunkOnly(String perftest, boolean ib) throws InterruptedException {
        total = options.rounds() * ((ib ? 1 : 0) + chunks.pointsPerRound(ib));
        out.printf("[bench] %d points, chunk rows only (%s)%n", total, options.describe(ip));
        if (options.prewarmNanos() > 0) {
            rpc.prewarm(options.sizes(), options.thresholds()[0]);
            out.println("[bench] " + chunks.prewarm(ChunkRows.prewarmCap(options.prewarmNanos())));
            out.flush();
        }
        for (int r = 1; r <= options.rounds(); r++) {
            String op = Goals.round(options.jit(), r);
            if (ib) {
                Path logs = options.dir().resolve("perftest");
                try {
                    Files.createDirectories(logs);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                progress(Perftest.run(perftest, 64, 18700 + r, logs, ip, GOAL_IB_ITERATIONS, op));
            }
            chunks.round(op, r, ib);
        }
    }

    /**
     * ib_send_lat's round trips per goal round: 20,000 (about a second under TCG); its
     * default 1,000 is 30 ms of samples, whose p50 one disturbance moves.
     */
    static final int GOAL_IB_ITERATIONS = 20_000;

    /** 4 KiB if measured, else the smallest threshold: where the goals' NULL call is measured. */
    static int modeThreshold(int[] thresholds) {
        return java.util.Arrays.stream(thresholds).anyMatch(t -> t == 4096) ? 4096 : thresholds[0];
    }

    private void progress(Point p) {
        points.add(p);
        done++;
        String where = p.series() + (p.op().isEmpty() ? "" : " " + p.op());
        if (p.ok()) {
            out.printf(Locale.ROOT, "[%3d/%3d] %-20s %8d B  min %8.1f  p50 %8.1f  p99 %8.1f  p99.9 %8.1f us  (%d calls)%n",
                    done, total, where, p.size(), p.min(), p.p50(), p.p99(), p.p999(), p.count());
        } else {
            out.printf(Locale.ROOT, "[%3d/%3d] %-20s %8d B  %s%n", done, total, where, p.size(), p.status());
        }
        out.flush();
    }

    /** Slices each shape's measuring time is cut into, the shapes taking turns (see {@link #runModes}). */
    static final int SHAPE_SLICES = 8;

    /**
     * The NULL call with no arguments at inline threshold {@code threshold} in each completion
     * mode ({@link Mode#BUSY}, {@link Mode#MIXED}, {@link Mode#EVENT}), one connection each, back
     * to back, labelled {@code op}, in each call shape ({@link Shape}) on that connection: what
     * {@link Goals} compares with ib_send_lat and with each other. Each shape warms up first
     * (the first for at least 2 s: a mode's own paths, the channel wait and the adaptive spin,
     * may not have run in this JVM yet; the others for at least 1 s), then the shapes take
     * turns, {@link #SHAPE_SLICES} slices each, the order rotated every slice, until each was
     * measured for at least 2 s: the shapes are compared within 10 %, and measured one after
     * the other a drift of the guest's speed over seconds (the host's other work, the JIT)
     * showed as a difference between them.
     */
    private void runModes(int threshold, String op, int round) {
        for (Mode m : new Mode[] {Mode.BUSY, Mode.MIXED, Mode.EVENT}) {
            Shape[] shapes = Shape.order(round);
            try (RpcPoints.Endpoints e = new RpcPoints.Endpoints(ip, threshold, 0, m)) {
                MemorySegment call = RpcPoints.callMessage(PROC_NULL, 0);
                Supplier<RpcRdmaStats> server = e.server::stats;
                Supplier<RpcRdmaStats> client = e.client.connection()::stats;
                long warmup = Math.max(warmupNanos, TimeUnit.SECONDS.toNanos(2));
                for (Shape shape : shapes) {
                    rpc.measure(e, call, REPLY_HEADER, warmup, TimeUnit.MILLISECONDS.toNanos(10), shape);
                    warmup = Math.max(warmupNanos, TimeUnit.SECONDS.toNanos(1));
                }
                long slice = Math.max(options.measureNanos(), TimeUnit.SECONDS.toNanos(2)) / SHAPE_SLICES;
                Histogram[] h = new Histogram[shapes.length];
                // per shape: server and client channel wake-ups, replies taken by the caller, handed off, calls
                long[][] counts = new long[shapes.length][5];
                Exception[] failed = new Exception[shapes.length];
                for (int k = 0; k < SHAPE_SLICES; k++) {
                    for (int j = 0; j < shapes.length; j++) {
                        int i = (j + k) % shapes.length;
                        if (failed[i] != null) {
                            continue;
                        }
                        try {
                            RpcRdmaStats before = client.get();
                            long serverWakeups = server.get().channelWakeups();
                            Histogram part = rpc.measure(e, call, REPLY_HEADER, 0, slice, shapes[i]);
                            RpcRdmaStats after = client.get();
                            counts[i][0] += server.get().channelWakeups() - serverWakeups;
                            counts[i][1] += after.channelWakeups() - before.channelWakeups();
                            counts[i][2] += after.repliesTakenByCaller() - before.repliesTakenByCaller();
                            counts[i][3] += after.repliesHandedOff() - before.repliesHandedOff();
                            counts[i][4] += after.callsSent() - before.callsSent();
                            if (h[i] == null) {
                                h[i] = part;
                            } else {
                                h[i].add(part);
                            }
                        } catch (InterruptedException ex) {
                            throw ex;
                        } catch (Exception ex) {
                            failed[i] = ex;
                        }
                    }
                }
                for (int i = 0; i < shapes.length; i++) {
                    String series = shapes[i].series(m);
                    if (failed[i] != null) {
                        progress(Point.failed(series, op, threshold, 0, "error: " + failed[i]));
                        continue;
                    }
                    // the counters that explain a shape's time: how often each end slept on its
                    // channel, and whether the caller took its own reply or had it handed off
                    long calls = counts[i][4];
                    out.printf(Locale.ROOT, "[bench] %s %s: %.3f server and %.3f client channel wake-ups per call,"
                            + " replies taken by the caller %d, handed off %d (%d calls), %d threads in this JVM%n",
                            series, op, counts[i][0] / (double) calls, counts[i][1] / (double) calls, counts[i][2],
                            counts[i][3], calls, java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount());
                    progress(Point.of(series, op, threshold, 0, h[i]));
                }
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception ex) {
                for (Shape shape : shapes) {
                    progress(Point.failed(shape.series(m), op, threshold, 0, "error: " + ex));
                }
            }
        }
    }
}
