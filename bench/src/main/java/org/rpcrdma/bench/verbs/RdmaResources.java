package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A process's verbs objects as the kernel counts them ({@code rdma res show qp|cq|mr|pd|srq},
 * iproute2; needs CAP_NET_ADMIN to see other processes' MRs): how many of each belong to
 * {@code pid}, and the bytes of its memory regions. What our own counters cannot see:
 * the objects the device made for us.
 */
final class RdmaResources {
    private static final String[] TYPES = {"qp", "cq", "mr", "pd", "srq"};
    private static final Pattern MRLEN = Pattern.compile("\\bmrlen (\\d+)");

    private RdmaResources() {}

    /** {@code qp, cq, mr, pd, srq} counts and {@code mrBytes}; {@code rdmaProblem} when the tool failed. */
    static Map<String, Object> of(long pid) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String type : TYPES) {
            try {
                count(m, type, run("rdma", "res", "show", type), pid);
            } catch (IOException | InterruptedException e) {
                m.put("rdmaProblem", e.toString());
                return m;
            }
        }
        return m;
    }

    /** Counts the lines of {@code text} (one object a line) that belong to {@code pid}. */
    static void count(Map<String, Object> m, String type, String text, long pid) {
        Pattern mine = Pattern.compile("\\bpid " + pid + "\\b");
        int n = 0;
        long bytes = 0;
        for (String line : text.split("\n")) {
            if (!mine.matcher(line).find()) {
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

    private static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + new String(out, StandardCharsets.UTF_8).strip());
        }
        return new String(out, StandardCharsets.UTF_8);
    }
}
