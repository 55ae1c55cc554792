package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.link.Link;

/** A future-shaped call's wait: who took the reply is counted once per reply. */
class CallFutureTest {
    /**
     * A call issued for retry, its future waited on through a link whose caller-side poll
     * delivers the reply on its {@code deliverOn}-th poll (an earlier poll returns as a wait
     * that reached its deadline does), and the counters the wait reports to.
     */
    private record Waited(CallRequest request, CallFuture future, Link link, AtomicInteger polls, StatsCounters stats) {
        static Waited deliveringOnPoll(int xid, int deliverOn) {
            CallRequest c = CallRequest.issue(ParkedCallsTest.call(xid), true);
            CallFuture f = c.future();
            AtomicInteger polls = new AtomicInteger();
            Link link = new Link() {
                @Override
                public void postSend(int slot, MemorySegment buffer, int length, boolean signalled) {}

                @Override
                public void postReceives(int[] slots, int count) {}

                @Override
                public void disconnect() {}

                @Override
                public boolean pollOnCaller(BooleanSupplier done, long deadlineNanos) {
                    if (polls.incrementAndGet() == deliverOn) {
                        f.message(c, null);
                    }
                    return true;
                }
            };
            StatsCounters stats = new StatsCounters();
            f.pollOn(link, stats);
            return new Waited(c, f, link, polls, stats);
        }

        long counted() {
            return stats.repliesTakenByCaller.sum() + stats.repliesHandedOff.sum();
        }
    }

    /**
     * callAndWait with retry waits through the call's future. Once its wait reached the
     * deadline it does not poll again in the future's own get: a reply taken there was counted
     * twice (in the future's wait and in callAndWait's), and came after the deadline anyway.
     */
    @Test
    void aWaitThatReachedItsDeadlinePollsNoMoreAndCountsNoReplyTwice() throws Exception {
        Waited w = Waited.deliveringOnPoll(0x61, 2);
        try {
            CallFuture.await(w.future(), w.link(), 0x61, System.nanoTime(), 1_000_000, "test", w.stats());
        } catch (CallTimeoutException expected) {
            // the deadline had passed when the wait returned
        }
        assertTrue(w.counted() <= 1, "one reply counted " + w.counted() + " times");
        assertEquals(1, w.polls().get(), "polls after the wait reached its deadline");
    }

    /** The usual case: the reply taken in callAndWait's own wait counts once. */
    @Test
    void aReplyTakenInTheWaitIsCountedOnce() throws Exception {
        Waited w = Waited.deliveringOnPoll(0x62, 1);
        CallFuture.await(w.future(), w.link(), 0x62, System.nanoTime() + 1_000_000_000L, 1_000_000_000L, "test",
                w.stats());
        assertEquals(1, w.counted());
    }
}
