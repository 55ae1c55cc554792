package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A thread waiting on a completion or event channel sleeps in the kernel for the whole
 * wait (it is not woken on a timer to look for close: a client's two waiting threads per
 * connection, at 1,000 connections, were 40,000 wake-ups a second), and close wakes it at
 * once, with the wait's "closed" answer (null).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ChannelWaitVerbsTest extends VerbsTestBase {
    /** Longest a woken waiter may take to return (the guest shares two host cores with others). */
    private static final long WAKE_MILLIS = 1000;
    /** How long the waiter is watched while it waits. */
    private static final long WATCH_MILLIS = 2000;

    @Test
    void completionChannelWaiterSleepsUntilCloseWakesIt() throws Exception {
        try (Device dev = Device.open(deviceName())) {
            CompletionChannel ch = dev.createCompletionChannel();
            try {
                waiterSleepsUntilClosed(ch::await, ch);
            } finally {
                ch.close();
            }
        }
    }

    @Test
    void eventChannelWaiterSleepsUntilCloseWakesIt() throws Exception {
        EventChannel ch = new EventChannel();
        try {
            waiterSleepsUntilClosed(ch::poll, ch);
        } finally {
            ch.close();
        }
    }

    @Test
    void completionChannelStopWaitingWakesTheWaiterAndEveryLaterWait() throws Exception {
        try (Device dev = Device.open(deviceName()); CompletionChannel ch = dev.createCompletionChannel()) {
            CompletableFuture<Integer> tid = new CompletableFuture<>();
            CompletableFuture<Object> got = new CompletableFuture<>();
            Thread.ofPlatform().name("channel-waiter").start(() -> waitOn(ch::await, tid, got));
            awaitAsleep(tid.get(10, TimeUnit.SECONDS));
            long t0 = System.nanoTime();
            ch.stopWaiting();
            assertNull(got.get(10, TimeUnit.SECONDS));
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(took < WAKE_MILLIS, () -> "the waiter returned " + took + " ms after stopWaiting");
            // the channel is still open, and a later wait returns at once too
            long t1 = System.nanoTime();
            assertNull(ch.await(60_000));
            assertTrue(System.nanoTime() - t1 < TimeUnit.MILLISECONDS.toNanos(WAKE_MILLIS), "a wait after stopWaiting slept");
        }
    }

    @Test
    void eventChannelStopWaitingWakesTheWaiterAndEveryLaterWait() throws Exception {
        try (EventChannel ch = new EventChannel()) {
            CompletableFuture<Integer> tid = new CompletableFuture<>();
            CompletableFuture<Object> got = new CompletableFuture<>();
            Thread.ofPlatform().name("channel-waiter").start(() -> waitOn(ch::poll, tid, got));
            awaitAsleep(tid.get(10, TimeUnit.SECONDS));
            long t0 = System.nanoTime();
            ch.stopWaiting();
            assertNull(got.get(10, TimeUnit.SECONDS));
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(took < WAKE_MILLIS, () -> "the waiter returned " + took + " ms after stopWaiting");
            long t1 = System.nanoTime();
            assertNull(ch.poll(60_000));
            assertTrue(System.nanoTime() - t1 < TimeUnit.MILLISECONDS.toNanos(WAKE_MILLIS), "a wait after stopWaiting slept");
        }
    }

    @Test
    void aWaitWithAShortTimeoutStillEndsOnTime() {
        try (Device dev = Device.open(deviceName()); CompletionChannel ch = dev.createCompletionChannel();
             EventChannel ec = new EventChannel()) {
            for (LongFunction<Object> wait : java.util.List.<LongFunction<Object>>of(ch::await, ec::poll)) {
                long t0 = System.nanoTime();
                assertNull(wait.apply(300));
                long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertTrue(took >= 290 && took < 300 + WAKE_MILLIS, () -> "a 300 ms wait took " + took + " ms");
                assertNull(wait.apply(0), "a wait of 0 only checks");
            }
        }
    }

    /**
     * Starts a thread in {@code wait.apply(60_000)}; checks that it does not wake for
     * {@link #WATCH_MILLIS}, then that {@code ch.close()} makes it return null within
     * {@link #WAKE_MILLIS}.
     */
    private static void waiterSleepsUntilClosed(LongFunction<Object> wait, AutoCloseable ch) throws Exception {
        CompletableFuture<Integer> tid = new CompletableFuture<>();
        CompletableFuture<Object> got = new CompletableFuture<>();
        Thread.ofPlatform().name("channel-waiter").start(() -> waitOn(wait, tid, got));
        int t = tid.get(10, TimeUnit.SECONDS);
        awaitAsleep(t);
        long before = ProcessProbe.voluntarySwitches(t);
        Thread.sleep(WATCH_MILLIS); // the span watched, not a wait for a result
        long woke = ProcessProbe.voluntarySwitches(t) - before;
        assertEquals(false, got.isDone(), "the 60 s wait returned early");
        long t0 = System.nanoTime();
        ch.close();
        assertNull(got.get(10, TimeUnit.SECONDS));
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(woke <= 2, () -> "the waiting thread woke " + woke + " times in " + WATCH_MILLIS + " ms");
        assertTrue(took < WAKE_MILLIS, () -> "the waiter returned " + took + " ms after close");
    }

    private static void waitOn(LongFunction<Object> wait, CompletableFuture<Integer> tid, CompletableFuture<Object> got) {
        tid.complete(ProcessProbe.gettid());
        try {
            got.complete(wait.apply(60_000));
        } catch (Throwable e) {
            got.completeExceptionally(e);
        }
    }

    /** Until the thread sleeps in the kernel (state S), as it does inside poll(2). */
    private static void awaitAsleep(int tid) throws Exception {
        java.nio.file.Path stat = java.nio.file.Path.of("/proc/self/task", Integer.toString(tid), "stat");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - deadline < 0) {
            String s = java.nio.file.Files.readString(stat);
            if (s.substring(s.lastIndexOf(')') + 2).startsWith("S")) {
                Thread.sleep(100); // past class loading and the first native call on the way in
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("thread " + tid + " never slept");
    }
}
