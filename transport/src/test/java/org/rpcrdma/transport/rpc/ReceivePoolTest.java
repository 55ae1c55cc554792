package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;

class ReceivePoolTest {
    private final ArrayDeque<Integer> hardware = new ArrayDeque<>();
    private int postCalls;

    private ReceivePool pool(int count, int batch) {
        return new ReceivePool(Arena.ofAuto().allocate(count * 64L), count, 64, batch, (slots, n) -> {
            postCalls++;
            for (int i = 0; i < n; i++) {
                hardware.add(slots[i]);
            }
        });
    }

    /**
     * A receive counts as posted only once ibv_post_recv returned: a sender that trusted a
     * count raised before the post (read without the pool's lock) sent while the receive for
     * its reply was not on the QP yet, and with rnr_retry 0 the reply killed the connection
     * (Throughput, 64 outstanding + backward calls, busy-poll, in the guest: 3 of 3 runs).
     */
    @Test
    void aReceiveBeingPostedDoesNotCountForASenderYet() throws Exception {
        assertNotCountedWhilePosting(p -> p.ensurePosted(4) ? 4 : 0);
    }

    /** The same for the completion thread's check before it dispatches (and perhaps replies). */
    @Test
    void aReceiveBeingPostedDoesNotCountForTheCompletionThreadYet() throws Exception {
        assertNotCountedWhilePosting(p -> p.replenishAfterCompletion(4));
    }

