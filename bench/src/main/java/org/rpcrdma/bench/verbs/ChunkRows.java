package org.rpcrdma.bench.verbs;

import static org.rpcrdma.bench.verbs.LatencyCurve.PROC_ECHO;
import static org.rpcrdma.bench.verbs.LatencyCurve.PROC_NULL;
import static org.rpcrdma.bench.verbs.LatencyCurve.REPLY_HEADER;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.transport.RegisteredBuffer;
import org.rpcrdma.transport.ReplyReader;
import org.rpcrdma.transport.RpcRdmaStats;
import org.rpcrdma.xdr.Xdr;

/**
 * The chunk rows of a goal round: the four chunked call shapes at 4 KiB and 64 KiB, each
 * beside the perftest operations it is made of, measured in the same round, with the server
 * in the completion mode it has by default (completion events, no spinning) and the client
 * in the run's mode (busy-polling, as perftest's two ends do, unless {@code --event}):
 * <ul>
 *   <li>{@code chunk-long}: a NULL call with S bytes of arguments, a long call (RDMA_NOMSG,
 *       the call in a Position-Zero Read chunk the server pulls by RDMA Read), empty reply;
 *       made of a Send round trip and an RDMA Read of S bytes.
 *   <li>{@code chunk-echo}: the same call echoed, its reply through the Reply chunk the call
 *       offers (RDMA Write): a Send round trip, an RDMA Read and an RDMA Write of S bytes.
 *   <li>{@code chunk-ddp-write}: an inline call with a DDP argument of S bytes in a read chunk
 *       (an NFS WRITE's shape, RFC 8166 §3.4.5), pulled by RDMA Read; empty reply: a Send
 *       round trip and an RDMA Read.
 *   <li>{@code chunk-ddp-read}: an inline call whose S-byte result the server writes into the
 *       call's write chunk (an NFS READ's shape, §3.4.6) before its inline reply: a Send round
 *       trip and an RDMA Write.
 * </ul>
 * The threshold is 4 KiB (the Linux client's default), so both sizes are past it. Every
 * payload is the caller's registered memory ({@link RegisteredBuffer}): exposed in place,
 * as an application would send one. Perftest's RDMA Write latency is a ping-pong: half its
 * round trip is the one-way Write a reply's data costs ({@link ChunkGoals}).
 */
final class ChunkRows {
    static final int[] SIZES = {4096, 65536};
    static final int THRESHOLD = 4096;
    static final int PROC_DDP_WRITE = 2;
    static final int PROC_DDP_READ = 3;
    /** The four shapes, in the order they are measured. */
    static final List<String> SERIES = List.of("chunk-long", "chunk-echo", "chunk-ddp-write", "chunk-ddp-read");
    /**
     * The server at its defaults (events, no spin) unless {@code --server-spin} asks for an
     * adaptive server; the client busy-polling or ({@code --event}) on events.
     */
    static Mode mode(CurveOptions o) {
        return new Mode("chunk", o.busyPoll(), Math.max(0, o.serverSpinMicros()));
    }

    private final InetAddress ip;
    private final CurveOptions options;
    private final PrintStream out;
    private final Consumer<Point> progress;

    ChunkRows(InetAddress ip, CurveOptions options, PrintStream out, Consumer<Point> progress) {
        this.ip = ip;
        this.options = options;
        this.out = out;
        this.progress = progress;
    }

    /**
     * Points one round adds: per size, ib_read_lat, ib_write_lat and the four shapes; with
     * the server on events, also ib_send_lat with its server on events (once) and
     * ib_read_lat with its reading end on events (per size), the operations in the rows' own
     * modes ({@link ChunkGoals#baseInModes}).
     */
    int pointsPerRound(boolean perftest) {
        boolean inModes = perftest && serverOnEvents();
        return (inModes ? 1 : 0) + SIZES.length * ((perftest ? 2 : 0) + (inModes ? 1 : 0) + SERIES.size());
    }

