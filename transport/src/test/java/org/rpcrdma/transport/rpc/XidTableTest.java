package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class XidTableTest {
    @Test
    void sameXidInBothDirections() {
        var s = new Object() {
            final java.util.concurrent.atomic.LongAdder unmatchedForwardReplies = new java.util.concurrent.atomic.LongAdder();
            final java.util.concurrent.atomic.LongAdder unmatchedBackwardReplies = new java.util.concurrent.atomic.LongAdder();
        };
        XidTable<String> fwd = new XidTable<>(Direction.FORWARD, 4, s.unmatchedForwardReplies::add);
        XidTable<String> bwd = new XidTable<>(Direction.BACKWARD, 4, s.unmatchedBackwardReplies::add);
        fwd.put(42, "f");
        bwd.put(42, "b");
        assertEquals("b", bwd.match(42));
        assertEquals("f", fwd.match(42));
        assertNull(fwd.match(42));
        assertEquals(1, s.unmatchedForwardReplies.sum());
        assertEquals(0, s.unmatchedBackwardReplies.sum());
    }

    @Test
    void duplicateAndOverflowRejected() {
        XidTable<String> t = new XidTable<>(Direction.FORWARD, 2, n -> {});
        t.put(1, "a");
        assertThrows(IllegalStateException.class, () -> t.put(1, "b"));
        t.put(2, "b");
        assertThrows(IllegalStateException.class, () -> t.put(3, "c"));
    }

    @Test
    void matchesAgainstModelUnderRandomChurn() {
        Random r = new Random(7);
        XidTable<Integer> t = new XidTable<>(Direction.FORWARD, 64, n -> {});
        Map<Integer, Integer> model = new HashMap<>();
        for (int i = 0; i < 200_000; i++) {
            int xid = r.nextInt(200) - 100; // small key space forces collisions
            if (model.size() < 64 && r.nextBoolean() && !model.containsKey(xid)) {
                t.put(xid, i);
                model.put(xid, i);
            } else {
                assertEquals(model.remove(xid), t.remove(xid));
            }
            assertEquals(model.size(), t.size());
        }
        for (var e : model.entrySet()) {
            assertTrue(t.contains(e.getKey()));
        }
        assertEquals(model.size(), t.removeAll().size());
        assertEquals(0, t.size());
    }

    @Test
    void removeAllReturnsEverything() {
        XidTable<Object> t = new XidTable<>(Direction.BACKWARD, 3, n -> {});
        Object o = new Object();
        t.put(-1, o);
        assertSame(o, t.removeAll().get(0));
    }
}
