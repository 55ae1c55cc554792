package org.rpcrdma.bench.verbs;

import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;
import org.rpcrdma.transport.verbs.CompletionQueue;
import org.rpcrdma.transport.verbs.RecvBatch;
import org.rpcrdma.transport.verbs.SendBatch;
import org.rpcrdma.transport.verbs.WorkCompletions;

/**
 * The raw-verbs floors of a {@link LatencyCurve} run: an RC Send/Recv ping-pong on our
 * bindings ({@link SendLatencyBenchmark.Pair}), no RPC at all. {@code verbs-2thread}: one
 * thread per side, each busy-polling its own CQ (perftest's shape: two single-threaded
 * ends); {@code verbs-1thread}: one thread driving both ends ({@link SendLatencyBenchmark}'s
 * shape: no cross-thread wake-up at all). The size is the Send's byte count, as for
 * ib_send_lat.
 *
 * <p>Apart from the RPC points because it shares nothing with them but the device and the
 * timing: its own QPs, its own server loop; {@link JitPrewarm} drives {@link #roundTrip} too.
 */
final class VerbsPingPong {
    private final InetAddress ip;
    private final long warmupNanos;
    private final long measureNanos;
    private final Consumer<Point> progress;

    VerbsPingPong(InetAddress ip, CurveOptions o, Consumer<Point> progress) {
        this.ip = ip;
        this.warmupNanos = o.warmupNanos();
        this.measureNanos = o.measureNanos();
        this.progress = progress;
    }

    /** One series: {@code verbs-2thread} (a {@link PingPongServer} thread serves) or {@code verbs-1thread}. */
    void run(int[] sizes, boolean twoThreads) {
        run(sizes, twoThreads, "");
    }

    /** As {@link #run(int[], boolean)}, the points labelled {@code op} (a goal round's). */
    void run(int[] sizes, boolean twoThreads, String op) {
        String series = twoThreads ? "verbs-2thread" : "verbs-1thread";
        int max = sizes[sizes.length - 1];
        SendLatencyBenchmark.Pair pair = null;
        PingPongServer server = null;
        try {
            pair = new SendLatencyBenchmark.Pair(ip, max);
            pair.postServerRecv(); // here, so it is posted before the first Send whichever thread serves
            pair.postClientRecv();
            if (twoThreads) {
                server = new PingPongServer(pair);
                server.start();
            }
            for (int size : sizes) {
                if (size == 0) {
                    continue; // a zero-length SGE means 2 GiB to some providers; perftest starts at 1 B too
                }
                try {
                    Histogram h = new Histogram(3);
                    long end = System.nanoTime() + warmupNanos;
                    while (System.nanoTime() < end) {
                        roundTrip(pair, size, twoThreads);
                    }
                    end = System.nanoTime() + measureNanos;
                    long t;
                    do {
                        long t0 = System.nanoTime();
                        roundTrip(pair, size, twoThreads);
                        t = System.nanoTime();
                        h.recordValue(t - t0);
                    } while (t < end);
                    progress.accept(Point.of(series, op, 0, size, h));
                } catch (RuntimeException e) {
                    progress.accept(Point.failed(series, op, 0, size, "error: " + e.getMessage()));
                    return; // the QPs are likely in error: the rest of this series is missing
                }
            }
        } catch (RuntimeException e) {
            progress.accept(Point.failed(series, op, 0, 0, "setup failed: " + e));
        } finally {
            if (server != null) {
                server.stop();
            }
            if (pair != null) {
                pair.close();
            }
        }
    }

    /** Client Send of {@code size} bytes, the echo back; the server end is {@code pair} (one thread) or a PingPongServer. */
    static void roundTrip(SendLatencyBenchmark.Pair p, int size, boolean twoThreads) {
        p.send.clear();
        p.send.send(1, p.clientSendMr.lkey(), p.clientSendMr.address(), size, p.flags());
        p.clientQp.postSend(p.send);
        if (!twoThreads) {
            int got = awaitRecv(p.serverCq, p.wc);
            p.postServerRecv();
            p.send.clear();
            p.send.send(2, p.serverMr.lkey(), p.serverMr.address(), got, p.flags());
            p.serverQp.postSend(p.send);
        }
        awaitRecv(p.clientCq, p.wc);
        p.postClientRecv();
    }

    /** Busy-polls {@code cq} for a receive completion (10 s limit); returns its byte count. */
    static int awaitRecv(CompletionQueue cq, WorkCompletions wc) {
        long deadline = 0;
        for (int spins = 0; ; spins++) {
            int n = cq.poll(wc);
            for (int i = 0; i < n; i++) {
                if (wc.status(i) != WorkCompletions.SUCCESS) {
                    throw new IllegalStateException("completion " + WorkCompletions.statusString(wc.status(i)));
                }
                if (wc.opcode(i) == WorkCompletions.OPCODE_RECV) {
                    return wc.byteLen(i);
                }
            }
            if ((spins & 0xfff) == 0xfff) {
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + TimeUnit.SECONDS.toNanos(10);
                } else if (now > deadline) {
                    throw new IllegalStateException("no receive completion within 10 s");
                }
            }
            Thread.onSpinWait();
        }
    }

    /** The server end on its own thread: receive, repost, echo the bytes back; busy-polls its CQ. */
    static final class PingPongServer implements Runnable {
        private final SendLatencyBenchmark.Pair p;
        private final Thread thread;
        private volatile boolean stop;
        private volatile Throwable failure;

        PingPongServer(SendLatencyBenchmark.Pair p) {
            this.p = p;
            this.thread = new Thread(this, "verbs-pingpong-server");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        @Override
        public void run() {
            try (var send = new SendBatch(1, 1); var recv = new RecvBatch(1); var wc = new WorkCompletions(4)) {
                int sends = 0;
                while (!stop) {
                    int n = p.serverCq.poll(wc);
                    for (int i = 0; i < n; i++) {
                        if (wc.status(i) != WorkCompletions.SUCCESS) {
                            throw new IllegalStateException("server completion "
                                    + WorkCompletions.statusString(wc.status(i)));
                        }
                        if (wc.opcode(i) == WorkCompletions.OPCODE_RECV) {
                            int got = wc.byteLen(i);
                            postRecv(recv); // before the echo: the client sends again only after it
                            send.clear();
                            int flags = (++sends & 15) == 0 ? SendBatch.SIGNALED : 0;
                            send.send(2, p.serverMr.lkey(), p.serverMr.address(), got, flags);
                            p.serverQp.postSend(send);
                        }
                    }
                    if (n == 0) {
                        Thread.onSpinWait();
                    }
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        private void postRecv(RecvBatch recv) {
            recv.clear();
            recv.add(10, p.serverMr.lkey(), p.serverMr.address(), p.size);
            p.serverQp.postRecv(recv);
        }

        void stop() {
            stop = true;
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (failure != null) {
                System.out.println("[bench] verbs ping-pong server: " + failure);
            }
        }
    }
}
