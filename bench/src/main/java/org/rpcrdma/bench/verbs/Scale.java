package org.rpcrdma.bench.verbs;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringJoiner;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * Many clients, one server: for each N of {@code --conns} (default 1, 10, 100, 1000) this
 * JVM connects clients up to N to a server in a JVM of its own ({@link ScaleServer}, started
 * here, queried over its stdin/stdout), then for {@code --seconds} every client keeps
 * {@code --window} calls in flight (every {@code --long-every}-th a long call) while the
 * server keeps 2 backward calls in flight to a random tenth of them (RFC 8167). Afterwards
 * every call must have been answered with its own bytes and executed exactly once (the
 * server counts executions per XID for the forward calls, this JVM for the backward ones).
 * Clients connect from {@code --connect-threads} threads at once (default 8: a connect is
 * mostly waiting for rdma_cm and the server's accept), with a progress line every 50.
 * Per N: connect time, the server JVM's threads, registered receive memory, verbs objects
 * and native memory, heap after GC, calls/s. A connection refused (a device limit, memory)
 * ends that N's connecting and is reported in its row; the bench goes on.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar org.rpcrdma.bench.verbs.Scale [--conns 1,10,100,1000] [--seconds S]
 *      [--window W] [--shared N] [--long-every K] [--warmup S] [--connect-threads T] [--own-threads] [--out DIR]
 * </pre>
 * All clients live in this one JVM (no JVM starts in the connect times) and share its
 * client threads ({@code shareClientThreads}: one completion group of 2 threads and one
 * rdma_cm thread): with a poller and an rdma_cm thread of their own ({@code --own-threads})
 * 1,000 clients were 2,000 threads, and the JVM's safepoints and GC grew with them. Exit
 * status 0 when every call was answered exactly once, 1 otherwise.
 */
public final class Scale {
    /** A progress line every this many connections. */
    private static final int PROGRESS_EVERY = 50;
    /** An answer slower than this gets a line of the guest's busiest threads, and again every this long. */
    private static final int SLOW_ANSWER_SECONDS = 60;
    /** How long the server JVM may take for a snapshot. */
    private static final int SNAPSHOT_SECONDS = 600;
    /** The clients' completion group with shared threads: one thread per vCPU of the guest. */
    private static final int CLIENT_GROUP_THREADS = 2;

    private Scale() {}

    public static void main(String[] args) throws Exception {
        int[] conns = {1, 10, 100, 1000};
        int seconds = 10;
        int window = 2;
        int shared = 4096;
        int longEvery = 32;
        int warmup = 10;
        int connectThreads = 8;
        boolean ownThreads = false;
        Path dir = Path.of("scale-out");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--conns" -> conns = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--window" -> window = Integer.parseInt(args[++i]);
                case "--shared" -> shared = Integer.parseInt(args[++i]);
                case "--long-every" -> longEvery = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--connect-threads" -> connectThreads = Integer.parseInt(args[++i]);
                case "--own-threads" -> ownThreads = true;
                case "--out" -> dir = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        InetAddress ip = SendLatencyBenchmark.address();
        String setup = String.format(java.util.Locale.ROOT, "%d s of calls per N, %d in flight per client (%d B, every"
                + " %d-th a %d B long call), 2 backward calls in flight to a random tenth of the clients; server:"
                + " shared receive queue of %d x 4 KiB, event mode; clients: %s", seconds, window, CallPump.SMALL_ARGS,
                longEvery, CallPump.LONG_ARGS, shared, ownThreads ? "a poller and an rdma_cm thread each"
                        : "their JVM's shared threads (" + CLIENT_GROUP_THREADS + " completion threads, 1 rdma_cm)");
        System.out.println("[scale] " + setup);
        List<ScaleReport.Row> rows = new ArrayList<>();
        try (ServerProcess server = ServerProcess.start(shared)) {
            Map<String, String> hello = server.next(180);
            InetSocketAddress addr = new InetSocketAddress(ip, Integer.parseInt(hello.get("port")));
            XidLedger backLedger = new XidLedger();
            CallHandler back = c -> {
                backLedger.executed(c.xid());
                c.reply(ScaleCalls.reply(c.message().bytes()));
            };
            RpcRdmaOptions o = RpcRdmaOptions.builder().credits(4).backwardCredits(2).chunkMemoryBytes(0)
                    .connectTimeoutMillis(120_000).callTimeoutMillis(300_000).reconnectAttempts(0)
                    .shareClientThreads(!ownThreads).completionThreads(CLIENT_GROUP_THREADS).build();
            setup += warmUp(server, addr, o, back, warmup, window, longEvery);
            backLedger.clear();
            List<RpcRdmaClient> clients = new ArrayList<>();
            try {
                int phase = 0;
                for (int n : conns) {
                    phase++;
                    List<Double> connectMs = new ArrayList<>();
                    String stopped = connectUpTo(clients, n, addr, o, back, connectThreads, connectMs);
                    try {
                        rows.add(phase(server, clients, backLedger, n, phase, seconds, window, longEvery, connectMs,
                                stopped));
                    } catch (IllegalStateException e) { // the server JVM died or hangs: report what we have
                        rows.add(ScaleReport.Row.failed(n, clients.size(), connectMs, e.getMessage()));
                        System.out.println("[scale] " + rows.getLast().line());
                        break;
                    }
                    System.out.println("[scale] " + rows.getLast().line());
                    ScaleReport.write(dir, setup, rows); // so far: a run cut short by the guest's timeout keeps its rows
                }
            } finally {
                closeAll(clients, connectThreads);
            }
            server.command("quit");
        }
        ScaleReport.write(dir, setup, rows);
        System.out.print(ScaleReport.table(setup, rows));
        System.exit(rows.stream().allMatch(ScaleReport.Row::exactlyOnce) ? 0 : 1);
    }

    /**
     * Connects clients until there are {@code n}, {@code threads} at a time, each with its
     * backchannel enabled; prints progress every {@value #PROGRESS_EVERY}. Returns why it
     * stopped short ("" when it did not): the first connection refused ends the connecting.
     */
    static String connectUpTo(List<RpcRdmaClient> clients, int n, InetSocketAddress addr, RpcRdmaOptions o,
            CallHandler back, int threads, List<Double> connectMs) throws InterruptedException {
        int want = n - clients.size();
        if (want <= 0) {
            return "";
        }
        AtomicReference<String> stopped = new AtomicReference<>("");
        AtomicInteger started = new AtomicInteger();
        long t0 = System.nanoTime();
        long[] lastAt = {t0};
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < Math.min(threads, want); t++) {
            workers.add(Thread.ofPlatform().name("scale-connect-" + t).start(() -> {
                while (stopped.get().isEmpty() && started.getAndIncrement() < want) {
                    long s = System.nanoTime();
                    RpcRdmaClient c = null;
                    try {
                        c = RpcRdmaClient.connect(addr, o);
                        double ms = (System.nanoTime() - s) / 1e6;
                        c.enableBackchannel(back).get(120, TimeUnit.SECONDS);
                        synchronized (clients) {
                            clients.add(c);
                            connectMs.add(ms);
                            if (clients.size() % PROGRESS_EVERY == 0 || clients.size() == n) {
                                long now = System.nanoTime();
                                List<Double> last = connectMs.subList(Math.max(0, connectMs.size() - PROGRESS_EVERY),
                                        connectMs.size());
                                System.out.printf(java.util.Locale.ROOT, "[scale] connected %d of %d: %.1f s so far,"
                                        + " the last %d in %.1f s (each p50 %.0f ms, max %.0f ms), %d threads here%n",
                                        clients.size(), n, (now - t0) / 1e9, last.size(), (now - lastAt[0]) / 1e9,
                                        ScaleReport.percentile(last, 50), ScaleReport.percentile(last, 100),
                                        Thread.activeCount());
                                lastAt[0] = now;
                            }
                        }
                    } catch (Exception | OutOfMemoryError e) {
                        if (c != null) {
                            c.close();
                        }
                        stopped.compareAndSet("", "connection " + (clients.size() + 1) + " refused: " + e);
                    }
                }
            }));
        }
        for (Thread w : workers) {
            w.join();
        }
        return stopped.get();
    }

    /** Closes the clients from {@code threads} threads at once (one after another took minutes at 1,000). */
    static void closeAll(List<RpcRdmaClient> clients, int threads) throws InterruptedException {
        long t0 = System.nanoTime();
        AtomicInteger next = new AtomicInteger();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < Math.min(threads, clients.size()); t++) {
            workers.add(Thread.ofPlatform().name("scale-close-" + t).start(() -> {
                for (int i = next.getAndIncrement(); i < clients.size(); i = next.getAndIncrement()) {
                    clients.get(i).close();
                }
            }));
        }
        for (Thread w : workers) {
            w.join();
        }
        System.out.printf(java.util.Locale.ROOT, "[scale] closed %d clients in %.1f s%n", clients.size(),
                (System.nanoTime() - t0) / 1e9);
    }

    /**
     * One client for {@code seconds} before anything is measured: both JVMs' JIT warms up, and
     * the server builds its shared receive queue at the first connection (seconds under
     * TCG), which would otherwise be N = 1's connect time. Returns what to add to the setup line.
     */
    private static String warmUp(ServerProcess server, InetSocketAddress addr, RpcRdmaOptions o, CallHandler back,
            int seconds, int window, int longEvery) throws Exception {
        long t0 = System.nanoTime();
        try (RpcRdmaClient c = RpcRdmaClient.connect(addr, o)) {
            double firstMs = (System.nanoTime() - t0) / 1e6;
            c.enableBackchannel(back).get(120, TimeUnit.SECONDS);
            server.command("backward " + seconds + " 2 0 " + c.clientId());
            CallPump.Result r = new CallPump(List.of(c), window, 0, longEvery, ScaleServer.FORWARD_PROG)
                    .run(TimeUnit.SECONDS.toNanos(seconds), TimeUnit.SECONDS.toNanos(180));
            Map<String, String> b = server.next(seconds + 180);
            server.command("clear");
            String s = String.format(java.util.Locale.ROOT, "; warm-up: one client for %d s (%d calls answered of %d,"
                    + " %s backward), its connect %.0f ms (the server JVM cold, its shared receive queue built)",
                    seconds, r.answered(), r.sent(), b.get("backAnswered"), firstMs);
            System.out.println("[scale] " + s.substring(2));
            return s;
        }
    }

    private static ScaleReport.Row phase(ServerProcess server, List<RpcRdmaClient> clients, XidLedger backLedger, int n,
            int phase, int seconds, int window, int longEvery, List<Double> connectMs, String stopped) throws Exception {
        int base = phase << 26;
        List<RpcRdmaClient> subset = new ArrayList<>(clients);
        Collections.shuffle(subset, new Random(n));
        subset = subset.subList(0, Math.max(1, Math.round(clients.size() / 10f)));
        StringJoiner ids = new StringJoiner(",");
        subset.forEach(c -> ids.add(Long.toString(c.clientId())));
        server.command("backward " + seconds + " 2 " + base + " " + ids);
        long[] cpu0 = clientCpu();
        // where the guest's CPU goes during the calls: 4 s from the 2nd second on (the sample reads /proc, a little CPU)
        Thread top = Thread.ofPlatform().daemon().name("scale-top").start(() -> {
            try {
                Thread.sleep(2000);
                System.out.println("[scale] " + clients.size() + " connections, during the calls: "
                        + GuestTop.sample(4000, 10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        java.time.Instant callsFrom = java.time.Instant.now();
        CallPump.Result forward = new CallPump(clients, window, base, longEvery, ScaleServer.FORWARD_PROG)
                .run(TimeUnit.SECONDS.toNanos(seconds), TimeUnit.SECONDS.toNanos(180));
        long[] cpu1 = clientCpu();
        top.join();
        // the wall-clock span, to find the calls in a time-sliced profile of either JVM
        System.out.printf(java.util.Locale.ROOT, "[scale] %d connections: forward calls %d sent, %d answered in %.1f s"
                + " (%s to %s)%n", clients.size(), forward.sent(), forward.answered(), forward.seconds(), callsFrom,
                java.time.Instant.now());
        Map<String, String> backward = server.next(seconds + 180);
        server.command("snapshot " + base + " " + forward.sent());
        // rdma res show lists every QP, CQ and MR of the guest: thousands at 1,000 connections
        Map<String, String> snap = server.next(SNAPSHOT_SECONDS);
        XidLedger.Check backCheck = backLedger.check(base, Integer.parseInt(backward.getOrDefault("backSent", "0")));
        System.out.printf(java.util.Locale.ROOT, "[scale] %d connections: %s completion queues; server CPU so far:"
                + " accept thread %s ms, completion threads %s ms, process %s ms; calls %.1f s%n", clients.size(),
                snap.get("completionQueues"), snap.get("cpuAcceptMs"), snap.get("cpuCompletionMs"),
                snap.get("cpuProcessMs"), forward.seconds());
        System.out.printf(java.util.Locale.ROOT, "[scale] %d connections: client JVM CPU during the calls: pollers"
                + " %d ms, rdma_cm threads %d ms, the rest %d ms%n", clients.size(), (cpu1[0] - cpu0[0]) / 1_000_000,
                (cpu1[1] - cpu0[1]) / 1_000_000, (cpu1[2] - cpu0[2]) / 1_000_000);
        server.command("clear");
        backLedger.clear();
        return ScaleReport.Row.of(n, clients.size(), stopped, connectMs, subset.size(), forward, backward, backCheck,
                snap);
    }

    /** This JVM's CPU time so far (ns): the clients' poller threads, their rdma_cm threads, all others. */
    private static long[] clientCpu() {
        // names without stacks: Thread.getAllStackTraces walked every stack in a handshake,
        // the most of the VM thread's CPU at 1,000 clients with a poller and a cm thread each
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[] ns = new long[3];
        for (java.lang.management.ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds(), 0)) {
            long c = t == null ? -1 : mx.getThreadCpuTime(t.getThreadId());
            if (c > 0) {
                ns[t.getThreadName().startsWith("rpcrdma-client-cq") ? 0
                        : t.getThreadName().startsWith("rpcrdma-client-cm") ? 1 : 2] += c;
            }
        }
        return ns;
    }

    /** The server JVM: this JVM's flags and class path, plus native memory tracking. */
    static final class ServerProcess implements AutoCloseable {
        private final Process process;
        private final PrintStream in;
        private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();

        private ServerProcess(Process p) {
            this.process = p;
            this.in = new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8);
            Thread.ofPlatform().daemon().name("scale-server-out").start(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        if (line.startsWith(ScaleServer.PREFIX)) {
                            answers.add(line.substring(ScaleServer.PREFIX.length()));
                        } else {
                            System.out.println("[server] " + line);
                        }
                    }
                } catch (java.io.IOException e) {
                    System.out.println("[server] output: " + e);
                }
            });
        }

        static ServerProcess start(int shared) throws java.io.IOException {
            List<String> cmd = new ArrayList<>();
            cmd.add(ProcessHandle.current().info().command().orElse("java"));
            cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
            cmd.add("-XX:NativeMemoryTracking=summary");
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(ScaleServer.class.getName());
            cmd.add(Integer.toString(shared));
            System.out.println("[scale] server JVM: " + String.join(" ", cmd));
            return new ServerProcess(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }

        void command(String line) {
            in.println(line);
        }

        /** The server's next answer; fails when it sent none in time (or died). */
        Map<String, String> next(int timeoutSeconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            String s = answers.poll(Math.min(timeoutSeconds, SLOW_ANSWER_SECONDS), TimeUnit.SECONDS);
            while (s == null && System.nanoTime() - deadline < 0) {
                // slow: show where the guest's CPU goes while it waits
                System.out.println("[scale] waiting for the server JVM: " + GuestTop.sample(3000, 8));
                s = answers.poll(Math.min(SLOW_ANSWER_SECONDS, Math.max(0, deadline - System.nanoTime()) / 1_000_000_000L),
                        TimeUnit.SECONDS);
            }
            if (s == null) {
                throw new IllegalStateException("no answer from the server JVM in " + timeoutSeconds + " s"
                        + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")"));
            }
            return FlatJson.read(s);
        }

        @Override
        public void close() throws InterruptedException {
            in.close();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
