package org.rpcrdma.transport.chunk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The window pool's rkey table: every lookup agrees with a HashMap through binds, rebinds
 * and withdrawals in any order, rkeys that share their home slot included (a removal in
 * the middle of a probe run must not hide the entries after it).
 */
class BoundRkeysTest {
    @Test
    void agreesWithAMapThroughRandomBindsAndWithdrawals() {
        int windows = 48;
        BoundRkeys t = new BoundRkeys(windows);
        Map<Integer, Integer> ref = new HashMap<>();
        SplittableRandom rnd = new SplittableRandom(8166);
        int[] rkeyOf = new int[windows]; // 0: window free
        for (int step = 0; step < 200_000; step++) {
            int w = rnd.nextInt(windows);
            if (rkeyOf[w] == 0) {
                // rxe-like: the window's index in the upper 24 bits, a random tag below
                int rkey = (w + 1) << 8 | rnd.nextInt(256);
                t.put(rkey, w);
                ref.put(rkey, w);
                rkeyOf[w] = rkey;
            } else {
                assertEquals(w, t.remove(rkeyOf[w]), "withdrawn rkey's window");
                ref.remove(rkeyOf[w]);
                assertEquals(-1, t.remove(rkeyOf[w]), "never withdrawn twice");
                rkeyOf[w] = 0;
            }
            int probe = (rnd.nextInt(windows) + 1) << 8 | rnd.nextInt(256);
            assertEquals(ref.getOrDefault(probe, -1), t.get(probe), "lookup of 0x" + Integer.toHexString(probe));
            assertEquals(ref.size(), t.size());
        }
        for (var e : ref.entrySet()) {
            assertEquals(e.getValue(), t.get(e.getKey()));
        }
    }

    @Test
    void aRemovalInsideAProbeRunKeepsTheRestReachable() {
        BoundRkeys t = new BoundRkeys(64);
        List<Integer> keys = new ArrayList<>();
        for (int i = 1; i <= 64; i++) {
            keys.add(i * 0x100 + 7);
            t.put(i * 0x100 + 7, i);
        }
        for (int i = 0; i < keys.size(); i += 2) {
            assertEquals(i + 1, t.remove(keys.get(i)));
        }
        for (int i = 1; i < keys.size(); i += 2) {
            assertEquals(i + 1, t.get(keys.get(i)), "still bound after its neighbours went");
        }
        assertEquals(32, t.size());
        t.clear();
        assertEquals(0, t.size());
        assertEquals(-1, t.get(keys.get(1)));
    }

    @Test
    void refusesMoreRkeysThanWindowsAndRkeyZero() {
        BoundRkeys t = new BoundRkeys(2);
        assertThrows(IllegalArgumentException.class, () -> t.put(0, 0));
        assertEquals(-1, t.get(0));
        for (int i = 1; i <= 4; i++) { // the table has 4 slots; half of them may fill
            int k = i << 8;
            if (i <= 2) {
                t.put(k, i);
            } else {
                assertThrows(IllegalStateException.class, () -> t.put(k, 0));
            }
        }
    }
}
