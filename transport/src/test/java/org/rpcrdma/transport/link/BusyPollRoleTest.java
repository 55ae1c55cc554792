package org.rpcrdma.transport.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.LinkClosedException;

/**
 * Busy-poll's poll role and gate across empty polls (the invariants in
 * {@link CompletionDriver}'s comment), without a device: the role's holder keeps the gate
 * while it finds nothing, lets it go for destroy, and one thread at a time polls and
 * dispatches, each completion once, whoever holds the role.
 */
class BusyPollRoleTest {

    private static final long FAR = TimeUnit.SECONDS.toNanos(60);

    @Test
    void aSpinningCallerKeepsTheGateAcrossEmptyPollsAndLetsItGoForDestroy() throws Exception {
        LinkGate gate = new LinkGate(what -> new LinkClosedException("refused " + what));
        // a completion-group thread's CQs before any was added: every poll is empty, no device
        GroupPoller cqs = new GroupPoller(gate, null, null, () -> { });
        CompletionDriver driver = new CompletionDriver(cqs, true);
        AtomicBoolean done = new AtomicBoolean();
        CompletableFuture<Boolean> caller = CompletableFuture.supplyAsync(
                () -> driver.pollOnCaller(done::get, System.nanoTime() + FAR));

        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!gate.readHeld() && System.nanoTime() - until < 0) {
            Thread.onSpinWait(); // until the caller has begun polling
        }
        int held = 0;
        int samples = 10_000;
        for (int i = 0; i < samples; i++) {
            held += gate.readHeld() ? 1 : 0;
            Thread.onSpinWait();
        }
        assertEquals(samples, held, "the gate was held in only " + held + " of " + samples
                + " looks while a caller spun on an empty CQ (a lock taken per empty poll)");

