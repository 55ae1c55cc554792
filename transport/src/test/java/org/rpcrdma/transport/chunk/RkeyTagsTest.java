package org.rpcrdma.transport.chunk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A window's rkey after each bind (RFC 8166 §4.4, §8): its index kept, its 8-bit tag never
 * the previous one and not predictable from it (not incremented, as ibv_inc_rkey does).
 */
class RkeyTagsTest {
    @Test
    void eachBindTakesAnUnpredictableTagButKeepsTheIndex() {
        RkeyTags tags = new RkeyTags();
        int rkey = 0x12345600;
        int successors = 0;
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            int next = tags.renew(rkey);
            assertEquals(rkey & ~0xff, next & ~0xff, "a type-2 bind keeps the window's index");
            assertNotEquals(rkey, next, "the previous bind's rkey dies");
            if ((next & 0xff) == ((rkey + 1) & 0xff)) {
                successors++;
            }
            seen.add(next & 0xff);
            rkey = next;
        }
        assertTrue(successors < 200, successors + " of 10000 binds took the incremented tag");
        assertEquals(256, seen.size(), "every tag comes up");
    }
}
