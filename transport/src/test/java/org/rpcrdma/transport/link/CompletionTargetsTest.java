package org.rpcrdma.transport.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The qp_num dispatch table of a shared completion queue, and the retirement of a destroyed QP's number. */
class CompletionTargetsTest {

    @Test
    void eachQpNumberFindsItsOwnTargetAmongAThousand() {
        CompletionTargets<String> t = new CompletionTargets<>();
        for (int i = 0; i < 1000; i++) {
            assertTrue(t.register(0x11 + i * 7, "qp" + i));
        }
        assertEquals(1000, t.live());
        for (int i = 0; i < 1000; i++) {
            assertEquals("qp" + i, t.get(0x11 + i * 7));
        }
        assertNull(t.get(0x10), "a number never registered");
        assertThrows(IllegalStateException.class, () -> t.register(0x11, "again"), "a live QP's number");
    }

    @Test
    void anUnregisteredNumberIsDroppedAndStaysTakenUntilTheQueueDrainedAfterItsQpWasDestroyed() {
        CompletionTargets<String> t = new CompletionTargets<>();
        assertTrue(t.register(42, "old"));
        assertTrue(t.register(43, "other"));
        t.unregister(42, "old");
        assertNull(t.get(42), "its completions are dropped from now on");
        assertEquals("other", t.get(43));
        assertEquals(1, t.live());
        assertEquals(1, t.retired());

        t.drained(100);
        assertFalse(t.register(42, "new"), "its QP not destroyed yet: completions may still come");
        t.destroyed(42, 7); // 7 polls had begun when the QP was destroyed
        t.drained(7);
        assertFalse(t.register(42, "new"), "an empty poll begun before the QP was destroyed proves nothing");
        t.drained(8);
        assertEquals(0, t.retired());
        assertTrue(t.register(42, "new"), "free once a later poll found the queue empty");
        assertEquals("new", t.get(42));
        assertEquals("other", t.get(43));
    }

    @Test
    void unregisteringAnotherTargetOfTheSameNumberChangesNothing() {
        CompletionTargets<String> t = new CompletionTargets<>();
        assertTrue(t.register(5, "a"));
        t.unregister(5, "b");
        assertEquals("a", t.get(5));
        assertEquals(0, t.retired());
    }

    @Test
    void aFailedQueueReachesEveryLiveTargetButNoRetiredOne() {
        CompletionTargets<String> t = new CompletionTargets<>();
        String[] qps = new String[6];
        for (int i = 1; i <= 5; i++) {
            qps[i] = "qp" + i;
            assertTrue(t.register(i, qps[i]));
        }
        t.unregister(3, qps[3]); // the very target registered (compared by identity)
        List<String> seen = new ArrayList<>();
        t.forEach(seen::add);
        seen.sort(null);
        assertEquals(List.of("qp1", "qp2", "qp4", "qp5"), seen);
        assertSame(null, t.get(3));
    }
}
