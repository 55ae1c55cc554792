package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;

/**
 * The perftest baselines of {@link LatencyCurve}: {@code ib_send_lat}, {@code ib_read_lat},
 * {@code ib_write_lat} run as a server and a client process on the device under test.
 */
final class Perftest {
    private Perftest() {}

    /**
     * One perftest latency run ({@code ib_send_lat}, {@code ib_read_lat} or
     * {@code ib_write_lat}) at {@code size}: server and client on this device over rdma_cm,
     * busy-polling, like our verbs series. The series is the tool's name, in round trips:
     * send_lat and write_lat ping-pong and print half a round trip (doubled here); an RDMA
     * Read is a round trip by itself and read_lat prints it whole. A run that crashes
     * (perftest 4.5 under TCG once died with SIGSEGV at 1 KiB), hangs or prints no result is
     * a missing point, never a failed bench. Output in {@code logs/TOOL-SIZE-{server,client}.log};
     * {@code full}: more iterations.
     */
    static Point run(String tool, int size, int port, Path logs, InetAddress ip, boolean full) throws InterruptedException {
        return run(tool, size, port, logs, ip, size >= 65536 ? (full ? 1000 : 200) : (full ? 5000 : 1000), "");
    }

    /**
     * As {@link #run(String, int, int, Path, InetAddress, boolean)} with a given number of
     * round trips, the point labelled {@code op} (its logs too, so a repeated size keeps each).
     */
    static Point run(String tool, int size, int port, Path logs, InetAddress ip, int iterations, String op)
            throws InterruptedException {
        return retried(tool, size, port, logs, onDevice(ip, false, false), iterations, op);
    }

    /**
     * {@link #latency}, and once more on a fresh port if it gave no point: under a loaded TCG
     * guest the server sometimes is not listening yet when the client connects (rdma_cm
     * REJECTED, reason 8: no listener).
     */
    private static Point retried(String tool, int size, int port, Path logs, Ends ends, int iterations, String op)
            throws InterruptedException {
        Point p = latency(tool, size, port, logs, ends, iterations, op);
        if (!p.ok()) {
            Point again = latency(tool, size, port + 1000, logs, ends, iterations, op);
            return again.ok() ? again : p;
        }
        return p;
    }

    /** Both ends on the device under test (RDMA_VM_DEV, RPCRDMA_TEST_DEVICE, or perftest's first). */
    private static Ends onDevice(InetAddress ip, boolean serverEvents, boolean clientEvents) {
        String dev = firstNonEmpty(System.getenv("RDMA_VM_DEV"), System.getenv("RPCRDMA_TEST_DEVICE"));
        return new Ends(ip, dev, dev, 180, serverEvents, clientEvents);
    }

    /**
     * Where a run's two processes are: the server's address and device, the client's device
     * (two devices on an impaired link; one device under test otherwise: both the same, or
     * null for perftest's first), how long the client may take before it counts as hung, and
     * which end waits on completion events ({@code -e}) instead of busy-polling.
     */
    record Ends(InetAddress serverIp, String serverDev, String clientDev, int timeoutSeconds, boolean serverEvents,
            boolean clientEvents) {
        Ends(InetAddress serverIp, String serverDev, String clientDev, int timeoutSeconds) {
            this(serverIp, serverDev, clientDev, timeoutSeconds, false, false);
        }
    }

    /**
     * As {@link #run(String, int, int, Path, InetAddress, int, String)} with one end on
     * completion events ({@code -e}): the server's ({@code serverEvents}) or the client's,
     * the point named {@code series}. For {@code ib_read_lat} the client is the end that
     * reads. A missing point, never a failed bench, as there.
     */
    static Point runOnEvents(String tool, int size, int port, Path logs, InetAddress ip, int iterations, String op,
            boolean serverEvents, String series) throws InterruptedException {
        Point p = retried(tool, size, port, logs, onDevice(ip, serverEvents, !serverEvents), iterations, op);
        return new Point(series, p.op(), p.threshold(), p.size(), p.status(), p.count(), p.min(), p.p50(), p.p99(),
                p.p999(), p.mean());
    }

