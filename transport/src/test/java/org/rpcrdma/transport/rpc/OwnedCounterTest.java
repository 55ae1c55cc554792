package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

class OwnedCounterTest {
    @Test
    void countsEveryAddOfTheOwnerAndOfOtherThreadsAtOnce() throws Exception {
        LongAdder c = new OwnedCounter();
        c.increment(); // this thread owns it now
        int threads = 4;
        int perThread = 200_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> others = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                for (int i = 0; i < perThread; i++) {
                    c.increment();
                }
            });
            th.start();
            others.add(th);
        }
        go.countDown();
        for (int i = 0; i < perThread; i++) {
            c.add(2);
        }
        for (Thread th : others) {
            th.join();
        }
        assertEquals(1 + 2L * perThread + (long) threads * perThread, c.sum());
        assertEquals(c.sum(), c.longValue());
        assertEquals(Long.toString(c.sum()), c.toString());
    }

    @Test
    void resetClearsBothHalves() throws Exception {
        LongAdder c = new OwnedCounter();
        c.add(5);
        Thread other = new Thread(() -> c.add(7));
        other.start();
        other.join();
        assertEquals(12, c.sumThenReset());
        assertEquals(0, c.sum());
        c.decrement();
        assertEquals(-1, c.sum());
    }
}