    /** Whether the rows' server waits on completion events with no spin (its default). */
    private boolean serverOnEvents() {
        return options.serverSpinMicros() <= 0;
    }

    /** One round's chunk rows, labelled {@code op} (ib_send_lat at 64 B is the round's own). */
    void round(String op, int round, boolean perftest) throws InterruptedException {
        Path logs = options.dir().resolve("perftest");
        int port = 18800 + 10 * round;
        boolean inModes = perftest && serverOnEvents();
        if (inModes) {
            progress.accept(Perftest.runOnEvents("ib_send_lat", 64, port++, logs, ip, 5000, op, true,
                    ChunkGoals.SEND_SERVER_EVENTS));
        }
        for (int size : SIZES) {
            if (perftest) {
                int n = size >= 65536 ? 1000 : 5000;
                progress.accept(Perftest.run("ib_read_lat", size, port++, logs, ip, n, op));
                progress.accept(Perftest.run("ib_write_lat", size, port++, logs, ip, n, op));
                if (inModes) {
                    progress.accept(Perftest.runOnEvents("ib_read_lat", size, port++, logs, ip, n, op, false,
                            ChunkGoals.READ_READER_EVENTS));
                }
            }
            measureShapes(op, size);
        }
    }

    /**
     * The least time the rows' pre-warm may take to reach a quiet JIT. Under TCG, judged by
     * the compiler threads' CPU, a C2-only JVM was quiet after 90 s of calls and 76 s of the
     * rows' own pre-warm, and still compiling at caps of 30 s and 90 s
     * (bench/profiles/jit-20261127/); rows measured while it compiled had p99s 2-5 times
     * higher at 4 KiB.
     */
    static final long PREWARM_MIN_CAP_NANOS = TimeUnit.SECONDS.toNanos(240);

    /** The cap of the rows' pre-warm for a run pre-warmed for {@code prewarmNanos}: six times that, at least {@link #PREWARM_MIN_CAP_NANOS}. */
    static long prewarmCap(long prewarmNanos) {
        return Math.max(6 * prewarmNanos, PREWARM_MIN_CAP_NANOS);
    }

    /** The longest a measured row waits for the JIT to settle first ({@link JitPrewarm#settle}). */
    private static final long SETTLE_CAP_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** A pre-warm pass's time per shape and size: warm-up, then timed calls (nothing reported). */
    private static final long PASS_WARMUP_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long PASS_MEASURE_NANOS = TimeUnit.MILLISECONDS.toNanos(400);