    /** A perftest bandwidth run's result: messages and MB per second, or why it is missing. */
    record Rate(String tool, int size, String status, long iterations, double msgsPerSecond, double mbPerSecond) {
        boolean ok() {
            return status.equals("ok");
        }

        static Rate failed(String tool, int size, String status) {
            return new Rate(tool, size, status, 0, Double.NaN, Double.NaN);
        }
    }

    /** One latency run ({@code ib_send_lat}, ...) between {@code ends}, in round trips; see {@link #run}. */
    static Point latency(String tool, int size, int port, Path logs, Ends ends, int iterations, String op)
            throws InterruptedException {
        String name = tool + "-" + size + (op.isEmpty() ? "" : "-" + op)
                + (ends.serverEvents() ? "-server-e" : "") + (ends.clientEvents() ? "-client-e" : "");
        Outcome o = execRetried(tool, size, port, logs, ends, iterations, name);
        if (o.failure() != null) {
            return Point.failed(tool, op, 0, size, o.failure());
        }
        try {
            Point p = parseLatency(tool, op, size, iterations, o.lines());
            return p != null ? p : Point.failed(tool, op, 0, size, o.noResult());
        } catch (NumberFormatException e) {
            return Point.failed(tool, op, 0, size, "missing (" + e + ")");
        }
    }

    /** One bandwidth run ({@code ib_send_bw}, ...) of {@code iterations} messages of {@code size} bytes between {@code ends}. */
    static Rate bandwidth(String tool, int size, int port, Path logs, Ends ends, int iterations, String op)
            throws InterruptedException {
        String name = tool + "-" + size + (op.isEmpty() ? "" : "-" + op);
        Outcome o = execRetried(tool, size, port, logs, ends, iterations, name);
        if (o.failure() != null) {
            return Rate.failed(tool, size, o.failure());
        }
        try {
            Rate r = parseRate(tool, size, iterations, o.lines());
            return r != null ? r : Rate.failed(tool, size, o.noResult());
        } catch (NumberFormatException e) {
            return Rate.failed(tool, size, "missing (" + e + ")");
        }
    }

    /**
     * The result line of a latency tool, null if none: " #bytes #iterations t_min t_max
     * t_typical t_avg t_stdev 99% 99.9%" (usec); send_lat and write_lat print half a round
     * trip (doubled here), read_lat a whole one.
     */
    static Point parseLatency(String tool, String op, int size, int iterations, List<String> lines) {
        double factor = tool.equals("ib_read_lat") ? 1 : 2;
        for (String line : lines) {
            String[] f = fields(line);
            if (f.length >= 9 && f[0].equals(Integer.toString(size)) && f[1].equals(Integer.toString(iterations))) {
                double min = factor * Double.parseDouble(f[2]);
                double typical = factor * Double.parseDouble(f[4]);
                double avg = factor * Double.parseDouble(f[5]);
                double p99 = factor * Double.parseDouble(f[7]);
                double p999 = factor * Double.parseDouble(f[8]);
                if (!Double.isFinite(min + typical + avg + p99 + p999)) {
                    // under TCG perftest sometimes reads no usable CPU clock and prints inf
                    return Point.failed(tool, op, 0, size, "missing (it printed inf: no usable CPU clock)");
                }
                return new Point(tool, op, 0, size, "ok", iterations, min, typical, p99, p999, avg);
            }
        }
        return null;
    }

