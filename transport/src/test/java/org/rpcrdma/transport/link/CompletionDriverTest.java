package org.rpcrdma.transport.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The driver's loop over a CQ that no device backs (what it asks of the CQ, not the device). */
class CompletionDriverTest {

    /**
     * Counts polls and the driver's looks at {@link #idle()} (one per turn of its loop: a
     * thread that wakes up to look again counts once per wake-up); holds completions given to
     * it until polled. Event mode's wait on the channel is a park of {@code awaitMillis}, as
     * a channel with no event would block.
     */
    private static class CountingCq implements CompletionDriver.Cq {
        final AtomicLong polls = new AtomicLong();
        final AtomicLong looks = new AtomicLong();
        final AtomicBoolean idle = new AtomicBoolean(true);
        final AtomicInteger pending = new AtomicInteger();
        final CountDownLatch dispatched = new CountDownLatch(1);
        volatile boolean stopping;

        @Override
        public int pollOnly() {
            polls.incrementAndGet();
            return pending.getAndSet(0);
        }

        @Override
        public int pollHolding() {
            return pollOnly();
        }

        @Override
        public void letGo() {
        }

        @Override
        public int pollOrWait(long awaitMillis) {
            polls.incrementAndGet();
            int n = pending.getAndSet(0);
            if (n == 0) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(awaitMillis));
            }
            return n;
        }

        @Override
        public void dispatch(int n) {
            dispatched.countDown();
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
        }

        @Override
        public boolean idle() {
            looks.incrementAndGet();
            return idle.get();
        }
    }

    @ParameterizedTest(name = "busyPoll={0}")
    @ValueSource(booleans = {true, false})
    void aPollerWithNoConnectionSleepsUntilOneIsAssignedAndThenPollsAtOnce(boolean busyPoll) throws Exception {
        CountingCq cq = new CountingCq();
        CompletionDriver driver = new CompletionDriver(cq, busyPoll);
        Thread t = driver.start("driver-test");
        try {
            Thread.sleep(200); // the time it could spin or wake up in: nothing to wait for
            long polls = cq.polls.get();
            long looks = cq.looks.get();
            // spinning: millions of polls; parking 1 ms at a time: ~200 looks; an event-mode
            // wait on the channel: a poll per wait. Sleeping until assigned: one look.
            assertEquals(0, polls, "an idle poller polled " + polls + " times in 200 ms");
            assertTrue(looks <= 2, "an idle poller woke up " + looks + " times in 200 ms");

            cq.pending.set(1); // the connection's first completion is in the CQ when it is assigned
            cq.idle.set(false);
            driver.wake();
            assertTrue(cq.dispatched.await(5, TimeUnit.SECONDS),
                    "the first completion of a connection assigned to an idle poller was not handled; polls "
                            + cq.polls.get());
        } finally {
            stop(cq, driver, t);
        }
        assertFalse(t.isAlive(), "the poller did not stop");
    }

    @ParameterizedTest(name = "busyPoll={0}")
    @ValueSource(booleans = {true, false})
    void stoppingWakesAnIdlePoller(boolean busyPoll) throws Exception {
        CountingCq cq = new CountingCq();
        CompletionDriver driver = new CompletionDriver(cq, busyPoll);
        Thread t = driver.start("driver-test");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (cq.looks.get() == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait(); // until it has looked, found no work and gone to sleep
        }
        cq.stopping = true;
        driver.wake();
        t.join(1000);
        assertFalse(t.isAlive(), "an idle poller did not stop within 1 s of its stop");
        assertEquals(0, cq.polls.get(), "an idle poller polled on its way out");
    }

    @ParameterizedTest(name = "busyPoll={0}")
    @ValueSource(booleans = {true, false})
    void aStopGivesUpOnAPollerHeldInAHandlerAndCountsIt(boolean busyPoll) throws Exception {
        CountDownLatch inHandler = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountingCq cq = new CountingCq() {
            @Override
            public void dispatch(int n) {
                inHandler.countDown();
                try {
                    release.await(); // a handler that blocks
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        cq.pending.set(1);
        cq.idle.set(false);
        CompletionDriver driver = new CompletionDriver(cq, busyPoll);
        Thread t = driver.start("driver-test");
        assertTrue(inHandler.await(5, TimeUnit.SECONDS), "the completion was not dispatched");
        long before = CompletionDriver.freedPast();
        cq.stopping = true;
        driver.awaitStopped(100);
        assertEquals(before + 1, CompletionDriver.freedPast(), "a poller held in a handler is counted once");
        release.countDown();
        t.join(5000);
        assertFalse(t.isAlive(), "the poller did not stop once its handler returned");
        driver.awaitStopped(100);
        assertEquals(before + 1, CompletionDriver.freedPast(), "a poller that stopped is not counted");
    }
    /**
     * While a blocking caller leads, the poller only wakes up to look again: every 10 ms
     * where calls from the peer may arrive (they wait for it once the callers left), every
     * 100 ms on a link where only replies come (each wake-up takes a CPU from the callers);
     * told that calls may come again, it is back to the short period.
     */
    @ParameterizedTest(name = "busyPoll={0}")
    @ValueSource(booleans = {true, false})
    void whileACallerLeadsThePollerWakesLessOftenWhereOnlyRepliesCome(boolean busyPoll) throws Exception {
        CountingCq cq = new CountingCq();
        cq.idle.set(false);
        CompletionDriver driver = new CompletionDriver(cq, busyPoll);
        driver.blockingCallStarts(); // a caller leads from the poller's first turn on
        Thread t = driver.start("driver-test");
        try {
            long calls = looksIn(cq, 500);
            assertTrue(calls >= 15, "calls may come: the poller looked " + calls + " times in 500 ms (every 10 ms: ~50)");
            driver.unsolicitedMessages(false);
            Thread.sleep(150); // the short park under way ends
            long replies = looksIn(cq, 1000);
            assertTrue(replies <= 13, "only replies come: the poller looked " + replies + " times in 1 s (every 100 ms: ~10)");
            driver.unsolicitedMessages(true);
            long again = looksIn(cq, 500);
            assertTrue(again >= 15, "calls may come again: the poller looked " + again + " times in 500 ms");
            assertEquals(0, cq.polls.get(), "it never polled while the caller led");
        } finally {
            driver.blockingCallEnds();
            stop(cq, driver, t);
        }
        assertFalse(t.isAlive(), "the poller did not stop");
    }

    /**
     * Once the last blocking caller left, the poller lingers (its next call would lead
     * again) and then takes the CQ back: it never polls while a caller leads, and polls
     * within its park plus the linger once the caller is gone.
     */
    @ParameterizedTest(name = "busyPoll={0}")
    @ValueSource(booleans = {true, false})
    void afterTheLastBlockingCallThePollerLingersThenTakesTheCqBack(boolean busyPoll) throws Exception {
        CountingCq cq = new CountingCq();
        cq.idle.set(false);
        CompletionDriver driver = new CompletionDriver(cq, busyPoll);
        driver.blockingCallStarts();
        Thread t = driver.start("driver-test");
        try {
            for (int i = 0; i < 50; i++) { // callers come and go, one always there
                driver.blockingCallStarts();
                driver.blockingCallEnds();
                Thread.sleep(2);
            }
            assertEquals(0, cq.polls.get(), "the poller polled while a caller led");
            long left = System.nanoTime();
            driver.blockingCallEnds(); // the last one leaves
            long deadline = left + TimeUnit.SECONDS.toNanos(5);
            while (cq.polls.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - left);
            assertTrue(cq.polls.get() > 0, "the poller did not take the CQ back within 5 s of the last caller");
            assertTrue(ms >= 1, "it lingered: polled " + ms + " ms after the last caller left");
        } finally {
            stop(cq, driver, t);
        }
        assertFalse(t.isAlive(), "the poller did not stop");
    }

    /** Stops the driver's poller and waits up to 5 s for its thread to end. */
    private static void stop(CountingCq cq, CompletionDriver driver, Thread t) throws InterruptedException {
        cq.stopping = true;
        driver.wake();
        t.join(5000);
    }

    /** How many times the driver looked at the CQ in the next {@code millis}. */
    private static long looksIn(CountingCq cq, long millis) throws InterruptedException {
        long before = cq.looks.get();
        Thread.sleep(millis);
        return cq.looks.get() - before;
    }
}
