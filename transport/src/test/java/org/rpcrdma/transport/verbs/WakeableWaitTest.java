package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rpcrdma.bindings.LibcCalls;

/**
 * The channels' wait on the host: another eventfd stands in for the channel's fd (both are
 * plain pollable fds), so the wait's logic is checked without a device.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WakeableWaitTest {
    private static final int EFD_NONBLOCK = 04000;

    private int channelFd;
    private final Arena arena = Arena.ofConfined();
    /** The waits' memory, as their channel's arena holds it (a waiter may be another thread). */
    private final Arena waits = Arena.ofShared();

    @BeforeEach
    void openChannelStandIn() {
        channelFd = LibcCalls.eventfd(0, EFD_NONBLOCK);
        assertTrue(channelFd >= 0);
    }

    @AfterEach
    void closeChannelStandIn() {
        assertEquals(0, LibcCalls.close(channelFd));
        arena.close();
        waits.close();
    }

    private void makeReadable() {
        MemorySegment one = arena.allocate(ValueLayout.JAVA_LONG);
        one.set(ValueLayout.JAVA_LONG, 0, 1L);
        assertEquals(8, LibcCalls.write(channelFd, one, 8));
    }

    @Test
    void readableFdEndsTheWaitWithTrue() {
        try (WakeableWait w = new WakeableWait(channelFd, waits)) {
            assertFalse(w.await(WakeableWait.deadline(0)), "nothing to read yet");
            makeReadable();
            long t0 = System.nanoTime();
            assertTrue(w.await(WakeableWait.deadline(60_000)));
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(1));
        }
    }

    @Test
    void timeoutEndsTheWaitOnTimeWithFalse() {
        try (WakeableWait w = new WakeableWait(channelFd, waits)) {
            long t0 = System.nanoTime();
            assertFalse(w.await(WakeableWait.deadline(200)));
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(took >= 199 && took < 2000, () -> "a 200 ms wait took " + took + " ms");
            assertFalse(w.await(WakeableWait.deadline(-5)), "a negative timeout only checks");
        }
    }

    @Test
    void wakeEndsAWaitThatSleptUntilThenAndEveryLaterOne() throws Exception {
        try (WakeableWait w = new WakeableWait(channelFd, waits)) {
            CompletableFuture<Integer> tid = new CompletableFuture<>();
            CompletableFuture<Boolean> got = new CompletableFuture<>();
            Thread.ofPlatform().name("waiter").start(() -> {
                tid.complete(ProcessProbe.gettid());
                got.complete(w.await(WakeableWait.deadline(60_000)));
            });
            int t = tid.get(10, TimeUnit.SECONDS);
            Thread.sleep(200); // into poll(2)
            long before = ProcessProbe.voluntarySwitches(t);
            Thread.sleep(1000); // the span watched
            long woke = ProcessProbe.voluntarySwitches(t) - before;
            assertFalse(got.isDone());
            assertTrue(woke <= 1, () -> "the waiter woke " + woke + " times in 1 s");
            long t0 = System.nanoTime();
            w.wake();
            assertFalse(got.get(10, TimeUnit.SECONDS));
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(1));
            makeReadable(); // woken outranks readable: the owner is stopping
            assertFalse(w.await(WakeableWait.deadline(60_000)));
            w.wake(); // idempotent
        }
    }

    @Test
    void closeReleasesTheEventfdOnceAndWakeAfterCloseDoesNothing() {
        long fds = ProcessProbe.fds();
        WakeableWait w = new WakeableWait(channelFd, waits);
        assertEquals(fds + 1, ProcessProbe.fds());
        w.close();
        w.close();
        assertEquals(fds, ProcessProbe.fds());
        w.wake(); // a closed eventfd's number may be another file's by now: nothing is written
        assertThrows(IllegalStateException.class, () -> w.await(WakeableWait.deadline(0)));
    }
}
