package org.rpcrdma.bench.verbs;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.rpcrdma.transport.Backchannel;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.xdr.Xdr;

/**
 * Calls per second through the transport with 1, 8 and 64 calls outstanding, forward only
 * and with backward calls flowing at the same time, on one connection with a
 * 4 KiB inline threshold and 64-byte arguments. The client keeps the window full with
 * asynchronous calls; with backward traffic, the server keeps 4 backward calls in flight
 * through the client's {@link Backchannel}. Credits are 64 forward and 8 backward, so the
 * window of 64 is the credit limit: throughput should grow until it.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar org.rpcrdma.bench.verbs.Throughput [--event | --spin US] [--seconds S]
 *     [--prewarm-ms N] [--out DIR]
 * </pre>
 * {@code --prewarm-ms}: a JIT warm-up first, for a C2 JVM in the guest ({@link JitPrewarm}'s
 * first two phases). Not enough: under C2 with it, 287-515 calls/s against C1's 559-4,957
 * (bench/profiles/ab-20261124/modes.sh), so scripts/bench runs this C1-only.
 */
public final class Throughput {
    static final int[] WINDOWS = {1, 8, 64};
    static final int ARGS = 64;

    record Row(String mode, int window, boolean backward, double callsPerSecond, double backwardPerSecond,
            long failed, double bytesPerCall) {}