        // destroy: stop, then the write side waits at most one poll for the spinner
        gate.stop();
        CompletableFuture<String> free = CompletableFuture.supplyAsync(() -> gate.free(() -> "freed"));
        assertEquals("freed", free.get(5, TimeUnit.SECONDS), "free waited for a spinning caller past its stop");
        assertTrue(caller.get(5, TimeUnit.SECONDS), "the caller did not leave once stopping");
        assertFalse(gate.readHeld(), "the gate's read side was not let go");
        assertFalse(done.get());
    }

    /** Empty polls under a real gate, taken as {@link GatedCq} takes it (no device); counts the gate's entries. */
    private static final class EmptyGatedCq implements CompletionDriver.Cq {
        final LinkGate gate = new LinkGate(what -> new LinkClosedException("refused " + what));
        final AtomicInteger entries = new AtomicInteger();
        final AtomicInteger polls = new AtomicInteger();
        volatile boolean idle;
        private long held;

        @Override
        public int pollOnly() {
            long stamp = gate.enterUnlessStopping();
            if (stamp == 0) {
                return 0;
            }
            entries.incrementAndGet();
            polls.incrementAndGet();
            gate.exit(stamp);
            return 0;
        }

        @Override
        public int pollHolding() {
            if (held == 0) {
                long stamp = gate.enterUnlessStopping();
                if (stamp == 0) {
                    return 0;
                }
                entries.incrementAndGet();
                held = stamp;
            } else if (gate.stopping()) {
                letGo();
                return 0;
            }
            polls.incrementAndGet();
            return 0;
        }

        @Override
        public void letGo() {
            if (held != 0) {
                gate.exit(held);
                held = 0;
            }
        }

        @Override
        public int pollOrWait(long awaitMillis) {
            throw new AssertionError("busy-poll does not wait");
        }

        @Override
        public void dispatch(int n) {
            throw new AssertionError("nothing to dispatch");
        }

        @Override
        public boolean stopping() {
            return gate.stopping();
        }

        @Override
        public int outstandingCalls() {
            return 0;
        }

        @Override
        public void failed(RuntimeException e) {
            throw new AssertionError(e);
        }

        @Override
        public boolean idle() {
            return idle;
        }
    }

    private static void awaitPolls(EmptyGatedCq cq, int atLeast) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cq.polls.get() < atLeast && System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
        assertTrue(cq.polls.get() >= atLeast, "only " + cq.polls.get() + " polls in 10 s");
    }

    @Test
    void aCompletionGroupThreadKeepsTheGateAcrossEmptyPollsLetsItGoToParkAndForClose() throws Exception {
        EmptyGatedCq cq = new EmptyGatedCq();
        CompletionDriver driver = new CompletionDriver(cq, true, false); // a group's: no caller leads
        Thread t = driver.start("group-busy-test");
        try {
            awaitPolls(cq, 20_000);
            int entries = cq.entries.get();
            int polls = cq.polls.get();
            assertTrue(entries <= 2, "the gate was entered " + entries + " times in " + polls
                    + " empty polls of a group's busy thread (once per poll)");

            // idle: it lets the gate go and parks
            cq.idle = true;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (t.getState() != Thread.State.WAITING && System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
            assertEquals(Thread.State.WAITING, t.getState(), "an idle group thread did not park");
            assertFalse(cq.gate.readHeld(), "an idle group thread parked holding the gate");

            // a connection comes: woken, it polls again
            cq.idle = false;
            int before = cq.polls.get();
            driver.wake();
            awaitPolls(cq, before + 1_000);
        } finally {
            // close: stop, then the write side waits at most one poll for the spinner
            cq.gate.stop();
            driver.wake();
            CompletableFuture<String> free = CompletableFuture.supplyAsync(() -> cq.gate.free(() -> "freed"));
            assertEquals("freed", free.get(5, TimeUnit.SECONDS), "free waited for a spinning group thread past its stop");
            t.join(5000);
        }
        assertFalse(t.isAlive(), "the group thread did not stop");
        assertFalse(cq.gate.readHeld(), "the gate's read side was not let go");
    }

    /**
     * A fake CQ whose completions are tokens; checks that only one thread at a time is inside
     * a poll or a dispatch, that the gate it "keeps" across empty polls is never found kept
     * by a thread other than the one polling (let go before the role), and that each token
     * is dispatched once.
     */
    private static final class TokenCq implements CompletionDriver.Cq {
        final ConcurrentLinkedQueue<Integer> cq = new ConcurrentLinkedQueue<>();
        final AtomicIntegerArray dispatched;
        final AtomicInteger inside = new AtomicInteger();
        final AtomicReference<String> violation = new AtomicReference<>();
        final int[] copied = new int[8];
        Thread keeper; // the thread that keeps the "gate" (plain: the role orders it)
        volatile boolean stopping;

        TokenCq(int tokens) {
            dispatched = new AtomicIntegerArray(tokens);
        }

        private void enter(String what) {
            if (inside.incrementAndGet() != 1) {
                violation.compareAndSet(null, "two threads inside at " + what);
            }
        }

        @Override
        public int pollHolding() {
            return poll(true);
        }

        /** The poller thread's busy poll: no gate kept. */
        @Override
        public int pollOnly() {
            return poll(false);
        }

        private int poll(boolean keep) {
            enter("poll");
            try {
                Thread me = Thread.currentThread();
                if (keeper != null && keeper != me) {
                    violation.compareAndSet(null, me.getName() + " polled while " + keeper.getName() + " kept the gate");
                }
                if (stopping) {
                    keeper = null;
                    return 0;
                }
                int n = 0;
                for (Integer t; n < copied.length && (t = cq.poll()) != null; ) {
                    copied[n++] = t;
                }
                keeper = n == 0 && keep ? me : null;
                return n;
            } finally {
                inside.decrementAndGet();
            }
        }

        @Override
        public void letGo() {
            keeper = null;
        }

        @Override
        public int pollOrWait(long awaitMillis) {
            throw new AssertionError("busy-poll does not wait");
        }

        @Override
        public void dispatch(int n) {
            enter("dispatch");
            try {
                if (keeper != null) {
                    violation.compareAndSet(null, "dispatch under the gate");
                }
                for (int i = 0; i < n; i++) {
                    if (dispatched.getAndIncrement(copied[i]) != 0) {
                        violation.compareAndSet(null, "token " + copied[i] + " dispatched twice");
                    }
                }
            } finally {
                inside.decrementAndGet();
            }
        }

        @Override
        public boolean stopping() {
            return stopping;
        }

        @Override
        public int outstandingCalls() {
            return 0;
        }

        @Override
        public void failed(RuntimeException e) {
            violation.compareAndSet(null, "failed: " + e);
        }
    }

    @Test
    void callersAndThePollerTakeTheRoleInTurnAndDispatchEachCompletionOnce() throws Exception {
        int callers = 3;
        int perCaller = 3_000;
        int async = 3_000;
        int tokens = callers * perCaller + async;
        TokenCq cq = new TokenCq(tokens);
        CompletionDriver driver = new CompletionDriver(cq, true);
        Thread poller = driver.start("busy-poller-test");
        CompletableFuture<?>[] runs = new CompletableFuture<?>[callers + 1];
        try {
            for (int c = 0; c < callers; c++) {
                int first = c * perCaller;
                runs[c] = CompletableFuture.runAsync(() -> {
                    for (int k = first; k < first + perCaller; k++) {
                        int token = k;
                        driver.blockingCallStarts();
                        try {
                            cq.cq.add(token); // its reply: dispatched by whoever holds the role
                            driver.pollOnCaller(() -> cq.dispatched.get(token) > 0, System.nanoTime() + FAR);
                        } finally {
                            driver.blockingCallEnds();
                        }
                        if (cq.dispatched.get(token) == 0) {
                            throw new AssertionError("caller left before its reply " + token + " was dispatched");
                        }
                    }
                }, r -> Thread.ofPlatform().start(r));
            }
            // completions no caller waits for (async replies, backward calls): the poller's
            runs[callers] = CompletableFuture.runAsync(() -> {
                for (int k = callers * perCaller; k < tokens; k++) {
                    cq.cq.add(k);
                    if ((k & 31) == 0) {
                        Thread.yield();
                    }
                }
            }, r -> Thread.ofPlatform().start(r));
            CompletableFuture.allOf(runs).get(60, TimeUnit.SECONDS);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!cq.cq.isEmpty() && System.nanoTime() - until < 0) {
                Thread.sleep(1); // the last async tokens: the poller, after its linger
            }
        } finally {
            cq.stopping = true;
            driver.wake();
            poller.join(5000);
        }
        assertFalse(poller.isAlive(), "the poller did not stop");
        assertNull(cq.violation.get());
        int missing = 0;
        for (int k = 0; k < tokens; k++) {
            missing += cq.dispatched.get(k) == 1 ? 0 : 1;
        }
        assertEquals(0, missing, "completions not dispatched exactly once");
        assertNull(cq.keeper, "the gate was kept after the poller stopped");
    }
}
