package org.rpcrdma.transport.link;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The busy-poll driver's loop over a CQ that no device backs (what it asks of the CQ, not the device). */
class CompletionDriverTest {

    /** Counts polls; completions never come. */
    private static final class CountingCq implements CompletionDriver.Cq {
        final AtomicLong polls = new AtomicLong();
        final AtomicBoolean idle = new AtomicBoolean(true);
        volatile boolean stopping;

        @Override
        public int pollOnly() {
            polls.incrementAndGet();
            return 0;
        }

        @Override
        public int pollOrWait(long awaitMillis) {
            polls.incrementAndGet();
            return 0;
        }

        @Override
        public void dispatch(int n) {
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
            return idle.get();
        }
    }

    @Test
    void aBusyPollerWithNoConnectionParksInsteadOfSpinningAndPollsOnceOneComes() throws Exception {
        CountingCq cq = new CountingCq();
        Thread t = new CompletionDriver(cq, true).start("driver-test");
        try {
            Thread.sleep(200);
            long idlePolls = cq.polls.get();
            // A spinning thread polls millions of times in 200 ms; parking 1 ms at a time, none.
            assertTrue(idlePolls == 0, "an idle busy poller polled " + idlePolls + " times in 200 ms");
            cq.idle.set(false);
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (cq.polls.get() < 1000 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertTrue(cq.polls.get() >= 1000, "a busy poller with a connection polls: " + cq.polls.get());
        } finally {
            cq.stopping = true;
            t.join(5000);
        }
    }
}