    /** Heap bytes allocated so far by all threads of this JVM (both endpoints live here). */
    static long allocated() {
        return ((com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean())
                .getTotalThreadAllocatedBytes();
    }

    static final CallHandler ECHO = c -> {
        MemorySegment m = c.message().bytes();
        int args = (int) m.byteSize() - 40;
        MemorySegment r = MemorySegment.ofArray(new byte[LatencyCurve.REPLY_HEADER + args]);
        Xdr.putInt(r, 0, c.xid());
        Xdr.putInt(r, 4, 1); // REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS (zeros)
        MemorySegment.copy(m, 40, r, LatencyCurve.REPLY_HEADER, args);
        c.reply(r);
    };

    private Throughput() {}

    static MemorySegment call(int xid, int prog) {
        MemorySegment call = MemorySegment.ofArray(new byte[40 + ARGS]);
        Xdr.putInt(call, 0, xid);
        Xdr.putInt(call, 4, 0); // CALL
        Xdr.putInt(call, 8, 2); // RPC version 2
        Xdr.putInt(call, 12, prog);
        Xdr.putInt(call, 16, 1);
        Xdr.putInt(call, 20, LatencyCurve.PROC_ECHO);
        return call;
    }

    public static void main(String[] args) throws Exception {
        boolean busyPoll = true;
        int spinMicros = 0;
        long seconds = 2;
        Path dir = null;
        long prewarmMs = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--event" -> busyPoll = false;
                case "--busy" -> busyPoll = true;
                case "--spin" -> { // adaptive: event mode, the poller spins this long after a completion
                    busyPoll = false;
                    spinMicros = Integer.parseInt(args[++i]);
                }
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--out" -> dir = Path.of(args[++i]);
                case "--prewarm-ms" -> prewarmMs = Long.parseLong(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        InetAddress ip = SendLatencyBenchmark.address();
        String mode = busyPoll ? "busy-poll" : spinMicros > 0 ? "spin-" + spinMicros + "us" : "event";
        if (prewarmMs > 0) {
            System.out.println("[throughput] " + JitPrewarm.run(ip, new int[] {ARGS}, RpcRdmaOptions.DEFAULT_INLINE,
                    TimeUnit.MILLISECONDS.toNanos(prewarmMs)));
        }
        List<Row> rows = new ArrayList<>();
        for (boolean backward : new boolean[] {false, true}) {
            for (int window : WINDOWS) {
                Row r = measure(ip, busyPoll, spinMicros, mode, window, backward, TimeUnit.SECONDS.toNanos(seconds));
                rows.add(r);
                System.out.printf(Locale.ROOT, "[throughput] %s, %d outstanding%s: %.0f calls/s%s%n", mode, window,
                        backward ? " + backward traffic" : "", r.callsPerSecond(),
                        backward ? String.format(Locale.ROOT, " (backward %.0f calls/s)", r.backwardPerSecond()) : "");
            }
        }
        print(rows, System.out);
        if (dir != null) {
            Files.createDirectories(dir);
            try (PrintStream p = new PrintStream(Files.newOutputStream(dir.resolve("throughput-" + mode + ".txt")))) {
                print(rows, p);
            }
        }
    }

    static void print(List<Row> rows, PrintStream out) {
        out.printf(Locale.ROOT, "%-12s %8s %9s %14s %14s %7s %12s%n", "mode", "window", "backward", "calls/s",
                "backward/s", "failed", "bytes/call");
        for (Row r : rows) {
            out.printf(Locale.ROOT, "%-12s %8d %9s %14.0f %14.0f %7d %12.0f%n", r.mode(), r.window(),
                    r.backward() ? "yes" : "no", r.callsPerSecond(), r.backwardPerSecond(), r.failed(), r.bytesPerCall());
        }
        out.println("(forward echo calls of " + ARGS + " B arguments, 4 KiB inline, credits 64 forward / 8 backward;"
                + " bytes/call: heap allocated by the whole JVM, both endpoints, per completed call)");
    }

    static Row measure(InetAddress ip, boolean busyPoll, int spinMicros, String mode, int window, boolean backward,
            long nanos) throws Exception {
        RpcRdmaOptions o = RpcRdmaOptions.builder().busyPoll(busyPoll).pollSpinMicros(spinMicros)
                .credits(64).backwardCredits(8)
                .connectTimeoutMillis(30_000).reconnectAttempts(0).build();
        try (RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, ECHO, null);
                RpcRdmaClient client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o)) {
            client.enableBackchannel(ECHO).get(30, TimeUnit.SECONDS);
            LongAdder forward = new LongAdder();
            LongAdder back = new LongAdder();
            LongAdder failed = new LongAdder();
            AtomicReference<Throwable> firstFailure = new AtomicReference<>();
            Thread backwardCaller = null;
            if (backward) {
                Backchannel bc = server.backchannel(client.clientId());
                backwardCaller = Thread.ofPlatform().daemon().name("throughput-backward").start(() ->
                        keepFull(4, nanos * 2, xid -> bc.call(call(xid, 0x40000001)), back, failed, firstFailure));
            }
            // warm-up for half the measured time, then count
            keepFull(window, nanos / 2, xid -> client.call(call(xid, 0x20000099)), new LongAdder(), failed,
                    firstFailure);
            long before = back.sum();
            long bytes0 = allocated();
            long start = System.nanoTime();
            keepFull(window, nanos, xid -> client.call(call(xid, 0x20000099)), forward, failed, firstFailure);
            long stop = System.nanoTime();
            long bytes = allocated() - bytes0;
            long backwardDone = back.sum() - before;
            if (backwardCaller != null) {
                backwardCaller.join(TimeUnit.NANOSECONDS.toMillis(nanos) * 2 + 30_000);
            }
            if (firstFailure.get() != null) {
                System.out.println("[throughput] first failure: " + firstFailure.get());
            }
            double s = (stop - start) / 1e9;
            long calls = forward.sum() + backwardDone;
            return new Row(mode, window, backward, forward.sum() / s, backwardDone / s,
                    failed.sum(), calls == 0 ? 0 : (double) bytes / calls);
        }
    }

    interface Caller {
        CompletableFuture<ReceivedMessage> call(int xid);
    }

    private static int nextXid = 1;

    static synchronized int xid() {
        return nextXid++;
    }

    /** Keeps {@code window} calls in flight for {@code nanos}, then waits for the last ones. */
    static void keepFull(int window, long nanos, Caller caller, LongAdder done, LongAdder failed,
            AtomicReference<Throwable> firstFailure) {
        Semaphore free = new Semaphore(window);
        long end = System.nanoTime() + nanos;
        try {
            while (System.nanoTime() < end) {
                if (!free.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                caller.call(xid()).whenComplete((m, t) -> {
                    if (m != null) {
                        m.release();
                        done.increment();
                    } else {
                        failed.increment();
                        firstFailure.compareAndSet(null, t);
                    }
                    free.release();
                });
            }
            free.tryAcquire(window, 30, TimeUnit.SECONDS); // the last calls in flight
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
