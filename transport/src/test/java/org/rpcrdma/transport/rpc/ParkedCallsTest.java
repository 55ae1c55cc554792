package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.Xdr;

/** Calls waiting for a connection: each still ends at its own deadline. */
class ParkedCallsTest {
    /** An ONC RPC CALL message of 40 bytes with {@code xid}. */
    static MemorySegment call(int xid) {
        MemorySegment m = MemorySegment.ofArray(new byte[40]);
        Xdr.putInt(m, 0, xid);
        Xdr.putInt(m, 4, OncRpc.CALL);
        return m;
    }

    /**
     * A call sent on a connection (its deadline swept by that connection's requester), then
     * handed over when the connection was lost, waits for the next one: with no next
     * connection, it fails at its own deadline, not never (a reconnecting client, or a
     * server's backchannel whose client does not come back, with no wait limit).
     */
    @Test
    void aCallHandedOverByALostConnectionEndsAtItsOwnDeadline() throws Exception {
        ParkedCalls parked = new ParkedCalls("test owner", 0, "");
        CallRequest c = CallRequest.issue(call(0x51), true);
        CallFuture f = c.future();
        c.deadline("lost connection", TimeUnit.MILLISECONDS.toNanos(200), false); // as a requester's call
        long start = System.nanoTime();
        c.detach(); // the hand-over (CallHandOver)
        parked.park(List.of(c));
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS),
                "a parked call outlived its 200 ms timeout");
        assertInstanceOf(CallTimeoutException.class, e.getCause());
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(ms >= 150 && ms < 5_000, "ended after " + ms + " ms, its timeout 200 ms");
        assertEquals(0, parked.size(), "an expired call no longer counts as waiting");
    }

    /** The deadline runs from the call's start: time spent on the lost connection counts. */
    @Test
    void timeOnTheLostConnectionCountsTowardsTheDeadline() throws Exception {
        ParkedCalls parked = new ParkedCalls("test owner", 0, "");
        CallRequest c = CallRequest.issue(call(0x52), true);
        CallFuture f = c.future();
        c.deadline("lost connection", TimeUnit.MILLISECONDS.toNanos(600), false);
        long start = System.nanoTime();
        c.deadline.at(start); // a requester's sweep stamped it
        Thread.sleep(400); // outstanding on the connection that is then lost
        c.detach();
        parked.park(List.of(c));
        assertInstanceOf(CallTimeoutException.class,
                assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS)).getCause());
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(ms < 1_000, "ended " + ms + " ms after its start; its timeout 600 ms ran from there");
    }
}
