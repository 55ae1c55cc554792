package org.rpcrdma.transport.endpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A lost connection's release runs on a thread of its own: whoever hands it over (the
 * reconnect, the server's rdma_cm thread) goes on at once however long the release blocks
 * (rdma_destroy_qp on Soft-RoCE: close to a minute), each release runs once, and a closing
 * endpoint can wait for those in progress.
 */
class TeardownsTest {
    @Test
    void aBlockedReleaseDoesNotHoldUpItsCallerAndIsAwaitedAtClose() throws Exception {
        Teardowns t = new Teardowns("test-teardown");
        CountDownLatch destroying = new CountDownLatch(1);
        CountDownLatch kernelReturns = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        long t0 = System.nanoTime();
        t.release(() -> {
            runs.incrementAndGet();
            destroying.countDown();
            try {
                kernelReturns.await(); // a destroy blocked in the kernel
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long handOver = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(destroying.await(10, TimeUnit.SECONDS), "the release did not start");
        assertTrue(handOver < 5000, "handing a release over took " + handOver + " ms");
        assertEquals(1, t.inProgress());
        assertFalse(t.await(100), "await returned while the release was still blocked");
        kernelReturns.countDown();
        assertTrue(t.await(10_000), "the release did not end");
        assertEquals(0, t.inProgress());
        assertEquals(1, runs.get());
    }

    @Test
    void aFailingReleaseIsCountedDoneAndOthersGoOn() throws Exception {
        Teardowns t = new Teardowns("test-teardown");
        AtomicInteger ran = new AtomicInteger();
        t.release(() -> {
            throw new IllegalStateException("test: ibv_destroy_qp failed");
        });
        t.release(ran::incrementAndGet);
        assertTrue(t.await(10_000));
        assertEquals(0, t.inProgress());
        assertEquals(1, ran.get());
    }
}
