package org.rpcrdma.bench.verbs;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * What one {@link LatencyCurve} run measures and how: its command line, parsed once, with
 * the defaults filled in ({@code --full} or quick decides the sizes and the time per point).
 * Apart from the runners because every phase reads it and none changes it; its
 * {@link #describe} heads the table and the JSON ({@link Report}).
 *
 * @param full             every power of two to 1 MiB and each threshold's edge; else a subset
 * @param busyPoll         both ends busy-poll ({@code --event}: completion events)
 * @param dir              where results.json, table.txt, the data files and chart.gp go
 * @param perftest         the ib_send_lat baseline tool, or "none"
 * @param warmupNanos      calls before each point is timed
 * @param measureNanos     time each point's calls are timed for
 * @param prewarmNanos     the JIT warm-up before the first series (0: none; see {@link JitPrewarm})
 * @param sizes            message sizes, sorted and distinct
 * @param thresholds       inline thresholds, one RPC curve each
 * @param serverSpinMicros server in adaptive event mode spinning this many µs after a
 *                         completion; -1: the client's mode
 * @param rounds           goal rounds to end with, for {@link Goals} ({@code --rounds N}; 3 quick, 5
 *                         full; {@code --no-modes}: 0)
 * @param roundsOnly       only the goal rounds (after the pre-warm, if any): no curve, no baselines
 *                         but each round's own ({@code --rounds-only}); for a second JVM under
 *                         another JIT in the same run
 * @param include          a points.tsv an earlier JVM of the same run wrote, reported with this
 *                         one's points ({@code --include FILE}); null: none
 * @param jit              the JIT this JVM runs, labelling its goal rounds ({@code --jit}; by
 *                         default read from the JVM's flags: {@link #jitOfThisJvm})
 * @param chunkRows        {@link ChunkRows} in each goal round: "on" (default), "off" ({@code --no-chunk-rows}),
 *                         or "only" ({@code --chunk-only}: no curve, and the rounds hold ib_send_lat and the
 *                         chunk rows alone, for a focused comparison)
 */
record CurveOptions(boolean full, boolean busyPoll, Path dir, String perftest, long warmupNanos, long measureNanos,
        long prewarmNanos, int[] sizes, int[] thresholds, int serverSpinMicros, int rounds, boolean roundsOnly,
        Path include, String jit, String chunkRows) {

    /** The command line of {@link LatencyCurve#main}; an unknown argument is an IllegalArgumentException. */
    static CurveOptions parse(String[] args) {
        boolean full = false;
        boolean busyPoll = true;
        Path dir = Path.of("bench/results/latest");
        String perftest = "ib_send_lat";
        long warmupMs = -1;
        long measureMs = -1;
        int[] sizes = null;
        int[] thresholds = LatencyCurve.THRESHOLDS;
        int serverSpin = -1;
        int rounds = -1;
        long prewarmMs = 0;
        boolean roundsOnly = false;
        Path include = null;
        String jit = jitOfThisJvm();
        String chunkRows = "on";
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--full" -> full = true;
                case "--quick" -> full = false;
                case "--event" -> busyPoll = false;
                case "--out" -> dir = Path.of(args[++i]);
                case "--perftest" -> perftest = args[++i]; // "none": no baseline run
                case "--warmup-ms" -> warmupMs = Long.parseLong(args[++i]);
                case "--measure-ms" -> measureMs = Long.parseLong(args[++i]);
                case "--prewarm-ms" -> prewarmMs = Long.parseLong(args[++i]);
                case "--sizes" -> sizes = ints(args[++i]); // a focused run, e.g. an A/B of one change
                case "--thresholds" -> thresholds = ints(args[++i]);
                // the server on (adaptive) completion events whatever the client does: the
                // "client polls, server on adaptive events" mode (0: pure events)
                case "--server-spin" -> serverSpin = Integer.parseInt(args[++i]);
                case "--no-modes" -> rounds = 0;
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--rounds-only" -> roundsOnly = true;
                case "--include" -> include = Path.of(args[++i]);
                case "--jit" -> jit = args[++i];
                case "--no-chunk-rows" -> chunkRows = "off";
                case "--chunk-only" -> chunkRows = "only";
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (warmupMs < 0) {
            warmupMs = full ? 1000 : 300;
        }
        if (measureMs < 0) {
            measureMs = full ? 3000 : 1000;
        }
        return new CurveOptions(full, busyPoll, dir, perftest, TimeUnit.MILLISECONDS.toNanos(warmupMs),
                TimeUnit.MILLISECONDS.toNanos(measureMs), TimeUnit.MILLISECONDS.toNanos(prewarmMs),
                sizes == null ? sizes(full) : sizes, thresholds, serverSpin, rounds < 0 ? (full ? 5 : 3) : rounds,
                roundsOnly, include, jit, chunkRows);
    }

    /**
     * "c1" (C1 only: {@code -XX:TieredStopAtLevel=1}, what the guest's JVMs run), "c2" (C2
     * only: {@code -XX:-TieredCompilation}) or "tiered" (the JDK's default), from this JVM's flags.
     */
    static String jitOfThisJvm() {
        String jit = "tiered";
        for (String a : java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.equals("-XX:TieredStopAtLevel=1")) {
                jit = "c1";
            } else if (a.equals("-XX:-TieredCompilation")) {
                jit = "c2";
            }
        }
        return jit;
    }

    /** Full: 0, every power of two to 1 MiB, and each threshold's edge -1, 0, +1. Quick: a subset. */
    static int[] sizes(boolean full) {
        TreeSet<Integer> s = new TreeSet<>();
        if (full) {
            s.add(0);
            for (int p = 1; p <= 1 << 20; p <<= 1) {
                s.add(p);
            }
            for (int t : LatencyCurve.THRESHOLDS) {
                s.add(LatencyCurve.lastInline(t) - 1);
                s.add(LatencyCurve.lastInline(t));
                s.add(LatencyCurve.lastInline(t) + 1);
            }
        } else {
            for (int v : new int[] {0, 64, 1024, 4096, 16384, 65536, 1 << 20}) {
                s.add(v);
            }
            s.add(LatencyCurve.lastInline(1024));
            s.add(LatencyCurve.lastInline(1024) + 1);
            s.add(LatencyCurve.lastInline(4096));
            s.add(LatencyCurve.lastInline(4096) + 1);
        }
        return s.stream().mapToInt(Integer::intValue).toArray();
    }

    /** "1,2,3" → sorted distinct ints. */
    static int[] ints(String list) {
        return Arrays.stream(list.split(",")).map(String::trim).mapToInt(Integer::parseInt).distinct()
                .sorted().toArray();
    }

    /** Whether the run is the goal rounds' ib_send_lat and chunk rows alone ({@code --chunk-only}). */
    boolean chunkOnly() {
        return chunkRows.equals("only");
    }

    /** This run's mode: busy-poll or events, the server perhaps adaptive ({@code --server-spin}). */
    Mode mode() {
        return new Mode(busyPoll ? "busy" : "event", busyPoll, serverSpinMicros);
    }

    /** One line for the table's head: what was measured, how, on which device address. */
    String describe(InetAddress ip) {
        return (roundsOnly ? "goal rounds only" : full ? "full" : "quick") + ", JIT " + jit + ", " + (busyPoll ? "busy-poll" : "event mode")
                + (serverSpinMicros < 0 ? "" : " (server: events, spinning " + serverSpinMicros + " µs after a completion)")
                + (prewarmNanos == 0 ? "" : ", JIT pre-warm " + prewarmNanos / 1_000_000 + " ms + "
                + prewarmNanos / 1_000_000 + " ms (RPC in memory, one-thread ping-pong), then calls until the JIT is quiet"
                + " (at most " + 6 * prewarmNanos / 1_000_000 + " ms)")
                + ", warm-up "
                + warmupNanos / 1_000_000 + " ms + " + measureNanos / 1_000_000 + " ms per point, device address " + ip
                .getHostAddress();
    }
}
