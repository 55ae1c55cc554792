package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The impaired link of scripts/lib/lossy-link.sh as the lossy bench and soak drive it: two
 * Soft-RoCE devices on a veth pair (client end, server end) with netem on both ends, named
 * by the variables {@code lossy-link.sh up} prints ({@code LOSSY_*}, exported by
 * scripts/bench). Changes the impairment and reads rxe's hardware counters.
 */
record LossyLink(String script, String clientDev, String serverDev, InetAddress serverIp) {
    /**
     * rxe's counters that show the link's loss being repaired (drivers/infiniband/sw/rxe/
     * rxe_hw_counters.c): requester retries (a timeout or a NAK), sequence-error NAKs
     * received, duplicate and out-of-sequence requests seen by a responder, QPs that ran
     * out of retries.
     */
    static final List<String> REPAIRS = List.of("completer_retry_err", "rcvd_seq_err", "duplicate_request",
            "out_of_seq_request", "retry_exceeded_err");

    /** The link the environment names (scripts/bench --lossy sets it up and exports it). */
    static LossyLink fromEnvironment() throws IOException {
        return new LossyLink(env("LOSSY_LINK"), env("LOSSY_CLIENT_DEV"), env("LOSSY_SERVER_DEV"),
                InetAddress.getByName(env("LOSSY_SERVER_IP")));
    }

    private static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException(name + " is not set: run under scripts/bench --lossy"
                    + " (scripts/lib/lossy-link.sh up)");
        }
        return v;
    }

    /** The impairment on both ends: netem parameters split on blanks, none (empty) for a clean link. */
    void set(String netem) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(script, "set"));
        if (!netem.isBlank()) {
            cmd.addAll(List.of(netem.trim().split("\\s+")));
        }
        run(cmd);
    }

    /** {@code seconds} of 100 % loss, then the impairment in force before it (blocks meanwhile). */
    void outage(int seconds) throws IOException, InterruptedException {
        run(List.of(script, "outage", Integer.toString(seconds)));
    }

    private static void run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " failed: " + out.trim());
        }
    }

    /** Both devices' hw_counters, "device/name" to value. */
    Map<String, Long> counters() throws IOException {
        Map<String, Long> m = new TreeMap<>();
        for (String dev : List.of(clientDev, serverDev)) {
            Path dir = Path.of("/sys/class/infiniband", dev, "ports/1/hw_counters");
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    m.put(dev + "/" + f.getFileName(), Long.parseLong(Files.readString(f).trim()));
                }
            }
        }
        return m;
    }

    /** The growth of each of {@link #REPAIRS} from {@code before} to {@code after}, summed over both devices. */
    static Map<String, Long> repairs(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new TreeMap<>();
        for (String name : REPAIRS) {
            d.put(name, 0L);
        }
        after.forEach((k, v) -> {
            String name = k.substring(k.indexOf('/') + 1);
            if (d.containsKey(name)) {
                d.merge(name, v - before.getOrDefault(k, 0L), Long::sum);
            }
        });
        return d;
    }
}
