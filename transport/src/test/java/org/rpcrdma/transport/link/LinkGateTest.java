package org.rpcrdma.transport.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.rpcrdma.transport.LinkClosedException;

/**
 * The link's gate without a device: the rules that keep native memory from being used after
 * free (posts refused once destroy began, polls give up, free waits for every reader).
 */
class LinkGateTest {
    private final LinkGate gate = new LinkGate(what -> new LinkClosedException("refused " + what));

    @Test
    void livePostsAndPollsGetTheReadSide() {
        long s = gate.enter("send");
        assertNotEquals(0, s);
        gate.exit(s);
        long p = gate.enterUnlessStopping();
        assertNotEquals(0, p);
        gate.exit(p);
        AtomicBoolean ran = new AtomicBoolean();
        gate.runUnlessFreed(() -> ran.set(true));
        assertTrue(ran.get());
    }

    @Test
    void stoppingRefusesPostsAndPollsButNotReleases() {
        gate.stop();
        assertTrue(gate.stopping());
        LinkClosedException e = assertThrows(LinkClosedException.class, () -> gate.enter("send"));
        assertEquals("refused send", e.getMessage());
        assertEquals(0, gate.enterUnlessStopping());
        // a withdrawal or release may still run until everything is freed
        long w = gate.enterUnlessFreed();
        assertNotEquals(0, w);
        gate.exit(w);
    }

    @Test
    void afterFreeNothingRuns() {
        gate.stop();
        assertEquals("done", gate.free(() -> "done"));
        assertThrows(LinkClosedException.class, () -> gate.enter("receive"));
        assertEquals(0, gate.enterUnlessStopping());
        assertEquals(0, gate.enterUnlessFreed());
        AtomicBoolean ran = new AtomicBoolean();
        gate.runUnlessFreed(() -> ran.set(true));
        assertFalse(ran.get());
    }

    @Test
    void freeWaitsForAReaderInProgress() throws Exception {
        long s = gate.enter("send");
        CountDownLatch freeing = new CountDownLatch(1);
        AtomicBoolean freed = new AtomicBoolean();
        Thread destroyer = Thread.ofPlatform().start(() -> {
            gate.stop();
            freeing.countDown();
            gate.free(() -> {
                freed.set(true);
                return null;
            });
        });
        assertTrue(freeing.await(10, TimeUnit.SECONDS));
        Thread.sleep(100);
        assertFalse(freed.get(), "freed while a post held the read side");
        gate.exit(s);
        destroyer.join(10_000);
        assertTrue(freed.get());
    }
}
