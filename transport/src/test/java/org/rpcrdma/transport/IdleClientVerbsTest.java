package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rpcrdma.transport.ConnectionLoopbackTest.callMsg;
import static org.rpcrdma.transport.ConnectionLoopbackTest.results;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.transport.link.VerbsLink;
import org.rpcrdma.transport.verbs.ProcessProbe;

/**
 * An idle client connection costs no wake-ups: its completion poller (event mode, the
 * default) and its rdma_cm thread sleep in the kernel until something arrives, however long
 * (a JVM with 1,000 client connections had 2,000 threads waking 20 times a second each);
 * and its close still stops both at once.
 */
@Tag("verbs")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class IdleClientVerbsTest extends OneClientFixture {
    /** The kernel's name of the client's poller ("rpcrdma-client-cq") and cm thread ("rpcrdma-client-cm"). */
    private static final String CLIENT_THREADS = "rpcrdma-client-";
    private static final long WATCH_MILLIS = 2000;

    @Test
    void idleClientThreadsSleepAndCloseStopsThemAtOnce() throws Exception {
        connect(EndpointVerbsTest.OPTS);
        byte[] args = {1, 2, 3, 4};
        assertArrayEquals(args, results(client.call(callMsg(7, 1, args)).get(60, TimeUnit.SECONDS)));
        List<Integer> tids = ProcessProbe.threadsNamed(CLIENT_THREADS);
        assertEquals(2, tids.size(), () -> "the client's poller and cm thread, found " + tids);
        Thread.sleep(300); // the poller lingers for a blocking caller's next call (1 ms) before it waits
        long before = ProcessProbe.voluntarySwitches(tids);
        Thread.sleep(WATCH_MILLIS); // the span watched, not a wait for a result
        long woke = ProcessProbe.voluntarySwitches(tids) - before;
        assertTrue(woke <= 4, () -> "the idle client's two threads woke " + woke + " times in " + WATCH_MILLIS + " ms");

        long freedPast = VerbsLink.pollersFreedPast();
        client.close();
        assertEquals(freedPast, VerbsLink.pollersFreedPast(), "the poller did not stop within 2 s of its link's destroy");
        // close joined both threads; the kernel's task goes a moment after the Java thread ends
        assertTrue(noClientThreadsWithin(5000),
                () -> "client threads still run after close: " + ProcessProbe.threadsNamed(CLIENT_THREADS));
    }

    private static boolean noClientThreadsWithin(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!ProcessProbe.threadsNamed(CLIENT_THREADS).isEmpty()) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }
}
