package org.rpcrdma.bench.verbs;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import org.rpcrdma.transport.Backchannel;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.transport.verbs.LiveResources;

/**
 * The server JVM of the scale bench ({@link Scale} starts it): one {@link RpcRdmaServer}
 * with a shared receive queue, a handler that counts executions per XID, and a control
 * channel on stdin/stdout so the numbers are this JVM's, not the clients'. Commands, one a
 * line; answers are single lines {@code @scale {json}}:
 * <pre>
 * snapshot BASE SENT     threads, receive memory, heap after GC, NMT, rdma res counts of
 *                        this process, and the forward calls [BASE, BASE+SENT) checked
 * backward S W BASE IDS  for S seconds W backward calls in flight to each client id of
 *                        IDS (comma-separated), numbered from BASE; answers when done
 * clear                  forgets the executions counted so far
 * quit
 * </pre>
 */
public final class ScaleServer {
    static final String PREFIX = "@scale ";
    static final int FORWARD_PROG = 0x20000099;
    static final int BACKWARD_PROG = 0x40000001;

    private ScaleServer() {}

    /**
     * The server's options: a shared receive queue of {@code shared} buffers, event mode, and
     * its connections on the default completion group (a thread per core, at most 4; the
     * guest's 2): what the bench shows flat.
     */
    static RpcRdmaOptions options(int shared) {
        return RpcRdmaOptions.builder().sharedReceives(shared).backwardCallLimit(4).credits(8)
                .chunkMemoryBytes(0).connectTimeoutMillis(120_000).callTimeoutMillis(300_000)
                .build();
    }

    public static void main(String[] args) throws Exception {
        int shared = Integer.parseInt(args[0]);
        PrintStream out = System.out;
        XidLedger ledger = new XidLedger();
        CallHandler handler = c -> {
            ledger.executed(c.xid());
            c.reply(ScaleCalls.reply(c.message().bytes()));
        };
        try (RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(SendLatencyBenchmark.address(), 0),
                options(shared), handler, null)) {
            answer(out, Map.of("port", server.port(), "pid", ProcessHandle.current().pid()));
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] w = line.trim().split(" ");
                switch (w[0]) {
                    case "snapshot" -> answer(out, snapshot(server, ledger.check(Integer.parseInt(w[1]),
                            Integer.parseInt(w[2]))));
                    case "backward" -> backward(out, server, Integer.parseInt(w[1]), Integer.parseInt(w[2]),
                            Integer.parseInt(w[3]), w.length > 4 ? w[4] : "");
                    case "clear" -> ledger.clear();
                    case "quit" -> {
                        return;
                    }
                    default -> answer(out, Map.of("error", "unknown command " + line));
                }
            }
        }
    }

    private static void backward(PrintStream out, RpcRdmaServer server, int seconds, int window, int base, String ids) {
        List<Backchannel> to = new ArrayList<>();
        for (String id : ids.split(",")) {
            if (!id.isEmpty()) {
                to.add(server.backchannel(Long.parseLong(id)));
            }
        }
        Thread.ofPlatform().daemon().name("scale-backward").start(() -> {
            Map<String, Object> m = new LinkedHashMap<>();
            try {
                CallPump.Result r = new CallPump(to, window, base, 0, BACKWARD_PROG)
                        .run(TimeUnit.SECONDS.toNanos(seconds), TimeUnit.SECONDS.toNanos(120));
                m.put("backSent", r.sent());
                m.put("backAnswered", r.answered());
                m.put("backFailed", r.failed());
                m.put("backBad", r.bad());
                m.put("backUnanswered", r.unanswered());
                m.put("backSeconds", r.seconds());
                m.put("backProblem", r.firstProblem() == null ? "" : r.firstProblem());
            } catch (InterruptedException e) {
                m.put("backProblem", "interrupted");
            }
            answer(out, m);
        });
    }

    static Map<String, Object> snapshot(RpcRdmaServer server, XidLedger.Check forward) {
        Map<String, Object> m = new LinkedHashMap<>();
        Steps steps = new Steps(server.connections().size());
        m.put("connections", server.connections().size());
        int ours = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("rpcrdma")) {
                ours++;
            }
        }
        m.put("threadsOurs", ours);
        m.put("completionQueues", server.completionQueues());
        m.putAll(cpu());
        m.put("threadsTotal", ManagementFactory.getThreadMXBean().getThreadCount());
        m.put("receiveMemory", server.receiveMemoryBytes());
        steps.done("threads, CPU, receive memory");
        System.gc();
        m.put("heapAfterGc", ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        m.put("liveVerbsObjects", LiveResources.total());
        steps.done("GC");
        m.putAll(nativeMemory());
        steps.done("NMT");
        m.putAll(RdmaResources.ofThisProcess());
        steps.done("rdma res show");
        m.put("executions", forward.executions());
        m.put("lost", forward.lost());
        m.put("duplicated", forward.duplicated());
        m.put("stray", forward.stray());
        m.put("creditViolations", server.stats().creditViolations());
        return m;
    }

    /**
     * CPU time so far, in ms: the accepting thread's (rdma_cm events, every connection's
     * verbs objects and registrations), the completion threads' (polls, dispatch and the
     * handlers), and the whole process's: where connect time and calls/s go.
     */
    static Map<String, Object> cpu() {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cm = 0;
        long cq = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            long ns = mx.getThreadCpuTime(t.threadId());
            if (ns < 0) {
                continue;
            }
            if (t.getName().startsWith("rpcrdma-server-cm")) {
                cm += ns;
            } else if (t.getName().startsWith("rpcrdma-server-cq")) {
                cq += ns;
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cpuAcceptMs", cm / 1_000_000);
        m.put("cpuCompletionMs", cq / 1_000_000);
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            m.put("cpuProcessMs", os.getProcessCpuTime() / 1_000_000);
        }
        return m;
    }

    private static final Pattern NMT_TOTAL = Pattern.compile("Total: reserved=(\\d+)KB, committed=(\\d+)KB");
    private static final Pattern NMT_PART = Pattern.compile("-\\s+(Thread|Other) \\(reserved=(\\d+)KB, committed=(\\d+)KB");

    /** Committed bytes by NMT (run with -XX:NativeMemoryTracking=summary): total, threads, and Other (FFM memory). */
    static Map<String, Object> nativeMemory() {
        Map<String, Object> m = new LinkedHashMap<>();
        try {
            String s = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                    new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()});
            Matcher t = NMT_TOTAL.matcher(s);
            if (t.find()) {
                m.put("nmtCommitted", Long.parseLong(t.group(2)) * 1024);
            }
            Matcher p = NMT_PART.matcher(s);
            while (p.find()) {
                m.put(p.group(1).equals("Thread") ? "nmtThreads" : "nmtOther", Long.parseLong(p.group(3)) * 1024);
            }
        } catch (Exception | LinkageError e) {
            m.put("nmtProblem", e.toString());
        }
        return m;
    }

    /** How long each step of a snapshot took, on stderr as it goes: where a slow one spends its time. */
    private static final class Steps {
        private final int connections;
        private long at = System.nanoTime();

        Steps(int connections) {
            this.connections = connections;
        }

        void done(String step) {
            long now = System.nanoTime();
            System.err.printf(java.util.Locale.ROOT, "[scale-server] snapshot at %d connections: %s %d ms%n", connections,
                    step, (now - at) / 1_000_000);
            at = now;
        }
    }

    static synchronized void answer(PrintStream out, Map<String, ?> m) {
        out.println(PREFIX + FlatJson.write(m));
        out.flush();
    }
}
