package org.rpcrdma.bench.verbs;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.rpcrdma.transport.Backchannel;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.transport.verbs.LiveResources;

/**
 * The soak: a million calls on one connection without a hang, a crash or a
 * growing tail. Keeps {@code window} forward echo calls in flight (and, with
 * {@code --backward}, 2 backward calls beside them) and prints, every {@code --every}
 * calls, the rate, latency percentiles of that stretch (submit to completion), the heap
 * after a GC, threads and live native resources, so growth shows as a trend.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar org.rpcrdma.bench.verbs.Soak [--calls N] [--window W]
 *      [--every N] [--event | --busy | --spin US] [--backward] [--out DIR]
 * </pre>
 * Exit status: 0 when every call completed; 1 when calls failed; 2 when no call completed
 * for {@link #STALL_SECONDS} (a hang: the outstanding state is printed).
 */
public final class Soak {
    static final long STALL_SECONDS = 30;

    private Soak() {}

    public static void main(String[] args) throws Exception {
        long calls = 1_000_000;
        int window = 8;
        long every = 100_000;
        boolean busyPoll = false;
        int spinMicros = 0;
        boolean backward = false;
        Path dir = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--calls" -> calls = Long.parseLong(args[++i]);
                case "--window" -> window = Integer.parseInt(args[++i]);
                case "--every" -> every = Long.parseLong(args[++i]);
                case "--event" -> busyPoll = false;
                case "--busy" -> busyPoll = true;
                case "--spin" -> {
                    busyPoll = false;
                    spinMicros = Integer.parseInt(args[++i]);
                }
                case "--backward" -> backward = true;
                case "--out" -> dir = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        PrintStream out = System.out;
        if (dir != null) {
            Files.createDirectories(dir);
            out = new Tee(System.out, new PrintStream(Files.newOutputStream(dir.resolve("soak.txt")), true));
        }
        System.exit(run(SendLatencyBenchmark.address(), calls, window, every, busyPoll, spinMicros, backward, out));
    }

    static int run(InetAddress ip, long calls, int window, long every, boolean busyPoll, int spinMicros,
            boolean backward, PrintStream out) throws Exception {
        RpcRdmaOptions o = RpcRdmaOptions.builder().busyPoll(busyPoll).pollSpinMicros(spinMicros)
                .credits(Math.max(32, window)).backwardCredits(backward ? 4 : 0)
                .connectTimeoutMillis(30_000).reconnectAttempts(0).build();
        String mode = busyPoll ? "busy-poll" : spinMicros > 0 ? "spin-" + spinMicros + "us" : "event";
        out.printf(Locale.ROOT, "[soak] %,d forward echo calls of %d B, %d outstanding%s, %s mode%n", calls,
                Throughput.ARGS, window, backward ? ", 2 backward calls beside them" : "", mode);
        out.printf(Locale.ROOT, "%10s %9s %9s %9s %9s %10s %9s %8s %8s %7s%n", "calls", "calls/s", "p50 us", "p99 us",
                "p99.9 us", "max us", "heap MiB", "threads", "native", "failed");
        Recorder rec = new Recorder(3);
        LongAdder failed = new LongAdder();
        AtomicLong done = new AtomicLong();
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        Semaphore free = new Semaphore(window);
        try (RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, Throughput.ECHO, null);
                RpcRdmaClient client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o)) {
            Thread back = null;
            LongAdder backDone = new LongAdder();
            if (backward) {
                client.enableBackchannel(Throughput.ECHO).get(30, TimeUnit.SECONDS);
                Backchannel bc = server.backchannel(client.clientId());
                back = Thread.ofPlatform().daemon().name("soak-backward").start(() -> Throughput.keepFull(2,
                        Long.MAX_VALUE / 4, xid -> bc.call(Throughput.call(xid, 0x40000001)), backDone, failed,
                        firstFailure));
            }
            long stretchStart = System.nanoTime();
            long lastProgress = stretchStart;
            long lastDone = 0;
            Histogram first = null;
            Histogram last = null;
            for (long sent = 0; sent < calls; ) {
                if (!free.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    long now = System.nanoTime();
                    if (done.get() != lastDone) {
                        lastDone = done.get();
                        lastProgress = now;
                    } else if (now - lastProgress > TimeUnit.SECONDS.toNanos(STALL_SECONDS)) {
                        out.printf("[soak] HANG: no call completed for %d s after %,d calls; client %s, stats %s%n",
                                STALL_SECONDS, done.get(), client.connection(), client.connection().stats());
                        return 2;
                    }
                    continue;
                }
                long t0 = System.nanoTime();
                sent++;
                client.call(Throughput.call(Throughput.xid(), 0x20000099)).whenComplete((m, t) -> {
                    if (m != null) {
                        m.release();
                        rec.recordValue(Math.max(1, System.nanoTime() - t0));
                    } else {
                        failed.increment();
                        firstFailure.compareAndSet(null, t);
                    }
                    done.incrementAndGet();
                    free.release();
                });
                if (sent % every == 0 || sent == calls) {
                    if (sent == calls) {
                        free.tryAcquire(window, STALL_SECONDS, TimeUnit.SECONDS); // the last ones in flight
                        free.release(window);
                    }
                    long now = System.nanoTime();
                    Histogram h = rec.getIntervalHistogram();
                    if (first == null) {
                        first = h;
                    }
                    last = h;
                    System.gc();
                    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
                    out.printf(Locale.ROOT, "%10d %9.0f %9.1f %9.1f %9.1f %10.1f %9.1f %8d %8d %7d%n", sent,
                            h.getTotalCount() / ((now - stretchStart) / 1e9), h.getValueAtPercentile(50) / 1e3,
                            h.getValueAtPercentile(99) / 1e3, h.getValueAtPercentile(99.9) / 1e3,
                            h.getMaxValue() / 1e3, heap / 1048576.0, Thread.activeCount(), LiveResources.total(),
                            failed.sum());
                    stretchStart = System.nanoTime();
                }
            }
            if (back != null) {
                back.interrupt();
            }
            out.printf(Locale.ROOT, "[soak] %,d calls completed, %d failed%s; p99 first stretch %.1f us, last %.1f us"
                    + " (ratio %.2f); backward calls %,d%n", done.get(), failed.sum(),
                    firstFailure.get() == null ? "" : " (first: " + firstFailure.get() + ")",
                    first.getValueAtPercentile(99) / 1e3, last.getValueAtPercentile(99) / 1e3,
                    (double) last.getValueAtPercentile(99) / Math.max(1, first.getValueAtPercentile(99)),
                    backDone.sum());
            return failed.sum() == 0 && done.get() == calls ? 0 : 1;
        }
    }

    /** Prints to two streams (the console and the results file). */
    static final class Tee extends PrintStream {
        private final PrintStream second;

        Tee(PrintStream first, PrintStream second) {
            super(first, true);
            this.second = second;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            super.write(b, off, len);
            second.write(b, off, len);
        }

        @Override
        public void flush() {
            super.flush();
            second.flush();
        }
    }
}
