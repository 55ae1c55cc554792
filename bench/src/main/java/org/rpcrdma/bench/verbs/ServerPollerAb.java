package org.rpcrdma.bench.verbs;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.ReplyReader;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.xdr.Xdr;

/**
 * A/B of a busy-poll server's completion threads, interleaved in one JVM so that the host's
 * load, which drifts over minutes, weighs on both alike: segments of blocking NULL calls
 * ({@code callAndRead}, as the goal rounds' {@code mode-busy} row), alternately to a server
 * whose connection has its own poller thread ({@code completionThreads(0)}) and to one on the
 * default completion group, in ABBA order. Each segment connects afresh: a connected busy
 * server's poller spins, so only one pair is connected at a time. Prints each segment's p50
 * and, per ABBA quartet, group / own of the p50s; then the median of those ratios.
 *
 * Before the quartets, one unmeasured segment of each for {@code prewarmMs}: the JIT (C1 in
 * the guest) compiles the call path before anything is compared.
 *
 * <p>usage: {@code ServerPollerAb [quartets] [warmupMs] [measureMs] [prewarmMs]} in the
 * Soft-RoCE guest (the address as {@link SendLatencyBenchmark#address}).
 */
public final class ServerPollerAb {
    private ServerPollerAb() {
    }

    public static void main(String[] args) throws Exception {
        int quartets = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        long warmup = TimeUnit.MILLISECONDS.toNanos(args.length > 1 ? Long.parseLong(args[1]) : 500);
        long measure = TimeUnit.MILLISECONDS.toNanos(args.length > 2 ? Long.parseLong(args[2]) : 1500);
        long prewarm = TimeUnit.MILLISECONDS.toNanos(args.length > 3 ? Long.parseLong(args[3]) : 5000);
        InetAddress ip = SendLatencyBenchmark.address();
        RpcRdmaOptions base = RpcRdmaOptions.builder().busyPoll(true).pollSpinMicros(0)
                .connectTimeoutMillis(30_000).reconnectAttempts(0).build();
        RpcRdmaOptions own = base.toBuilder().completionThreads(0).build();
        System.out.printf("ServerPollerAb: %d ABBA quartets, warm-up %d ms, %d ms measured; group: %d threads%n",
                quartets, TimeUnit.NANOSECONDS.toMillis(warmup), TimeUnit.NANOSECONDS.toMillis(measure),
                base.completionThreads());
        segment(ip, own, "own (pre-warm)", prewarm, measure);
        segment(ip, base, "group (pre-warm)", prewarm, measure);
        List<Double> ratios = new ArrayList<>();
        for (int q = 0; q < quartets; q++) {
            double a1 = segment(ip, own, "own", warmup, measure);
            double b1 = segment(ip, base, "group", warmup, measure);
            double b2 = segment(ip, base, "group", warmup, measure);
            double a2 = segment(ip, own, "own", warmup, measure);
            double r = (b1 + b2) / (a1 + a2);
            ratios.add(r);
            System.out.printf(Locale.ROOT, "quartet %d: group/own p50 %.3f%n", q, r);
        }
        double[] s = ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        System.out.printf(Locale.ROOT, "median group/own p50 over %d quartets: %.3f (all: %s)%n", s.length,
                s[s.length / 2], Arrays.toString(s));
    }

    /** Connects a client to a new server with {@code serverOptions}, calls for warm-up, times calls: the p50 in µs. */
    private static double segment(InetAddress ip, RpcRdmaOptions serverOptions, String label, long warmup, long measure)
            throws Exception {
        MemorySegment call = RpcPoints.callMessage(LatencyCurve.PROC_NULL, 0);
        CallOptions o = CallOptions.timeout(10, TimeUnit.SECONDS).withMaxReplyBytes(LatencyCurve.REPLY_HEADER);
        ReplyReader<Boolean> check = r -> r.byteSize() == LatencyCurve.REPLY_HEADER;
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        try (RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), serverOptions,
                RpcPoints.handler(0), null);
                // a client's connection has its own CQ and poller whatever completionThreads says
                RpcRdmaClient client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), serverOptions)) {
            int xid = 0;
            long start = System.nanoTime();
            long end = start + warmup + measure;
            for (long now = start; now - end < 0; ) {
                Xdr.putInt(call, 0, ++xid);
                if (!client.connection().callAndRead(call, o, check)) {
                    throw new IllegalStateException("reply not of " + LatencyCurve.REPLY_HEADER + " bytes");
                }
                long after = System.nanoTime();
                if (after - start >= warmup) {
                    h.recordValue(after - now);
                }
                now = after;
            }
        }
        double p50 = h.getValueAtPercentile(50) / 1000.0;
        System.out.printf(Locale.ROOT, "  %-16s p50 %8.1f  p99 %9.1f us  (%d calls)%n", label, p50,
                h.getValueAtPercentile(99) / 1000.0, h.getTotalCount());
        return p50;
    }
}
