package org.rpcrdma.bench.verbs;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.InMemoryPair;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.Xdr;

/**
 * A JIT warm-up before anything is measured ({@code --prewarm-ms} of {@link LatencyCurve}
 * and {@link Throughput}), for a C2-only JVM in the Soft-RoCE guest; nothing is recorded.
 *
 * <p>First blocking RPC calls (NULL and echo in turn, at each given size that is inline
 * under the threshold, and at the first one past it) through an {@link InMemoryPair}, the transport with no device, on the
 * calling thread; then the one-thread raw Send/Recv ping-pong on the device; each for the
 * pre-warm time; then (in {@link LatencyCurve}) calls over the device in the run's own mode
 * until the JIT is quiet. Why: with C2 only, in the two-vCPU guest, the compiler thread competed for
 * seconds with the two threads a busy-poll run spins, and the per-call methods ran
 * interpreted until they had been called 10,000 times (NULL p50 0.7-13 ms after a 3-30 s
 * warm-up, bench/profiles/ab-20261124). Over the in-memory pair nothing spins and a call
 * costs no device round trip (up to 22,000 calls/s in the guest under C1, against 0-3,000
 * calls in 10 s for an RPC warm-up on completion events, tried first), so C2 compiles the call path
 * every link shares (header coding, credits, XIDs, the receive pool) with the other vCPU
 * free; the one-thread ping-pong compiles the verbs bindings with one spinner, not two. What
 * is verbs-only in the call path (the link, the completion driver) compiles in the last
 * phase, which goes on until the JIT is nearly idle.
 */
final class JitPrewarm {
    private JitPrewarm() {}

    /**
     * NULL and echo calls in turn at each of the given sizes that is inline under a threshold
     * (0 B if none is), at the smallest size past it if there is one (a long call pulled by
     * RDMA Read), and at the smallest whose echo does not come back inline (its reply
     * written into a Reply chunk, which a long call's echo needs only past
     * {@link #lastInlineReply}): every chunk path compiles too. Without them the first
     * chunked points of a C2-only run were measured interpreted: p50 5.5 ms at 957 B against
     * 2.2 ms at 4,029 B under a 1 KiB threshold; and, with the Reply chunk left out, every
     * Reply-chunk echo at 1 KiB at least 1.1 ms slower than the long call beside it.
     */
    static final class Calls {
        final MemorySegment[] messages;
        final int[] replyBytes;

        Calls(int[] sizes, int threshold) {
            int[] inline = Arrays.stream(sizes).filter(s -> s <= LatencyCurve.lastInline(threshold)).toArray();
            if (inline.length == 0) {
                inline = new int[] {0};
            }
            // the first long call, and the first echo whose reply needs a Reply chunk (often
            // the same size): each chunk path a point takes has run before the points
            int[] chunked = java.util.stream.IntStream.concat(
                    Arrays.stream(sizes).filter(s -> s > LatencyCurve.lastInline(threshold)).limit(1),
                    Arrays.stream(sizes).filter(s -> s > lastInlineReply(threshold)).limit(1)).distinct().toArray();
            int[] each = java.util.stream.IntStream.concat(Arrays.stream(inline), Arrays.stream(chunked)).toArray();
            messages = new MemorySegment[2 * each.length];
            replyBytes = new int[messages.length];
            for (int i = 0; i < messages.length; i++) {
                int proc = i % 2 == 0 ? LatencyCurve.PROC_NULL : LatencyCurve.PROC_ECHO;
                messages[i] = RpcPoints.callMessage(proc, each[i / 2]);
                replyBytes[i] = LatencyCurve.REPLY_HEADER + (proc == LatencyCurve.PROC_ECHO ? each[i / 2] : 0);
            }
        }

        /** The call to make as the n-th. */
        int index(long n) {
            return (int) (n % messages.length);
        }

        /** The largest argument size among them. */
        int largest() {
            return (int) messages[messages.length - 1].byteSize() - 40;
        }
    }

    /** Largest echo argument size whose reply fits inline under threshold {@code t} (RDMA_MSG header and reply header). */
    static int lastInlineReply(int t) {
        return t - SendLatencyBenchmark.HEADER - LatencyCurve.REPLY_HEADER;
    }

    /** One call over the device in the measured run's own mode (busy-poll, events or mixed). */
    interface DeviceCall {
        void call(int index) throws Exception;
    }

    /** The window in which the JIT must have compiled for at most {@link #QUIET_MILLIS}, to count as quiet. */
    static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(3);
    /**
     * Compile time allowed in a quiet window: a C2 JVM in the guest goes on compiling a
     * small method now and then for minutes (the pre-warm reached no 3 s without a compile in
     * 5 of 8 JVMs), which does not matter; the call path's compiles came several a second.
     */
    static final long QUIET_MILLIS = 100;

    /**
     * The JIT's work so far in ms: the compiler threads' CPU time where {@code /proc} shows
     * it, else the compile time the JVM reports. The JVM counts a compile only once it
     * finished, and under TCG one C2 compile of the chunk path ran for seconds: windows of
     * 3 s with no compile finished were taken for quiet while a compiler thread held one of
     * the guest's two vCPUs at 65-70 % through the chunk rows measured next.
     */
    static long jitMillis() {
        long nanos = 0;
        boolean seen = false;
        for (var e : new SoftirqStats().sample().threads().entrySet()) {
            if (e.getKey().startsWith("C2 CompilerThre") || e.getKey().startsWith("C1 CompilerThre")) {
                nanos += e.getValue()[0];
                seen = true;
            }
        }
        return seen ? nanos / 1_000_000 : compileMillis();
    }

