package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A process's verbs objects as the kernel counts them ({@code rdma res show qp|cq|mr|pd|srq},
 * iproute2; needs CAP_NET_ADMIN to see other processes' MRs): how many of each belong to
 * it, and the bytes of its memory regions. The kernel names an object's {@code pid} after
 * the thread that made it (its task, not the thread group), so a JVM's objects are those
 * of any of its threads ({@code /proc/self/task}); an object made by a thread that has
 * ended is not counted. The device's totals (every process) come from {@code rdma res show}.
 */
final class RdmaResources {
    private static final String[] TYPES = {"qp", "cq", "mr", "pd", "srq"};
    private static final Pattern MRLEN = Pattern.compile("\\bmrlen (\\d+)");

    private RdmaResources() {}

    /**
     * This JVM's {@code qp, cq, mr, pd, srq} counts and {@code mrBytes}, and the device's
     * totals ({@code deviceQp} ...); {@code rdmaProblem} when the tool failed.
     */
    static Map<String, Object> ofThisProcess() {
        Map<String, Object> m = new LinkedHashMap<>();
        try {
            Set<Long> tids = threadIds();
            for (String type : TYPES) {
                count(m, type, run("rdma", "res", "show", type), tids);
            }
            Matcher total = DEVICE_TOTALS.matcher(run("rdma", "res", "show"));
            while (total.find()) {
                m.put("device" + Character.toUpperCase(total.group(1).charAt(0)) + total.group(1).substring(1),
                        Long.parseLong(total.group(2)));
            }
        } catch (IOException | InterruptedException e) {
            m.put("rdmaProblem", e.toString());
        }
        return m;
    }

    private static final Pattern DEVICE_TOTALS = Pattern.compile("\\b(pd|cq|qp|mr|srq) (\\d+)");
    private static final Pattern PID = Pattern.compile("\\bpid (\\d+)\\b");

    private static Set<Long> threadIds() throws IOException {
        Set<Long> tids = new HashSet<>();
        try (Stream<Path> s = Files.list(Path.of("/proc/self/task"))) {
            s.forEach(p -> tids.add(Long.parseLong(p.getFileName().toString())));
        }
        return tids;
    }

    /** Counts the lines of {@code text} (one object a line) made by one of the threads {@code tids}. */
    static void count(Map<String, Object> m, String type, String text, Set<Long> tids) {
        int n = 0;
        long bytes = 0;
        for (String line : text.split("\n")) {
            Matcher pid = PID.matcher(line);
            if (!pid.find() || !tids.contains(Long.parseLong(pid.group(1)))) {
                continue;
            }
            n++;
            Matcher len = MRLEN.matcher(line);
            if (len.find()) {
                bytes += Long.parseLong(len.group(1));
            }
        }
        m.put(type, n);
        if (type.equals("mr")) {
            m.put("mrBytes", bytes);
        }
    }

    /** Longest one listing may take (it lists every object of the guest: thousands at 1,000 connections). */
    private static final long RUN_SECONDS = 60;

    /**
     * The command's output. Read from a file after it ended, so the time limit holds (a pipe
     * read to its end would wait for the command however long it takes); its time on stderr.
     */
    private static String run(String... cmd) throws IOException, InterruptedException {
        Path out = Files.createTempFile("rdma-res", ".txt");
        long t0 = System.nanoTime();
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(RUN_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not finish in " + RUN_SECONDS + " s");
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", cmd) + " failed: " + text.strip());
            }
            return text;
        } finally {
            Files.deleteIfExists(out);
            System.err.printf(java.util.Locale.ROOT, "[scale-server] %s: %d ms%n", String.join(" ", cmd),
                    (System.nanoTime() - t0) / 1_000_000);
        }
    }
}
