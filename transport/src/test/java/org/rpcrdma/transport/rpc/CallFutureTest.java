package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/** A future-shaped call's wait: who took the reply is counted once per reply. */
class CallFutureTest {
    private static MemorySegment call(int xid) {
        MemorySegment m = MemorySegment.ofArray(new byte[40]);
        Xdr.putInt(m, 0, xid);
        Xdr.putInt(m, 4, OncRpc.CALL);
        return m;
    }

    /**
     * A link whose caller-side poll delivers the reply on its {@code deliverOn}-th poll
     * (an earlier poll returns as a wait that reached its deadline does).
     */
    private static Link deliveringOnPoll(int deliverOn, CallRequest c, CallFuture f, AtomicInteger polls) {
        return new Link() {
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
    }

    /**
     * callAndWait with retry waits through the call's future. Once its wait reached the
     * deadline it does not poll again in the future's own get: a reply taken there was counted
     * twice (in the future's wait and in callAndWait's), and came after the deadline anyway.
     */
    @Test
    void aWaitThatReachedItsDeadlinePollsNoMoreAndCountsNoReplyTwice() throws Exception {
        CallRequest c = CallRequest.issue(call(0x61), true);
        CallFuture f = c.future();
        AtomicInteger polls = new AtomicInteger();
        Link link = deliveringOnPoll(2, c, f, polls);
        StatsCounters stats = new StatsCounters();
        f.pollOn(link, stats);
        try {
            CallFuture.await(f, link, 0x61, System.nanoTime(), 1_000_000, "test", stats);
        } catch (CallTimeoutException expected) {
            // the deadline had passed when the wait returned
        }
        long counted = stats.repliesTakenByCaller.sum() + stats.repliesHandedOff.sum();
        assertTrue(counted <= 1, "one reply counted " + counted + " times");
        assertEquals(1, polls.get(), "polls after the wait reached its deadline");
    }

    /** The usual case: the reply taken in callAndWait's own wait counts once. */
    @Test
    void aReplyTakenInTheWaitIsCountedOnce() throws Exception {
        CallRequest c = CallRequest.issue(call(0x62), true);
        CallFuture f = c.future();
        AtomicInteger polls = new AtomicInteger();
        Link link = deliveringOnPoll(1, c, f, polls);
        StatsCounters stats = new StatsCounters();
        f.pollOn(link, stats);
        CallFuture.await(f, link, 0x62, System.nanoTime() + 1_000_000_000L, 1_000_000_000L, "test", stats);
        assertEquals(1, stats.repliesTakenByCaller.sum() + stats.repliesHandedOff.sum());
    }
}
