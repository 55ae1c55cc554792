package org.rpcrdma.bench.verbs;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.transport.verbs.LiveResources;

/**
 * The soak over the impaired link ({@link LossyLink}): for {@code --minutes}, on a link with
 * {@code --netem} (default 1 % loss), forward calls of every kind ({@link LossyCalls}:
 * inline, long call, Reply chunk, DDP; {@code --window} in flight) and backward calls
 * (inline and long, 2 in flight) on one connection, with an outage of {@code
 * --outage-seconds} (100 % loss) in every {@code --outage-every}-th minute. Prints a line a
 * minute (calls answered, rxe's repairs, reconnects, and the minute's XIDs: lost, run twice
 * on one connection, resent after a reconnect and run once on each) and the totals. Every
 * call is resent after a reconnect with its XID, so an outage delays calls, never fails them.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar org.rpcrdma.bench.verbs.LossySoak [--minutes M] [--netem "loss 1%"]
 *      [--outage-every N] [--outage-seconds S] [--window W] [--out DIR]
 * </pre>
 * Exit status 0 when no call was lost, unanswered, failed, answered wrongly or executed twice on one connection.
 */
public final class LossySoak {
    private LossySoak() {}

    public static void main(String[] args) throws Exception {
        int minutes = 60;
        String netem = "loss 1%";
        int outageEvery = 5;
        int outageSeconds = 2;
        int window = 4;
        Path dir = Path.of("lossy-soak-out");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--minutes" -> minutes = Integer.parseInt(args[++i]);
                case "--netem" -> netem = args[++i];
                case "--outage-every" -> outageEvery = Integer.parseInt(args[++i]);
                case "--outage-seconds" -> outageSeconds = Integer.parseInt(args[++i]);
                case "--window" -> window = Integer.parseInt(args[++i]);
                case "--out" -> dir = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        Files.createDirectories(dir);
        try (PrintStream file = new PrintStream(Files.newOutputStream(dir.resolve("soak.txt")), true)) {
            Soak.Tee out = new Soak.Tee(System.out, file);
            System.exit(run(LossyLink.fromEnvironment(), minutes, netem, outageEvery, outageSeconds, window, out)
                    ? 0 : 1);
        }
    }

    /** Totals over the minutes. */
    private static final class Totals {
        long forward;
        long backward;
        long lost;
        long unanswered;
        long duplicated;
        long retried;
        long stray;
        long failed;
        long bad;
        String firstProblem;

        boolean clean() {
            return lost == 0 && unanswered == 0 && duplicated == 0 && stray == 0 && failed == 0 && bad == 0;
        }
    }