    /**
     * The first two phases (in memory, then the raw ping-pong), each for {@code nanos};
     * returns a line saying what they did. Failures are reported in it, not thrown.
     */
    static String run(InetAddress ip, int[] sizes, int threshold, long nanos) throws InterruptedException {
        long t0 = System.nanoTime();
        Calls c = new Calls(sizes, threshold);
        String failures = "";
        long calls = 0;
        try (InMemoryPair p = InMemoryPair.open(RpcRdmaOptions.builder().inlineThreshold(threshold).build(),
                RpcPoints.handler(c.largest()))) {
            // timed from here: opening the pair took over 5 s in an interpreted C2-only JVM in
            // the guest, and the phase then made no call at all (2026-11-24)
            CallOptions[] options = new CallOptions[c.replyBytes.length];
            for (int k = 0; k < options.length; k++) {
                options[k] = CallOptions.timeout(10, TimeUnit.SECONDS).withMaxReplyBytes(c.replyBytes[k]);
            }
            t0 = System.nanoTime();
            for (long end = t0 + nanos; System.nanoTime() < end; calls++) {
                int k = c.index(calls);
                Xdr.putInt(c.messages[k], 0, (int) calls + 1);
                p.client().callAndRead(c.messages[k], options[k], r -> Boolean.TRUE);
            }
        } catch (RuntimeException e) {
            failures += "; RPC calls failed: " + e;
        }
        long t1 = System.nanoTime();
        int size = Arrays.stream(sizes).filter(s -> s > 0).findFirst().orElse(1);
        long trips = 0;
        try (SendLatencyBenchmark.Pair pair = new SendLatencyBenchmark.Pair(ip, size)) {
            pair.postServerRecv();
            pair.postClientRecv();
            // timed from here: setting the QPs up took up to 5 s in the guest
            for (long end = System.nanoTime() + nanos; System.nanoTime() < end; trips++) {
                VerbsPingPong.roundTrip(pair, size, false);
            }
        } catch (RuntimeException e) {
            failures += "; raw ping-pong failed: " + e;
        }
        return String.format(Locale.ROOT, "pre-warm: %d RPC calls in memory in %.1f s, %d raw round trips in %.1f s%s",
                calls, (t1 - t0) / 1e9, trips, (System.nanoTime() - t1) / 1e9, failures);
    }

    /** The window of {@link #settle}: the JIT counts as settled after one with at most its share of {@link #QUIET_MILLIS}. */
    private static final long SETTLE_WINDOW_MILLIS = 500;

    /**
     * Waits, making no calls, until the JIT worked for at most {@link #QUIET_MILLIS} per
     * {@link #QUIET_NANOS} over a window of {@link #SETTLE_WINDOW_MILLIS}, at most
     * {@code capNanos}; the time waited in ms. For just before a measurement: what ran since
     * the pre-warm (perftest's output parsed, the points printed) makes C2 compile JDK code
     * (regex, Formatter, process handling: 138 compiles after a quiet pre-warm), and under TCG
     * it compiled through the first two 4 KiB chunk rows (C2 56-76 % of their time).
     */
    static long settle(long capNanos) throws InterruptedException {
        long t0 = System.nanoTime();
        long allowed = QUIET_MILLIS * SETTLE_WINDOW_MILLIS * 1_000_000 / QUIET_NANOS;
        while (System.nanoTime() - t0 < capNanos) {
            long before = jitMillis();
            Thread.sleep(SETTLE_WINDOW_MILLIS);
            if (jitMillis() - before <= allowed) {
                break;
            }
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }

    /**
     * The last phase: {@code device} calls (over the device, in the run's own mode) until the
     * JIT has worked for at most {@link #QUIET_MILLIS} in {@link #QUIET_NANOS} ({@link #jitMillis}), at most
     * {@code capNanos}: the compile queue drained (a compile still running while two threads
     * spin made the measured calls 30-100 times slower in the guest). Returns a line saying
     * what it did; a failure is in it.
     */
    static String untilQuiet(long capNanos, DeviceCall device) {
        long t0 = System.nanoTime();
        long calls = 0;
        String how;
        try {
            long windowStart = t0;
            long compiledBefore = jitMillis();
            boolean quiet = false;
            for (long now = t0; !quiet && now - t0 < capNanos; calls++) {
                device.call((int) calls);
                if ((calls & 63) == 0) {
                    now = System.nanoTime();
                    if (now - windowStart >= QUIET_NANOS) {
                        long c = jitMillis();
                        quiet = c - compiledBefore <= QUIET_MILLIS;
                        windowStart = now;
                        compiledBefore = c;
                    }
                }
            }
            how = quiet ? "then the JIT worked for at most " + QUIET_MILLIS + " ms in " + QUIET_NANOS / 1_000_000_000
                    + " s" : "the JIT still compiling at the cap";
        } catch (Exception e) {
            how = "failed: " + e;
        }
        return String.format(Locale.ROOT, "pre-warm: %d calls over the device in %.1f s, %s", calls,
                (System.nanoTime() - t0) / 1e9, how);
    }

    /** Milliseconds this JVM's JIT has spent compiling so far (grows when a compile finishes). */
    private static long compileMillis() {
        return java.lang.management.ManagementFactory.getCompilationMXBean().getTotalCompilationTime();
    }
}
