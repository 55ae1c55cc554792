package org.rpcrdma.bench.verbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The threads of this machine (the guest) that used the most CPU over a short span, from
 * /proc/PID/task/TID/stat (utime + stime): which thread burns the CPU when the bench slows.
 */
final class GuestTop {
    /** Clock ticks per second (USER_HZ, 100 on Linux). */
    private static final double HZ = 100;

    private GuestTop() {}

    /** The {@code top} threads by CPU over {@code millis}, one line each: CPU %, process, thread. */
    static String sample(long millis, int top) throws InterruptedException {
        Map<String, Long> t0 = ticks();
        long n0 = System.nanoTime();
        Thread.sleep(millis);
        Map<String, Long> t1 = ticks();
        double seconds = (System.nanoTime() - n0) / 1e9;
        List<Map.Entry<String, Long>> used = new ArrayList<>();
        t1.forEach((k, v) -> used.add(Map.entry(k, v - t0.getOrDefault(k, v))));
        used.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
        StringBuilder b = new StringBuilder();
        long all = used.stream().mapToLong(Map.Entry::getValue).sum();
        b.append(String.format(Locale.ROOT, "guest CPU over %.1f s: %.0f %% of one CPU in all; top threads:", seconds,
                100 * all / HZ / seconds));
        for (int i = 0; i < Math.min(top, used.size()) && used.get(i).getValue() > 0; i++) {
            b.append(String.format(Locale.ROOT, " %s %.0f%%;", used.get(i).getKey(),
                    100 * used.get(i).getValue() / HZ / seconds));
        }
        return b.toString();
    }

    /** "process/thread[tid]" to utime + stime ticks, for every thread readable now. */
    private static Map<String, Long> ticks() {
        Map<String, Long> m = new HashMap<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.toList()) {
                String pid = p.getFileName().toString();
                if (!pid.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                String proc = comm(p.resolve("comm"));
                try (Stream<Path> tasks = Files.list(p.resolve("task"))) {
                    for (Path t : tasks.toList()) {
                        String stat = Files.readString(t.resolve("stat"));
                        int close = stat.lastIndexOf(')');
                        String name = stat.substring(stat.indexOf('(') + 1, close);
                        String[] f = stat.substring(close + 2).split(" ");
                        m.put(proc + "/" + name + "[" + t.getFileName() + "]",
                                Long.parseLong(f[11]) + Long.parseLong(f[12])); // utime, stime (fields 14, 15)
                    }
                } catch (IOException | RuntimeException gone) {
                    // the process or thread ended meanwhile
                }
            }
        } catch (IOException e) {
            return m;
        }
        return m;
    }

    private static String comm(Path p) {
        try {
            return Files.readString(p).trim();
        } catch (IOException e) {
            return "?";
        }
    }
}