    static boolean run(LossyLink link, int minutes, String netem, int outageEvery, int outageSeconds, int window,
            PrintStream out) throws Exception {
        out.printf(Locale.ROOT, "[lossy-soak] %d min on %s <-> %s (%s), netem '%s', a %d s outage every %d minutes"
                + " minute; forward calls of every kind (inline 64 B, %d B long call, %d B Reply chunk, %d B DDP),"
                + " %d in flight; backward inline and long calls, 2 in flight; event mode%n", minutes, link.clientDev(),
                link.serverDev(), link.serverIp().getHostAddress(), netem, outageSeconds, outageEvery, LossyCalls.SIZE,
                LossyCalls.SIZE, LossyCalls.SIZE, window);
        out.printf(Locale.ROOT, "%4s %7s %9s %9s %6s %6s %6s %5s %5s %5s %5s %6s %7s %9s %8s %7s%n", "min", "outage",
                "fwd", "back", "calls/s", "retry", "seqNAK", "recon", "lost", "unans", "dup", "resent", "failed",
                "heap MiB", "threads", "native");
        XidLedger serverLedger = new XidLedger();
        XidLedger clientLedger = new XidLedger();
        CallOptions options = LossyCalls.options(300);
        RpcRdmaOptions o = LossyBench.rpcOptions();
        Totals t = new Totals();
        link.set("");
        try (RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(link.serverIp(), 0), o,
                LossyCalls.handler(serverLedger), null);
                RpcRdmaClient client = RpcRdmaClient.connect(new InetSocketAddress(link.serverIp(), server.port()), o)) {
            client.enableBackchannel(LossyCalls.handler(clientLedger)).get(60, TimeUnit.SECONDS);
            link.set(netem);
            for (int m = 1; m <= minutes; m++) {
                int base = m << 20;
                int backBase = 0x40000000 | base;
                boolean outage = outageEvery > 0 && m % outageEvery == 0;
                Map<String, Long> c0 = link.counters();
                long reconnects = client.reconnects();
                CompletableFuture<Void> cut = outage ? CompletableFuture.runAsync(() -> {
                    try {
                        Thread.sleep(20_000); // 20 s into the minute: traffic in flight when the link goes
                        link.outage(outageSeconds);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }) : CompletableFuture.completedFuture(null);
                CallPump back = new CallPump(List.of(server.backchannel(client.clientId())), 2, backBase,
                        LossyCalls.of(options, LossyCalls.Kind.INLINE, LossyCalls.Kind.LONG_CALL));
                CompletableFuture<CallPump.Result> backResult = CompletableFuture.supplyAsync(() -> {
                    try {
                        return back.run(TimeUnit.SECONDS.toNanos(60), TimeUnit.SECONDS.toNanos(360));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                CallPump.Result fwd = new CallPump(List.of(client), window, base,
                        LossyCalls.of(options, LossyCalls.Kind.values()))
                        .run(TimeUnit.SECONDS.toNanos(60), TimeUnit.SECONDS.toNanos(360));
                CallPump.Result bwd = backResult.get(420, TimeUnit.SECONDS);
                cut.get(300, TimeUnit.SECONDS);
                Map<String, Long> rep = LossyLink.repairs(c0, link.counters());
                XidLedger.Check f = serverLedger.check(base, fwd.sent());
                XidLedger.Check b = clientLedger.check(backBase, bwd.sent());
                serverLedger.clear();
                clientLedger.clear();
                t.forward += fwd.answered();
                t.backward += bwd.answered();
                t.lost += f.lost() + b.lost();
                t.unanswered += fwd.unanswered() + bwd.unanswered();
                t.duplicated += f.duplicated() + b.duplicated();
                t.retried += f.retried() + b.retried();
                t.stray += f.stray() + b.stray();
                t.failed += fwd.failed() + bwd.failed();
                t.bad += fwd.bad() + bwd.bad();
                for (String p : new String[] {fwd.firstProblem(), bwd.firstProblem()}) {
                    if (t.firstProblem == null && p != null) {
                        t.firstProblem = p;
                    }
                }
                System.gc();
                out.printf(Locale.ROOT, "%4d %7s %9d %9d %6.0f %6d %6d %5d %5d %5d %5d %6d %7d %9.1f %8d %7d%n", m,
                        outage ? outageSeconds + " s" : "-", fwd.answered(), bwd.answered(),
                        (fwd.answered() + bwd.answered()) / fwd.seconds(), rep.get("completer_retry_err"),
                        rep.get("rcvd_seq_err"), client.reconnects() - reconnects, f.lost() + b.lost(),
                        fwd.unanswered() + bwd.unanswered(), f.duplicated() + b.duplicated(),
                        f.retried() + b.retried(), fwd.failed() + bwd.failed() + fwd.bad() + bwd.bad(),
                        ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1048576.0,
                        Thread.activeCount(), LiveResources.total());
                if (!fwd.unansweredXids().isEmpty() || !bwd.unansweredXids().isEmpty()) {
                    // what a call left hanging past its own deadline looks like from outside
                    Connection c = client.connection();
                    out.printf(Locale.ROOT, "     minute %d: neither answered nor failed by the end of the drain (past their %d s timeout): forward %s (%s),"
                            + " backward %s (%s); client connection open %b, outstanding %d, peer's %d; backward calls"
                            + " waiting for the client %d%n", m, 300, hex(fwd.unansweredXids()),
                            kinds(fwd.unansweredXids(), LossyCalls.Kind.values()), hex(bwd.unansweredXids()),
                            kinds(bwd.unansweredXids(), LossyCalls.Kind.INLINE, LossyCalls.Kind.LONG_CALL), c.isOpen(),
                            c.outstandingCalls(), c.peerOutstandingCalls(),
                            server.backchannel(client.clientId()).waitingCalls());
                }
                if (fwd.failed() + bwd.failed() > 0) {
                    break; // CallPump stops calling on a caller whose call failed: the rest would measure nothing
                }
            }
        } finally {
            link.set("");
        }
        out.printf(Locale.ROOT, "[lossy-soak] %,d forward and %,d backward calls answered; lost %d, unanswered %d,"
                + " duplicated %d, stray %d, failed %d, wrong %d; resent after a reconnect and run once per connection"
                + " %d%s: %s%n", t.forward, t.backward, t.lost, t.unanswered, t.duplicated, t.stray, t.failed, t.bad,
                t.retried, t.firstProblem == null ? "" : " (first problem: " + t.firstProblem + ")",
                t.clean() ? "PASSED" : "FAILED");
        return t.clean();
    }

    private static String hex(List<Integer> xids) {
        StringBuilder b = new StringBuilder();
        xids.forEach(x -> b.append(b.isEmpty() ? "" : " ").append("0x").append(Integer.toHexString(x)));
        return b.isEmpty() ? "none" : b.toString();
    }

    private static String kinds(List<Integer> xids, LossyCalls.Kind... kinds) {
        return xids.stream().map(x -> LossyCalls.kindOf(x, kinds).toString()).toList().toString();
    }
}