    private static void assertNotCountedWhilePosting(ToIntFunction<ReceivePool> check) throws Exception {
        CountDownLatch inPost = new CountDownLatch(1);
        CountDownLatch letPostReturn = new CountDownLatch(1);
        ReceivePool p = new ReceivePool(Arena.ofAuto().allocate(8 * 64L), 8, 64, 4, (slots, n) -> {
            inPost.countDown();
            try {
                letPostReturn.await(10, TimeUnit.SECONDS); // a slow ibv_post_recv
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CompletableFuture<Integer> posting = CompletableFuture.supplyAsync(() -> p.replenish(4), r -> Thread.ofPlatform().start(r));
        assertTrue(inPost.await(10, TimeUnit.SECONDS));
        CompletableFuture<Integer> checking = CompletableFuture.supplyAsync(() -> check.applyAsInt(p), r -> Thread.ofPlatform().start(r));
        Thread.sleep(200);
        boolean answeredDuringPost = checking.isDone();
        letPostReturn.countDown();
        assertEquals(4, posting.get(10, TimeUnit.SECONDS));
        checking.get(10, TimeUnit.SECONDS);
        assertTrue(!answeredDuringPost, "the check answered while the receives were still being posted");
        assertEquals(4, p.posted());
    }

    @Test
    void postsInBatches() {
        ReceivePool p = pool(16, 4);
        assertEquals(4, p.replenish(3));
        assertEquals(0, p.replenish(4));
        int slot = hardware.poll();
        p.completed(slot);
        assertEquals(3, p.posted());
        assertEquals(4, p.replenish(4), "a deficit of one still posts a whole batch");
        assertEquals(2, postCalls);
        p.release(slot);
        assertEquals(16, p.free() + p.posted() + p.held());
    }

    @Test
    void illegalTransitionsNeverMakeCountsNegative() {
        ReceivePool p = pool(4, 1);
        assertThrows(IllegalStateException.class, () -> p.completed(0));
        assertThrows(IllegalStateException.class, () -> p.flushed(0));
        assertThrows(IllegalStateException.class, () -> p.release(0));
        assertThrows(IllegalArgumentException.class, () -> p.release(4));
        p.replenish(1);
        int s = hardware.poll();
        p.completed(s);
        assertThrows(IllegalStateException.class, () -> p.completed(s));
        assertEquals(0, p.posted());
        assertEquals(1, p.held());
    }

    @Test
    void randomWalkKeepsInvariant() {
        ReceivePool p = pool(32, 4);
        Random r = new Random(1);
        ArrayDeque<Integer> held = new ArrayDeque<>();
        for (int i = 0; i < 100_000; i++) {
            switch (r.nextInt(4)) {
                case 0 -> p.replenish(r.nextInt(33));
                case 1 -> {
                    if (!hardware.isEmpty()) {
                        held.add(hardware.poll());
                        p.completed(held.peekLast());
                    }
                }
                case 2 -> {
                    if (!held.isEmpty()) {
                        p.release(held.poll());
                    }
                }
                default -> {
                    if (!hardware.isEmpty() && r.nextInt(10) == 0) {
                        p.flushed(hardware.poll());
                    }
                }
            }
            assertTrue(p.posted() >= 0 && p.free() >= 0 && p.held() >= 0);
            assertEquals(hardware.size(), p.posted());
            assertEquals(held.size(), p.held());
        }
    }

    /**
     * Only posting takes the pool's lock: a buffer is taken off the QP by the completion
     * thread and released by its holder on another thread, each with no lock, while a
     * sender posts more. No buffer is ever posted twice or while it is held, and once the
     * threads stop every count is exact.
     */
    @Test
    void transitionsWithoutTheLockKeepEveryBufferInOnePlace() throws Exception {
        int count = 48;
        java.util.concurrent.ConcurrentLinkedQueue<Integer> onQp = new java.util.concurrent.ConcurrentLinkedQueue<>();
        java.util.concurrent.atomic.AtomicIntegerArray where = new java.util.concurrent.atomic.AtomicIntegerArray(count);
        java.util.concurrent.atomic.AtomicReference<String> fault = new java.util.concurrent.atomic.AtomicReference<>();
        ReceivePool p = new ReceivePool(Arena.ofAuto().allocate(count * 64L), count, 64, 4, (slots, n) -> {
            for (int i = 0; i < n; i++) {
                if (!where.compareAndSet(slots[i], 0, 1)) { // 0 free, 1 on the QP, 2 held
                    fault.compareAndSet(null, "buffer " + slots[i] + " posted while " + where.get(slots[i]));
                }
                onQp.add(slots[i]);
            }
        });
        java.util.concurrent.ConcurrentLinkedQueue<Integer> held = new java.util.concurrent.ConcurrentLinkedQueue<>();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        p.replenish(16);
        Thread completions = new Thread(() -> {
            while (!stop.get()) {
                Integer s = onQp.poll();
                if (s != null) {
                    where.set(s, 2);
                    p.completed(s);
                    held.add(s);
                    p.replenishAfterCompletion(16);
                }
            }
        });
        Thread holder = new Thread(() -> {
            while (!stop.get()) {
                Integer s = held.poll();
                if (s != null) {
                    where.set(s, 0); // ORDER: before release, after which it may be posted again
                    p.release(s);
                }
            }
        });
        Thread sender = new Thread(() -> {
            Random r = new Random(2);
            while (!stop.get()) {
                p.ensurePosted(1 + r.nextInt(24));
            }
        });
        java.util.List<Throwable> thrown = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        for (Thread t : new Thread[] {completions, holder, sender}) {
            t.setUncaughtExceptionHandler((th, e) -> thrown.add(e));
            t.start();
        }
        Thread.sleep(500);
        stop.set(true);
        for (Thread t : new Thread[] {completions, holder, sender}) {
            t.join(10_000);
        }
        assertEquals(java.util.List.of(), thrown);
        assertEquals(null, fault.get());
        assertEquals(onQp.size(), p.posted());
        assertEquals(held.size(), p.held());
        assertEquals(count, p.free() + p.posted() + p.held());
    }

    /** Once the QP is gone nothing counts as posted, a late completion is refused and nothing is posted again. */
    @Test
    void afterShutdownNothingIsPostedAndALateCompletionIsRefused() {
        ReceivePool p = pool(4, 1);
        p.replenish(3);
        int held = hardware.poll();
        p.completed(held);
        int late = hardware.poll();
        p.shutdown();
        assertEquals(0, p.posted());
        assertEquals(3, p.free(), "the posted buffers are free again");
        assertThrows(IllegalStateException.class, () -> p.completed(late));
        assertEquals(0, p.replenish(4));
        assertTrue(!p.ensurePosted(1));
        p.release(held);
        assertEquals(4, p.free());
        assertEquals(0, p.held());
    }

    @Test
    void failedPostLeavesBuffersFree() {
        ReceivePool p = new ReceivePool(Arena.ofAuto().allocate(256), 4, 64, 2, (s, n) -> {
            throw new IllegalStateException("qp in error");
        });
        assertThrows(IllegalStateException.class, () -> p.replenish(2));
        assertEquals(0, p.posted());
        assertEquals(4, p.free());
    }

    @Test
    void aMessageViewIsMadeOncePerPlaceAndLengthInItsSlot() {
        ReceivePool p = pool(4, 2);
        java.lang.foreign.MemorySegment v = p.view(1, 28, 12);
        assertEquals(p.buffer(1).address() + 28, v.address());
        assertEquals(12, v.byteSize());
        assertTrue(v == p.view(1, 28, 12), "same place and length: the same view, no new slice");
        java.lang.foreign.MemorySegment longer = p.view(1, 28, 20);
        assertEquals(20, longer.byteSize());
        assertEquals(p.buffer(1).address() + 28, longer.address());
        java.lang.foreign.MemorySegment moved = p.view(1, 36, 20);
        assertEquals(p.buffer(1).address() + 36, moved.address());
        java.lang.foreign.MemorySegment other = p.view(2, 36, 20);
        assertEquals(p.buffer(2).address() + 36, other.address(), "each slot has its own view");
        assertThrows(IndexOutOfBoundsException.class, () -> p.view(1, 60, 8), "a view never leaves its buffer");
    }
}
