package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Linux only, best effort: the deferred kernel work beside a measured point, read from
 * {@code /proc}: tasklets run ({@code /proc/softirqs}) and the {@code ksoftirqd} threads'
 * time on a CPU and waiting for one ({@code /proc/PID/schedstat}). Soft-RoCE does part of a
 * work request's processing in a tasklet (an RDMA Read at its responder, a local operation's
 * completion), which runs in {@code ksoftirqd} when it was raised outside an interrupt, so
 * its wait for a CPU is part of a chunked call's time. All zeros where {@code /proc} lacks them.
 */
final class SoftirqStats {
    private final List<Path> ksoftirqd = new ArrayList<>();

    SoftirqStats() {
        try (var s = Files.list(Path.of("/proc"))) {
            s.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                try {
                    if (Files.readString(p.resolve("comm")).startsWith("ksoftirqd/")) {
                        ksoftirqd.add(p.resolve("schedstat"));
                    }
                } catch (IOException | RuntimeException e) {
                    // a process that went away, or no /proc: nothing to read
                }
            });
        } catch (IOException | RuntimeException e) {
            // no /proc
        }
    }

    /** {tasklets, ksoftirqd ns on CPU, ksoftirqd ns waiting for a CPU, ksoftirqd timeslices}. */
    long[] sample() {
        long[] v = new long[4];
        try {
            for (String line : Files.readAllLines(Path.of("/proc/softirqs"))) {
                String t = line.trim();
                if (t.startsWith("TASKLET:")) {
                    for (String f : t.substring(8).trim().split("\\s+")) {
                        v[0] += Long.parseLong(f);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        for (Path p : ksoftirqd) {
            try {
                String[] f = Files.readString(p).trim().split("\\s+");
                v[1] += Long.parseLong(f[0]);
                v[2] += Long.parseLong(f[1]);
                v[3] += Long.parseLong(f[2]);
            } catch (IOException | RuntimeException e) {
                // gone
            }
        }
        return v;
    }

    /** Per call between two samples. */
    static String describe(long[] a, long[] b, long calls) {
        double n = Math.max(1, calls);
        return String.format(Locale.ROOT, "%.2f tasklets, ksoftirqd %.1f us on CPU + %.1f us waiting in %.2f slices",
                (b[0] - a[0]) / n, (b[1] - a[1]) / n / 1e3, (b[2] - a[2]) / n / 1e3, (b[3] - a[3]) / n);
    }
}
