package org.rpcrdma.bench.verbs;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.ReplyCallback;
import org.rpcrdma.transport.RpcCaller;

/**
 * Keeps {@code window} calls in flight on each of many callers (clients, or a server's
 * backchannels) from one thread, numbering them {@code base, base + 1, ...}, and checks
 * every reply ({@link Calls}: by default {@link ScaleCalls}' small calls with every
 * {@code longEvery}-th a long call). A caller whose call failed gets no more calls (its
 * connection is likely gone).
 */
final class CallPump {
    /** Call {@code xid}'s bytes and options, and its reply's check. */
    record Call(MemorySegment bytes, CallOptions options, Check check) {}

    /** Null when {@code reply} (valid only during the check) is the right answer; else what is wrong. */
    interface Check {
        String problem(MemorySegment reply);
    }

    /** What the pump sends as the call numbered {@code xid}. */
    interface Calls {
        Call make(int xid);
    }

    /** {@link ScaleCalls}' calls of program {@code prog}: small ones, every {@code longEvery}-th long (0: none). */
    static Calls scaleCalls(int longEvery, int prog) {
        return xid -> {
            int args = longEvery > 0 && xid % longEvery == 0 ? LONG_ARGS : SMALL_ARGS;
            return new Call(ScaleCalls.call(xid, prog, args), CallOptions.DEFAULT,
                    reply -> ScaleCalls.problem(xid, args, reply));
        };
    }

    /** What one run did: every call sent should be answered, checked, and none left. */
    record Result(int base, int sent, long answered, long failed, long bad, long unanswered, double seconds,
            String firstProblem, List<Integer> unansweredXids) {
        boolean clean() {
            return failed == 0 && bad == 0 && unanswered == 0 && answered == sent;
        }
    }

    static final int SMALL_ARGS = 64;
    static final int LONG_ARGS = 6 * 1024; // past the 4 KiB inline threshold

    private final List<? extends RpcCaller> callers;
    private final int window;
    private final int base;
    private final Calls calls;
    private final LinkedBlockingQueue<Integer> ready = new LinkedBlockingQueue<>();
    private final LongAdder answered = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder bad = new LongAdder();
    private final AtomicReference<String> firstProblem = new AtomicReference<>();
    /** Calls sent and not ended yet: what is left after the drain is named in the result. */
    private final Set<Integer> inFlight = ConcurrentHashMap.newKeySet();

    CallPump(List<? extends RpcCaller> callers, int window, int base, int longEvery, int prog) {
        this(callers, window, base, scaleCalls(longEvery, prog));
    }

    CallPump(List<? extends RpcCaller> callers, int window, int base, Calls calls) {
        this.callers = callers;
        this.window = window;
        this.base = base;
        this.calls = calls;
    }

    /** Calls for {@code nanos}, then waits up to {@code drainNanos} for the last replies. */
    Result run(long nanos, long drainNanos) throws InterruptedException {
        for (int w = 0; w < window; w++) {
            for (int i = 0; i < callers.size(); i++) {
                ready.add(i);
            }
        }
        long start = System.nanoTime();
        long end = start + nanos;
        int sent = 0;
        while (System.nanoTime() < end) {
            Integer i = ready.poll(50, TimeUnit.MILLISECONDS);
            if (i == null) {
                continue;
            }
            int xid = base + sent++;
            Call call = calls.make(xid);
            inFlight.add(xid);
            try {
                callers.get(i).call(call.bytes(), call.options(), callback(i, xid, call.check()));
            } catch (RuntimeException e) {
                inFlight.remove(xid);
                failed(e.toString());
            }
        }
        long drainEnd = System.nanoTime() + drainNanos;
        while (answered.sum() + failed.sum() + bad.sum() < sent && System.nanoTime() < drainEnd) {
            Thread.sleep(10); // polling a counter for the stragglers; not a measurement
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long done = answered.sum() + failed.sum() + bad.sum();
        return new Result(base, sent, answered.sum(), failed.sum(), bad.sum(), sent - done, seconds,
                firstProblem.get(), new TreeSet<>(inFlight).stream().limit(16).toList());
    }

    private void failed(String why) {
        failed.increment();
        firstProblem.compareAndSet(null, why);
    }

    private ReplyCallback callback(int caller, int xid, Check check) {
        return new ReplyCallback() {
            @Override
            public void onReply(MemorySegment reply) {
                inFlight.remove(xid);
                String p = check.problem(reply);
                if (p == null) {
                    answered.increment();
                } else {
                    bad.increment();
                    firstProblem.compareAndSet(null, p);
                }
                ready.add(caller);
            }

            @Override
            public void onFailure(Throwable cause) {
                inFlight.remove(xid);
                failed(cause.toString());
            }
        };
    }
}