    /**
     * The result line of a bandwidth tool, null if none: " #bytes #iterations BW peak[MB/sec]
     * BW average[MB/sec] MsgRate[Mpps]".
     */
    static Rate parseRate(String tool, int size, int iterations, List<String> lines) {
        for (String line : lines) {
            String[] f = fields(line);
            if (f.length >= 5 && f[0].equals(Integer.toString(size)) && f[1].equals(Integer.toString(iterations))) {
                double mb = Double.parseDouble(f[3]);
                double mpps = Double.parseDouble(f[4]);
                if (!Double.isFinite(mb + mpps)) {
                    return Rate.failed(tool, size, "missing (it printed inf or nan: no usable CPU clock)");
                }
                return new Rate(tool, size, "ok", iterations, mpps * 1e6, mb);
            }
        }
        return null;
    }

    private static String[] fields(String line) {
        return line.trim().replace("-nan", "NaN").replace("nan", "NaN").replace("inf", "Infinity").split("\\s+");
    }

    /** The client's output, or why there is none (a failure); {@code noResult} for output without a result line. */
    private record Outcome(List<String> lines, String failure, String noResult) {}

    /**
     * {@link #exec}, once more on another port when the client ended without a result (the
     * server not yet listening: rdma_cm REJECTED), not when it hung (that would cost the
     * timeout again).
     */
    private static Outcome execRetried(String tool, int size, int port, Path logs, Ends ends, int iterations,
            String name) throws InterruptedException {
        Outcome o = exec(tool, size, port, logs, ends, iterations, name);
        if (o.failure() == null && o.lines().stream().anyMatch(l -> l.contains("Unexpected CM event"))) {
            return exec(tool, size, port + 1000, logs, ends, iterations, name + "-again");
        }
        return o;
    }

    private static Outcome exec(String tool, int size, int port, Path logs, Ends ends, int iterations, String name)
            throws InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(tool, "-R", "-F", "-p", Integer.toString(port),
                "-s", Integer.toString(size), "-n", Integer.toString(iterations)));
        List<String> scmd = new ArrayList<>(cmd);
        List<String> ccmd = new ArrayList<>(cmd);
        if (ends.serverDev() != null) {
            scmd.addAll(List.of("-d", ends.serverDev()));
        }
        if (ends.clientDev() != null) {
            ccmd.addAll(List.of("-d", ends.clientDev()));
        }
        if (ends.serverEvents()) {
            scmd.add("-e");
        }
        if (ends.clientEvents()) {
            ccmd.add("-e");
        }
        ccmd.add(ends.serverIp().getHostAddress());
        Path serverLog = logs.resolve(name + "-server.log");
        Path clientLog = logs.resolve(name + "-client.log");
        Process server = null;
        Process client = null;
        try {
            Files.createDirectories(logs);
            server = new ProcessBuilder(scmd).redirectErrorStream(true).redirectOutput(serverLog.toFile()).start();
            Thread.sleep(1000); // the server must be listening before the client's rdma_cm connect
            client = new ProcessBuilder(ccmd).redirectErrorStream(true).redirectOutput(clientLog.toFile()).start();
            if (!client.waitFor(ends.timeoutSeconds(), TimeUnit.SECONDS)) {
                return new Outcome(List.of(), "missing (timed out after " + ends.timeoutSeconds() + " s)", null);
            }
            int rc = client.exitValue();
            server.waitFor(10, TimeUnit.SECONDS);
            return new Outcome(Files.readAllLines(clientLog), null, "missing (exit " + rc + (rc > 128 ? ", signal "
                    + (rc - 128) : "") + ", no result line; see " + clientLog + ")");
        } catch (IOException | RuntimeException e) {
            return new Outcome(List.of(), "missing (" + e + ")", null);
        } finally {
            for (Process p : new Process[] {client, server}) {
                if (p != null && p.isAlive()) {
                    p.destroyForcibly();
                    p.waitFor(5, TimeUnit.SECONDS);
                }
            }
        }
    }

    private static String firstNonEmpty(String... v) {
        for (String s : v) {
            if (s != null && !s.isEmpty()) {
                return s;
            }
        }
        return null;
    }
}
