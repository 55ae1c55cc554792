package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.HdrHistogram.Histogram;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.transport.RegisteredBuffer;
import org.rpcrdma.transport.ReplyReader;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.transport.RpcRdmaStats;
import org.rpcrdma.transport.wire.Xdr;

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
 * [--warmup-ms N] [--measure-ms N] [--prewarm-ms N] [--event] [--server-spin US] [--no-modes] [--rounds N] [--sizes N,N..] [--thresholds N,N..]}
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
 * <p>Over 400 lines because it drives every series of the one run (the two raw ping-pongs,
 * the RPC curves, the modes) so they share one device, one boot and one set of JVM flags;
 * {@link Perftest} runs the baselines, {@link Report} and {@link Goals} do the output. The raw
 * ping-pong is the part that could move out next.
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

    private final boolean full;
    private final long warmupNanos;
    private final long measureNanos;
    /** --prewarm-ms: the JIT warm-up before the first series (0: none). */
    private long prewarmNanos;
    private final boolean busyPoll;
    /** Server in adaptive event mode spinning this many µs after a completion; -1: the client's mode. */
    private int serverSpinMicros = -1;
    /** Goal rounds to end with, for {@link Goals} ({@code --no-modes}: 0; -1: 3 quick, 5 full). */
    private int rounds = -1;
    private final InetAddress ip;
    private final List<Point> points = new ArrayList<>();
    private final PrintStream out = System.out;
    private int done;
    private int total;

    LatencyCurve(boolean full, long warmupMs, long measureMs, boolean busyPoll, InetAddress ip) {
        this.full = full;
        this.warmupNanos = TimeUnit.MILLISECONDS.toNanos(warmupMs);
        this.measureNanos = TimeUnit.MILLISECONDS.toNanos(measureMs);
        this.busyPoll = busyPoll;
        this.ip = ip;
    }

    /** Largest argument size an inline call fits under threshold {@code t}. */
    static int lastInline(int t) {
        return t - CALL_OVERHEAD;
    }

    /** Full: 0, every power of two to 1 MiB, and each threshold's edge -1, 0, +1. Quick: a subset. */
    static int[] sizes(boolean full) {
        TreeSet<Integer> s = new TreeSet<>();
        if (full) {
            s.add(0);
            for (int p = 1; p <= 1 << 20; p <<= 1) {
                s.add(p);
            }
            for (int t : THRESHOLDS) {
                s.add(lastInline(t) - 1);
                s.add(lastInline(t));
                s.add(lastInline(t) + 1);
            }
        } else {
            for (int v : new int[] {0, 64, 1024, 4096, 16384, 65536, 1 << 20}) {
                s.add(v);
            }
            s.add(lastInline(1024));
            s.add(lastInline(1024) + 1);
            s.add(lastInline(4096));
            s.add(lastInline(4096) + 1);
        }
        return s.stream().mapToInt(Integer::intValue).toArray();
    }

    public static void main(String[] args) throws Exception {
        boolean full = false;
        boolean busyPoll = true;
        Path dir = Path.of("bench/results/latest");
        String perftest = "ib_send_lat";
        long warmupMs = -1;
        long measureMs = -1;
        int[] sizes = null;
        int[] thresholds = THRESHOLDS;
        int serverSpin = -1;
        int rounds = -1;
        long prewarmMs = 0;
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
                // the server on (adaptive) completion events whatever the client does: issue 11's
                // "client polling, server on adaptive events" (0: pure events)
                case "--server-spin" -> serverSpin = Integer.parseInt(args[++i]);
                case "--no-modes" -> rounds = 0;
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (warmupMs < 0) {
            warmupMs = full ? 1000 : 300;
        }
        if (measureMs < 0) {
            measureMs = full ? 3000 : 1000;
        }
        Files.createDirectories(dir);
        LatencyCurve c = new LatencyCurve(full, warmupMs, measureMs, busyPoll, SendLatencyBenchmark.address());
        c.serverSpinMicros = serverSpin;
        c.rounds = rounds < 0 ? (full ? 5 : 3) : rounds;
        c.prewarmNanos = TimeUnit.MILLISECONDS.toNanos(prewarmMs);
        if (sizes == null) {
            sizes = sizes(full);
        }
        c.run(sizes, thresholds, perftest, dir);
        Report r = new Report(c.points, sizes, c.describe());
        r.write(dir);
        r.print(System.out);
    }

    String describe() {
        return (full ? "full" : "quick") + ", " + (busyPoll ? "busy-poll" : "event mode")
                + (serverSpinMicros < 0 ? "" : " (server: events, spinning " + serverSpinMicros + " µs after a completion)")
                + (prewarmNanos == 0 ? "" : ", JIT pre-warm " + prewarmNanos / 1_000_000 + " ms + "
                + prewarmNanos / 1_000_000 + " ms (RPC in memory, one-thread ping-pong), then calls until the JIT is quiet"
                + " (at most " + 6 * prewarmNanos / 1_000_000 + " ms)")
                + ", warm-up "
                + warmupNanos / 1_000_000 + " ms + " + measureNanos / 1_000_000 + " ms per point, device address " + ip
                .getHostAddress();
    }

    /** "1,2,3" → sorted distinct ints. */
    static int[] ints(String list) {
        return java.util.Arrays.stream(list.split(",")).map(String::trim).mapToInt(Integer::parseInt).distinct()
                .sorted().toArray();
    }

    void run(int[] sizes, int[] thresholds, String perftest, Path dir) throws InterruptedException {
        int verbsSizes = (int) java.util.Arrays.stream(sizes).filter(s -> s > 0).count();
        boolean ib = !perftest.equals("none");
        // RDMA Read and Write baselines where some curve goes through chunks (past the
        // smallest threshold's inline edge): what a chunk's RDMA Read or Write costs alone.
        int[] chunkSizes = ib ? java.util.Arrays.stream(sizes).filter(s -> s > lastInline(thresholds[0])).toArray()
                : new int[0];
        total = (ib ? 3 : 2) * verbsSizes + 2 * chunkSizes.length + thresholds.length * 2 * sizes.length
                + rounds * ((ib ? 1 : 0) + 1 + 3);
        out.printf("[bench] %d points (%s)%n", total, describe());
        if (ib) {
            Path logs = dir.resolve("perftest");
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
        if (prewarmNanos > 0) {
            prewarm(sizes, thresholds[0]);
        }
        runVerbs(sizes, true, "");
        runVerbs(sizes, false, "");
        for (int t : thresholds) {
            runRpc(t, sizes);
        }
        for (int r = 1; r <= rounds; r++) {
            String op = Goals.round(r);
            if (ib) {
                progress(Perftest.run(perftest, 64, 18700 + r, dir.resolve("perftest"), ip, GOAL_IB_ITERATIONS, op));
            }
            runVerbs(new int[] {64}, true, op);
            runModes(modeThreshold(thresholds), op);
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

    // ------------------------------------------------------------------ raw verbs

    /** The raw ping-pong at {@code sizes}, its points labelled {@code op}. */
    private void runVerbs(int[] sizes, boolean twoThreads, String op) {
        String series = twoThreads ? "verbs-2thread" : "verbs-1thread";
        int max = sizes[sizes.length - 1];
        SendLatencyBenchmark.Pair pair = null;
        PingPongServer server = null;
        try {
            pair = new SendLatencyBenchmark.Pair(ip, max);
            pair.postServerRecv(); // here, so it is posted before the first Send whichever thread serves
            pair.postClientRecv();
            if (twoThreads) {
                server = new PingPongServer(pair);
                server.start();
            }
            for (int size : sizes) {
                if (size == 0) {
                    continue; // a zero-length SGE means 2 GiB to some providers; perftest starts at 1 B too
                }
                try {
                    Histogram h = new Histogram(3);
                    long end = System.nanoTime() + warmupNanos;
                    while (System.nanoTime() < end) {
                        verbsRoundTrip(pair, size, twoThreads);
                    }
                    end = System.nanoTime() + measureNanos;
                    long t;
                    do {
                        long t0 = System.nanoTime();
                        verbsRoundTrip(pair, size, twoThreads);
                        t = System.nanoTime();
                        h.recordValue(t - t0);
                    } while (t < end);
                    progress(Point.of(series, op, 0, size, h));
                } catch (RuntimeException e) {
                    progress(Point.failed(series, op, 0, size, "error: " + e.getMessage()));
                    return; // the QPs are likely in error: the rest of this series is missing
                }
            }
        } catch (RuntimeException e) {
            progress(Point.failed(series, op, 0, 0, "setup failed: " + e));
        } finally {
            if (server != null) {
                server.stop();
            }
            if (pair != null) {
                pair.close();
            }
        }
    }

    /** Client Send of {@code size} bytes, the echo back; the server end is {@code pair} (one thread) or a PingPongServer. */
    static void verbsRoundTrip(SendLatencyBenchmark.Pair p, int size, boolean twoThreads) {
        p.send.clear();
        p.send.send(1, p.clientSendMr.lkey(), p.clientSendMr.address(), size, p.flags());
        p.clientQp.postSend(p.send);
        if (!twoThreads) {
            int got = awaitRecv(p.serverCq, p.wc);
            p.postServerRecv();
            p.send.clear();
            p.send.send(2, p.serverMr.lkey(), p.serverMr.address(), got, p.flags());
            p.serverQp.postSend(p.send);
        }
        awaitRecv(p.clientCq, p.wc);
        p.postClientRecv();
    }

    /** Busy-polls {@code cq} for a receive completion (10 s limit); returns its byte count. */
    static int awaitRecv(org.rpcrdma.transport.verbs.CompletionQueue cq,
            org.rpcrdma.transport.verbs.WorkCompletions wc) {
        long deadline = 0;
        for (int spins = 0; ; spins++) {
            int n = cq.poll(wc);
            for (int i = 0; i < n; i++) {
                if (wc.status(i) != org.rpcrdma.transport.verbs.WorkCompletions.SUCCESS) {
                    throw new IllegalStateException("completion " + org.rpcrdma.transport.verbs.WorkCompletions
                            .statusString(wc.status(i)));
                }
                if (wc.opcode(i) == org.rpcrdma.transport.verbs.WorkCompletions.OPCODE_RECV) {
                    return wc.byteLen(i);
                }
            }
            if ((spins & 0xfff) == 0xfff) {
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + TimeUnit.SECONDS.toNanos(10);
                } else if (now > deadline) {
                    throw new IllegalStateException("no receive completion within 10 s");
                }
            }
            Thread.onSpinWait();
        }
    }

    /** The server end on its own thread: receive, repost, echo the bytes back; busy-polls its CQ. */
    static final class PingPongServer implements Runnable {
        private final SendLatencyBenchmark.Pair p;
        private final Thread thread;
        private volatile boolean stop;
        private volatile Throwable failure;

        PingPongServer(SendLatencyBenchmark.Pair p) {
            this.p = p;
            this.thread = new Thread(this, "verbs-pingpong-server");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        @Override
        public void run() {
            try (var send = new org.rpcrdma.transport.verbs.SendBatch(1, 1);
                    var recv = new org.rpcrdma.transport.verbs.RecvBatch(1);
                    var wc = new org.rpcrdma.transport.verbs.WorkCompletions(4)) {
                int sends = 0;
                while (!stop) {
                    int n = p.serverCq.poll(wc);
                    for (int i = 0; i < n; i++) {
                        if (wc.status(i) != org.rpcrdma.transport.verbs.WorkCompletions.SUCCESS) {
                            throw new IllegalStateException("server completion "
                                    + org.rpcrdma.transport.verbs.WorkCompletions.statusString(wc.status(i)));
                        }
                        if (wc.opcode(i) == org.rpcrdma.transport.verbs.WorkCompletions.OPCODE_RECV) {
                            int got = wc.byteLen(i);
                            postRecv(recv); // before the echo: the client sends again only after it
                            send.clear();
                            int flags = (++sends & 15) == 0 ? org.rpcrdma.transport.verbs.SendBatch.SIGNALED : 0;
                            send.send(2, p.serverMr.lkey(), p.serverMr.address(), got, flags);
                            p.serverQp.postSend(send);
                        }
                    }
                    if (n == 0) {
                        Thread.onSpinWait();
                    }
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        private void postRecv(org.rpcrdma.transport.verbs.RecvBatch recv) {
            recv.clear();
            recv.add(10, p.serverMr.lkey(), p.serverMr.address(), p.size);
            p.serverQp.postRecv(recv);
        }

        void stop() {
            stop = true;
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (failure != null) {
                System.out.println("[bench] verbs ping-pong server: " + failure);
            }
        }
    }

    // ------------------------------------------------------------------ RPC

    /**
     * The server's handler of every point (and of the in-memory pre-warm): NULL and echo,
     * answered before the handler returns from one reply buffer of the largest size, with the
     * zero-allocation shapes the bench measures: an immediate handler (one reused call object,
     * {@link CallHandler#immediate}) and {@link #call}'s callAndRead (issue 11 §1). The reply's
     * slice is kept while its length repeats (it does, per point).
     */
    static CallHandler handler(int largest) {
        return CallHandler.immediate(new Answer(largest));
    }

    private static final class Answer implements CallHandler {
        private final MemorySegment buf;
        private MemorySegment reply;

        Answer(int largest) {
            buf = MemorySegment.ofArray(new byte[REPLY_HEADER + largest]);
            reply = buf.asSlice(0, REPLY_HEADER);
        }

        @Override
        public void handle(IncomingCall c) {
            MemorySegment m = c.message().bytes();
            int args = (int) m.byteSize() - 40;
            boolean echo = Xdr.getInt(m, 20) == PROC_ECHO;
            Xdr.putInt(buf, 0, c.xid());
            Xdr.putInt(buf, 4, 1); // REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS (zeros)
            long length = REPLY_HEADER + (echo ? args : 0);
            if (echo) {
                MemorySegment.copy(m, 40, buf, REPLY_HEADER, args);
            }
            if (reply.byteSize() != length) {
                reply = buf.asSlice(0, length);
            }
            c.reply(reply);
        }
    }

    private final class Endpoints implements AutoCloseable {
        final RpcRdmaServer server;
        final RpcRdmaClient client;

        Endpoints(int threshold, int largest) {
            this(threshold, largest, LatencyCurve.this.mode());
        }

        Endpoints(int threshold, int largest, Mode mode) {
            RpcRdmaOptions o = RpcRdmaOptions.defaults().withInlineThreshold(threshold)
                    .withConnectTimeoutMillis(30_000).withReconnectAttempts(0);
            // Sizes past the default chunk limit (e.g. 16 MiB): room for one call and one reply
            // in chunk memory registered once, so the point measures transfers, not registrations.
            int chunk = largest + 64 * 1024;
            if (chunk > o.maxChunkBytes()) {
                o = o.withMaxChunkBytes(chunk).withMaxChunkSegments(Math.max(o.maxChunkSegments(), chunk >> 18))
                        .withChunkMemoryBytes(Math.max(o.chunkMemoryBytes(), 2L * chunk));
            }
            server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), mode.server(o), handler(largest), null);
            RpcRdmaClient cl = null;
            try {
                cl = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), mode.client(o));
            } finally {
                if (cl == null) {
                    server.close();
                }
            }
            client = cl;
        }

        @Override
        public void close() {
            client.close();
            server.close();
        }
    }

    private int xid;

    /**
     * One blocking call allowing a reply of {@code replyBytes} (a Reply chunk is offered when
     * that is not inline), its reply read in place: whether it had that many bytes.
     */
    private boolean call(Endpoints e, MemorySegment call, int replyBytes) throws InterruptedException, TimeoutException {
        Xdr.putInt(call, 0, ++xid);
        expected = replyBytes;
        return e.client.connection().callAndRead(call, replyBytes, sizeCheck, 10, TimeUnit.SECONDS);
    }

    /** The reply size the next call expects, and the reader that checks it (made once: no lambda per call). */
    private int expected;
    private final ReplyReader<Boolean> sizeCheck = r -> r.byteSize() == expected;

    /** An ONC RPC call of procedure {@code proc} with {@code size} bytes of arguments (the XID is set per call). */
    static MemorySegment callMessage(int proc, int size) {
        return writeCallHeader(MemorySegment.ofArray(new byte[40 + size]), proc);
    }

    /** Writes the ONC RPC call header of procedure {@code proc} into {@code call} (the XID is set per call). */
    static MemorySegment writeCallHeader(MemorySegment call, int proc) {
        Xdr.putInt(call, 4, 0); // CALL
        Xdr.putInt(call, 8, 2); // RPC version 2
        Xdr.putInt(call, 12, 0x20000099);
        Xdr.putInt(call, 16, 1);
        Xdr.putInt(call, 20, proc);
        return call;
    }

    /**
     * {@link JitPrewarm}, then NULL and echo calls in this run's mode (inline sizes under
     * {@code threshold}) until the JIT is quiet.
     */
    private void prewarm(int[] sizes, int threshold) throws InterruptedException {
        out.println("[bench] " + JitPrewarm.run(ip, sizes, threshold, prewarmNanos));
        out.flush();
        JitPrewarm.Calls c = new JitPrewarm.Calls(sizes, threshold);
        // connected only now: in busy mode its server poller spins from the start
        try (Endpoints e = new Endpoints(threshold, c.largest())) {
            out.println("[bench] " + JitPrewarm.untilQuiet(6 * prewarmNanos,
                    n -> call(e, c.messages[c.index(n)], c.replyBytes[c.index(n)])));
        } catch (RuntimeException ex) {
            out.println("[bench] pre-warm: connect failed: " + ex);
        }
        out.flush();
    }

    private void runRpc(int threshold, int[] sizes) {
        String series = "rpc-" + threshold / 1024 + "k";
        Endpoints e = null;
        RegisteredBuffer callBuffer = null; // closed with its client if not before
        try {
            for (String op : new String[] {"null", "echo"}) {
                int proc = op.equals("echo") ? PROC_ECHO : PROC_NULL;
                for (int size : sizes) {
                    if (e == null) {
                        try {
                            e = new Endpoints(threshold, sizes[sizes.length - 1]);
                        } catch (RuntimeException ex) {
                            progress(Point.failed(series, op, threshold, size, "connect failed: " + ex.getMessage()));
                            continue;
                        }
                    }
                    // The call's bytes in registered memory (RegisteredBuffers): a long call is
                    // then pulled straight from them (zero copy), as an application would send one.
                    if (callBuffer != null) {
                        callBuffer.close();
                    }
                    callBuffer = e.client.allocateRegistered(40 + size);
                    MemorySegment call = writeCallHeader(callBuffer.segment(), proc);
                    int expect = REPLY_HEADER + (proc == PROC_ECHO ? size : 0);
                    try {
                        if (!call(e, call, expect)) {
                            throw new IllegalStateException("reply not of the " + expect + " bytes expected");
                        }
                    } catch (RpcRdmaException ex) {
                        if (ex.getMessage() != null && ex.getMessage().contains("exceeds")) {
                            // the transport's own inline check: expected past lastInline(threshold)
                            progress(Point.failed(series, op, threshold, size, size > lastInline(threshold)
                                    ? "needs chunks" : "needs chunks (below the expected edge: " + ex.getMessage() + ")"));
                        } else {
                            progress(Point.failed(series, op, threshold, size, "error: " + ex));
                            e.close();
                            e = null;
                        }
                        continue;
                    } catch (TimeoutException | RuntimeException ex) {
                        progress(Point.failed(series, op, threshold, size, "error: " + ex));
                        e.close();
                        e = null;
                        continue;
                    }
                    try {
                        progress(Point.of(series, op, threshold, size, measure(e, call, expect, warmupNanos)));
                    } catch (Exception ex) {
                        progress(Point.failed(series, op, threshold, size, "error: " + ex));
                        e.close();
                        e = null;
                    }
                }
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        } finally {
            if (e != null) {
                e.close();
            }
        }
    }

    /** Calls for {@code warmup}, then times each call for this run's measuring time. */
    private Histogram measure(Endpoints e, MemorySegment call, int expect, long warmup)
            throws InterruptedException, TimeoutException {
        return measure(e, call, expect, warmup, measureNanos);
    }

    private Histogram measure(Endpoints e, MemorySegment call, int expect, long warmup, long measure)
            throws InterruptedException, TimeoutException {
        long end = System.nanoTime() + warmup;
        while (System.nanoTime() < end) {
            call(e, call, expect);
        }
        Histogram h = new Histogram(3);
        end = System.nanoTime() + measure;
        long t;
        do {
            long t0 = System.nanoTime();
            boolean ok = call(e, call, expect);
            t = System.nanoTime();
            if (!ok) {
                throw new IllegalStateException("reply not of the " + expect + " bytes expected");
            }
            h.recordValue(t - t0);
        } while (t < end);
        return h;
    }

    /** This run's mode: busy-poll or events, the server perhaps adaptive ({@code --server-spin}). */
    private Mode mode() {
        return new Mode(busyPoll ? "busy" : "event", busyPoll, serverSpinMicros);
    }

    /**
     * The NULL call with no arguments at inline threshold {@code threshold} in each completion
     * mode ({@link Mode#BUSY}, {@link Mode#MIXED}, {@link Mode#EVENT}), one connection each, back
     * to back, labelled {@code op}: what {@link Goals} compares with ib_send_lat. Each warms up
     * for at least 2 s (a mode's own paths, the channel wait and the adaptive spin, may not have
     * run in this JVM yet) and is measured for at least 2 s.
     */
    private void runModes(int threshold, String op) {
        for (Mode m : new Mode[] {Mode.BUSY, Mode.MIXED, Mode.EVENT}) {
            try (Endpoints e = new Endpoints(threshold, 0, m)) {
                MemorySegment call = callMessage(PROC_NULL, 0);
                RpcRdmaStats server = e.server.stats();
                RpcRdmaStats client = e.client.connection().stats();
                long calls = client.callsSent.sum();
                long serverWakeups = server.channelWakeups.sum();
                long clientWakeups = client.channelWakeups.sum();
                Histogram h = measure(e, call, REPLY_HEADER, Math.max(warmupNanos, TimeUnit.SECONDS.toNanos(2)),
                        Math.max(measureNanos, TimeUnit.SECONDS.toNanos(2)));
                // the counters that explain a mode's time: how often each end slept on its channel
                calls = client.callsSent.sum() - calls;
                out.printf(Locale.ROOT, "[bench] %s %s: %.3f server and %.3f client channel wake-ups per call (%d calls),"
                        + " %d threads in this JVM%n", m.series(), op, (server.channelWakeups.sum() - serverWakeups) / (double) calls,
                        (client.channelWakeups.sum() - clientWakeups) / (double) calls, calls,
                        java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount());
                progress(Point.of(m.series(), op, threshold, 0, h));
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception ex) {
                progress(Point.failed(m.series(), op, threshold, 0, "error: " + ex));
            }
        }
    }
}