    /**
     * The JIT pre-warm of the rows' own path (the RPC pre-warm makes only inline calls):
     * passes of the rows themselves, every shape at both sizes with the measuring code, its
     * counters and samples, nothing reported, until one whole pass ran with the JIT quiet
     * ({@link JitPrewarm#jitMillis}) or {@code capNanos}; once per JVM, before the first
     * round's rows. Calls alone were not enough: after they left the JIT quiet, the first
     * round's 4 KiB rows ran with the C2 thread busy 44-86 % of the time (the measuring
     * loop, the samples of /proc and new shapes' uncommon traps compiling), the second
     * round's at 2-4 %, and its p99 was 2-5 times lower. Returns a line saying what it did.
     */
    String prewarm(long capNanos) {
        long t0 = System.nanoTime();
        int passes = 0;
        boolean quiet = false;
        try {
            while (!quiet && System.nanoTime() - t0 < capNanos) {
                long p0 = System.nanoTime();
                long jit0 = JitPrewarm.jitMillis();
                for (int size : SIZES) {
                    shapes("pre-warm", size, PASS_WARMUP_NANOS, PASS_MEASURE_NANOS, false);
                }
                passes++;
                long pass = System.nanoTime() - p0;
                quiet = JitPrewarm.jitMillis() - jit0 <= JitPrewarm.QUIET_MILLIS * pass / JitPrewarm.QUIET_NANOS;
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return "chunk rows pre-warm interrupted";
        } catch (RuntimeException ex) {
            return "chunk rows pre-warm failed: " + ex;
        }
        return String.format(Locale.ROOT, "chunk rows pre-warm: %d passes of the rows in %.1f s, %s", passes,
                (System.nanoTime() - t0) / 1e9, quiet ? "the last with the JIT at most " + JitPrewarm.QUIET_MILLIS
                        + " ms per " + JitPrewarm.QUIET_NANOS / 1_000_000_000 + " s" : "the JIT still compiling at the cap");
    }

    private void measureShapes(String op, int size) throws InterruptedException {
        shapes(op, size, warmup(), measure(), true);
    }

    /**
     * The four shapes at {@code size}, each warmed up and then timed; {@code report}: their
     * lines and points, else (a pre-warm pass) nothing, and a failure is thrown.
     */
    private void shapes(String op, int size, long warmup, long measure, boolean report) throws InterruptedException {
        ChunkAnswer answer = new ChunkAnswer(size);
        try (RpcPoints.Endpoints e = new RpcPoints.Endpoints(ip, THRESHOLD, size, mode(options),
                CallHandler.immediate(answer));
                RegisteredBuffer call = e.client.allocateRegistered(40 + 4 + size);
                RegisteredBuffer data = e.client.allocateRegistered(size)) {
            Counters stats = new Counters(e);
            SoftirqStats kernel = new SoftirqStats();
            for (String series : SERIES) {
                try {
                    Shape s = shape(series, call.segment(), data.segment(), size);
                    // a measured row starts with the JIT settled (what ran since it last was
                    // compiles meanwhile, with no calls competing for the CPU)
                    long settled = report ? JitPrewarm.settle(SETTLE_CAP_NANOS) : 0;
                    long[] before = stats.counters();
                    // the span covers both samples: each thread's CPU is read from one sample to the
                    // next, and reading /proc takes long under TCG (and has the JIT compile it), so a
                    // span without them made a thread run more than 100 % of it
                    long t0 = System.nanoTime();
                    SoftirqStats.Sample k0 = kernel.sample();
                    Histogram h = measure(e, s, answer, warmup, measure);
                    SoftirqStats.Sample k1 = kernel.sample();
                    long wall = System.nanoTime() - t0;
                    long[] after = stats.counters();
                    // a pre-warm pass makes the lines and the point too (the JIT compiles them
                    // then, not during the measured rows), and drops them
                    String counters = String.format(Locale.ROOT, "[bench] %s %s %d B: per call %s; %s; JIT settled in %d ms%n",
                            series, op, size, stats.describe(before, after),
                            SoftirqStats.describe(k0, k1, after[0] - before[0], wall), settled);
                    String split = String.format(Locale.ROOT, "[bench] %s %s %d B: call sent -> handler p50 %.1f p99 %.1f"
                            + " us, handler -> reply read p50 %.1f p99 %.1f us%n", series, op, size,
                            toHandler.getValueAtPercentile(50) / 1e3, toHandler.getValueAtPercentile(99) / 1e3,
                            fromHandler.getValueAtPercentile(50) / 1e3, fromHandler.getValueAtPercentile(99) / 1e3);
                    Point point = Point.of(series, op, THRESHOLD, size, h);
                    if (report) {
                        out.print(counters);
                        out.print(split);
                        progress.accept(point);
                    }
                } catch (InterruptedException ex) {
                    throw ex;
                } catch (Exception ex) {
                    if (!report) {
                        throw new IllegalStateException(series + " at " + size + " B: " + ex, ex);
                    }
                    progress.accept(Point.failed(series, op, THRESHOLD, size, "error: " + ex));
                }
            }
        } catch (InterruptedException ex) {
            throw ex;
        } catch (Exception ex) {
            if (!report) {
                throw ex instanceof RuntimeException r ? r : new IllegalStateException(ex);
            }
            for (String series : SERIES) {
                progress.accept(Point.failed(series, op, THRESHOLD, size, "error: " + ex));
            }
        }
    }

    private long warmup() {
        return Math.max(options.warmupNanos(), TimeUnit.SECONDS.toNanos(1));
    }

    private long measure() {
        return Math.max(options.measureNanos(), TimeUnit.SECONDS.toNanos(2));
    }

    /** One shape: the call's bytes (its XID set per call), its options and the reply's length. */
    record Shape(MemorySegment call, CallOptions options, int replyBytes) {}

    static Shape shape(String series, MemorySegment callMem, MemorySegment data, int size) {
        CallOptions base = CallOptions.timeout(10, TimeUnit.SECONDS);
        return switch (series) {
            case "chunk-long" -> new Shape(RpcPoints.writeCallHeader(callMem.asSlice(0, 40 + size), PROC_NULL), base,
                    REPLY_HEADER);
            case "chunk-echo" -> new Shape(RpcPoints.writeCallHeader(callMem.asSlice(0, 40 + size), PROC_ECHO),
                    base.withMaxReplyBytes(REPLY_HEADER + size), REPLY_HEADER + size);
            case "chunk-ddp-write" -> {
                // the opaque's length word at 40, the data (a read chunk) at XDR position 44
                MemorySegment m = RpcPoints.writeCallHeader(callMem.asSlice(0, 44), PROC_DDP_WRITE);
                Xdr.putInt(m, 40, size);
                yield new Shape(m, base.withDdpArgument(DdpArgument.of(44, data)), REPLY_HEADER);
            }
            case "chunk-ddp-read" -> {
                // arguments: the count wanted; the reply: the opaque's length word, its data placed
                MemorySegment m = RpcPoints.writeCallHeader(callMem.asSlice(0, 44), PROC_DDP_READ);
                Xdr.putInt(m, 40, size);
                yield new Shape(m, base.withReceptacle(data), REPLY_HEADER + 4);
            }
            default -> throw new IllegalArgumentException(series);
        };
    }

    /**
     * The server of the chunk rows: NULL and echo as {@link RpcPoints#handler}, DDP WRITE
     * (checks the pulled data's length, empty reply) and DDP READ ({@code size} bytes of
     * result written into the call's write chunk). It notes when it ran (same JVM, same
     * clock as the caller's), which splits a round trip in two: the call's way to the handler
     * (Send, the server's wake-up, its RDMA Read) and the reply's way back.
     */
    static final class ChunkAnswer implements CallHandler {
        volatile long handledAt;
        private final MemorySegment buf;
        private final MemorySegment result;
        /** The replies' slices, made once (the rows' sizes do not change on an endpoint). */
        private final MemorySegment empty;
        private final MemorySegment echo;
        private final MemorySegment reduced;
        private final int size;

        ChunkAnswer(int size) {
            this.size = size;
            buf = MemorySegment.ofArray(new byte[REPLY_HEADER + 4 + size]);
            result = Arena.global().allocate(size, 8);
            result.fill((byte) 7);
            empty = buf.asSlice(0, REPLY_HEADER);
            echo = buf.asSlice(0, REPLY_HEADER + size);
            reduced = buf.asSlice(0, REPLY_HEADER + 4);
        }

        @Override
        public void handle(IncomingCall c) {
            handledAt = System.nanoTime();
            MemorySegment m = c.message().bytes();
            int proc = Xdr.getInt(m, 20);
            Xdr.putInt(buf, 0, c.xid());
            Xdr.putInt(buf, 4, 1); // REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS (zeros)
            switch (proc) {
                case PROC_ECHO -> {
                    long args = m.byteSize() - 40;
                    MemorySegment.copy(m, 40, buf, REPLY_HEADER, args);
                    c.reply(args == size ? echo : buf.asSlice(0, REPLY_HEADER + args));
                }
                case PROC_DDP_WRITE -> {
                    int count = Xdr.getInt(m, 40);
                    if (m.byteSize() != 44 + Xdr.roundUp(count)) {
                        throw new IllegalStateException("DDP WRITE of " + count + " bytes arrived as " + m.byteSize());
                    }
                    c.reply(empty);
                }
                case PROC_DDP_READ -> {
                    int count = Xdr.getInt(m, 40);
                    Xdr.putInt(buf, REPLY_HEADER, count);
                    c.reply(reduced, count == size ? result : result.asSlice(0, count));
                }
                default -> c.reply(empty);
            }
        }
    }

    private int xid = 0x40000000;
    private int expected;
    private final ReplyReader<Boolean> sizeCheck = r -> r.byteSize() == expected;

    private boolean call(RpcPoints.Endpoints e, Shape s) throws InterruptedException {
        Xdr.putInt(s.call(), 0, ++xid);
        expected = s.replyBytes();
        return e.client.connection().callAndRead(s.call(), s.options(), sizeCheck);
    }

    /** The last point's two halves ({@link ChunkAnswer}), in ns. */
    private final Histogram toHandler = new Histogram(3);
    private final Histogram fromHandler = new Histogram(3);

    private Histogram measure(RpcPoints.Endpoints e, Shape s, ChunkAnswer a, long warmup, long measure)
            throws InterruptedException {
        long end = System.nanoTime() + warmup;
        while (System.nanoTime() < end) {
            call(e, s);
        }
        Histogram h = new Histogram(3);
        toHandler.reset();
        fromHandler.reset();
        end = System.nanoTime() + measure;
        long t;
        do {
            long t0 = System.nanoTime();
            boolean ok = call(e, s);
            t = System.nanoTime();
            if (!ok) {
                throw new IllegalStateException("reply not of the " + s.replyBytes() + " bytes expected");
            }
            h.recordValue(t - t0);
            long at = a.handledAt;
            if (at - t0 > 0 && t - at > 0) {
                toHandler.recordValue(at - t0);
                fromHandler.recordValue(t - at);
            }
        } while (t < end);
        return h;
    }

    /** The counters that say what a chunked call did, per call, from both ends. */
    private static final class Counters {
        private final RpcPoints.Endpoints e;

        Counters(RpcPoints.Endpoints e) {
            this.e = e;
        }

        long[] counters() {
            RpcRdmaStats c = e.client.connection().stats();
            RpcRdmaStats s = e.server.stats();
            return new long[] {c.callsSent(), s.rdmaReads(), s.rdmaWrites(), c.windowsBound(), c.localInvalidations(),
                    c.remoteInvalidations(), s.channelWakeups(), c.channelWakeups(), c.repliesHandedOff(),
                    s.sendQueuePosts(), c.sendQueuePosts()};
        }

        /** Per call; "replies handed off": taken by the client's poller thread, not the busy caller itself. */
        String describe(long[] a, long[] b) {
            double calls = Math.max(1, b[0] - a[0]);
            return String.format(Locale.ROOT, "%.2f RDMA Reads, %.2f Writes, %.2f binds, %.2f LOCAL_INV, %.2f remote"
                    + " invalidations, %.2f server / %.2f client channel wake-ups, %.2f replies handed off,"
                    + " %.2f server / %.2f client ibv_post_send (%d calls)",
                    (b[1] - a[1]) / calls, (b[2] - a[2]) / calls, (b[3] - a[3]) / calls, (b[4] - a[4]) / calls,
                    (b[5] - a[5]) / calls, (b[6] - a[6]) / calls, (b[7] - a[7]) / calls, (b[8] - a[8]) / calls,
                    (b[9] - a[9]) / calls, (b[10] - a[10]) / calls, b[0] - a[0]);
        }
    }
}
