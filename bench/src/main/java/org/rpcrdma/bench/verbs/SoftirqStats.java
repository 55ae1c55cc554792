package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Linux only, best effort: the deferred kernel work beside a measured point, read from
 * {@code /proc}: tasklets run ({@code /proc/softirqs}, per CPU) and each {@code ksoftirqd/N}
 * thread's time on a CPU and waiting for one ({@code /proc/PID/schedstat}); and this JVM's
 * own threads: their context switches (voluntary, involuntary), their wait for a CPU, and
 * which CPU the busiest ones ran on. Soft-RoCE does part of a work request's processing in
 * a tasklet (an RDMA Read at its responder, a local operation's completion), run by the
 * {@code ksoftirqd} of the CPU that raised it when raised outside an interrupt, so its wait
 * for a CPU is part of a chunked call's time; a thread of ours spinning on that CPU is what
 * it waits behind. Counts of work and switches depend less on the host's load than times
 * do: an A/B on a loaded host is judged by them first. Under TCG the times are the guest
 * clock's, which runs on while the host does not run the vCPU: over one 4 KiB long-call row
 * perf sampled {@code ksoftirqd} about a seventh of the time schedstat gave it
 * (bench/profiles/idle-20261127). All zeros where {@code /proc} lacks them.
 */
final class SoftirqStats {
    /** ksoftirqd/N's schedstat, index N. */
    private final List<Path> ksoftirqd = new ArrayList<>();

    SoftirqStats() {
        Map<Integer, Path> byCpu = new HashMap<>();
        try (var s = Files.list(Path.of("/proc"))) {
            s.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                try {
                    String comm = Files.readString(p.resolve("comm")).trim();
                    if (comm.startsWith("ksoftirqd/")) {
                        byCpu.put(Integer.parseInt(comm.substring(10)), p.resolve("schedstat"));
                    }
                } catch (IOException | RuntimeException e) {
                    // a process that went away, or no /proc: nothing to read
                }
            });
        } catch (IOException | RuntimeException e) {
            // no /proc
        }
        for (int cpu = 0; byCpu.containsKey(cpu); cpu++) {
            ksoftirqd.add(byCpu.get(cpu));
        }
    }

    /** What one sample read. */
    record Sample(long[] tasklets, long[] softirqdRun, long[] softirqdWait, long[] softirqdSlices, long voluntary,
            long involuntary, long ourWait, Map<String, long[]> threads) {}

    Sample sample() {
        int n = Math.max(1, ksoftirqd.size());
        long[] tasklets = new long[n];
        long[] run = new long[n];
        long[] wait = new long[n];
        long[] slices = new long[n];
        try {
            for (String line : Files.readAllLines(Path.of("/proc/softirqs"))) {
                String t = line.trim();
                if (t.startsWith("TASKLET:")) {
                    String[] f = t.substring(8).trim().split("\\s+");
                    for (int i = 0; i < f.length; i++) {
                        tasklets[Math.min(i, n - 1)] += Long.parseLong(f[i]);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        for (int i = 0; i < ksoftirqd.size(); i++) {
            long[] f = schedstat(ksoftirqd.get(i));
            run[i] = f[0];
            wait[i] = f[1];
            slices[i] = f[2];
        }
        long vol = 0;
        long invol = 0;
        long ourWait = 0;
        Map<String, long[]> threads = new HashMap<>();
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            vol += Long.parseLong(line.substring(24).trim());
                        } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                            invol += Long.parseLong(line.substring(27).trim());
                        }
                    }
                    long[] ss = schedstat(t.resolve("schedstat"));
                    ourWait += ss[1];
                    String stat = Files.readString(t.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    // after the name: state is field 3, processor field 39 (index 36 here)
                    threads.put(name + "#" + t.getFileName(), new long[] {ss[0], Long.parseLong(f[36])});
                } catch (IOException | RuntimeException e) {
                    // a thread that ended
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc
        }
        return new Sample(tasklets, run, wait, slices, vol, invol, ourWait, threads);
    }

    private static long[] schedstat(Path p) {
        try {
            String[] f = Files.readString(p).trim().split("\\s+");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])};
        } catch (IOException | RuntimeException e) {
            return new long[3];
        }
    }

    /**
     * Per call between two samples: tasklets (and per CPU), ksoftirqd's time on a CPU and
     * waiting (and its wait per CPU), our context switches and wait for a CPU, and the three
     * threads of ours that ran most, with their share of the interval's wall time and the CPU
     * they were last on.
     */
    static String describe(Sample a, Sample b, long calls, long wallNanos) {
        double n = Math.max(1, calls);
        StringBuilder perCpuTasklets = new StringBuilder();
        StringBuilder perCpuWait = new StringBuilder();
        long tasklets = 0;
        long run = 0;
        long wait = 0;
        long slices = 0;
        for (int i = 0; i < a.tasklets().length; i++) {
            long d = b.tasklets()[i] - a.tasklets()[i];
            tasklets += d;
            run += b.softirqdRun()[i] - a.softirqdRun()[i];
            wait += b.softirqdWait()[i] - a.softirqdWait()[i];
            slices += b.softirqdSlices()[i] - a.softirqdSlices()[i];
            perCpuTasklets.append(i == 0 ? "" : "/").append(String.format(Locale.ROOT, "%.2f", d / n));
            perCpuWait.append(i == 0 ? "" : "/").append(String.format(Locale.ROOT, "%.0f",
                    (b.softirqdWait()[i] - a.softirqdWait()[i]) / n / 1e3));
        }
        List<Map.Entry<String, Long>> busy = new ArrayList<>();
        for (var e : b.threads().entrySet()) {
            long[] before = a.threads().get(e.getKey());
            busy.add(Map.entry(e.getKey(), e.getValue()[0] - (before == null ? 0 : before[0])));
        }
        busy.sort((x, y) -> Long.compare(y.getValue(), x.getValue()));
        StringBuilder top = new StringBuilder();
        for (int i = 0; i < Math.min(3, busy.size()); i++) {
            var e = busy.get(i);
            top.append(i == 0 ? "" : ", ").append(e.getKey().substring(0, e.getKey().indexOf('#')))
                    .append(String.format(Locale.ROOT, " %.0f%% cpu%d", 100.0 * e.getValue() / Math.max(1, wallNanos),
                            b.threads().get(e.getKey())[1]));
        }
        return String.format(Locale.ROOT, "%.2f tasklets (per CPU %s), ksoftirqd %.1f us on CPU + %.1f us waiting"
                + " (per CPU %s) in %.2f slices; ours: %.2f voluntary + %.2f involuntary switches, %.1f us waiting"
                + " for a CPU; busiest: %s", tasklets / n, perCpuTasklets, run / n / 1e3, wait / n / 1e3, perCpuWait,
                slices / n, (b.voluntary() - a.voluntary()) / n, (b.involuntary() - a.involuntary()) / n,
                (b.ourWait() - a.ourWait()) / n / 1e3, top);
    }
}
