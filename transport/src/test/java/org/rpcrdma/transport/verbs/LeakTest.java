package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** 1,000 open/close cycles leave file descriptors, threads and native memory flat. */
class LeakTest extends VerbsTestBase {
    private static final int CYCLES = 1000;
    private static final int CM_EVERY = 10;

    private static void cycle(String dev, InetAddress ip, int i) {
        try (Arena arena = Arena.ofConfined();
             Device d = Device.open(dev);
             ProtectionDomain pd = d.allocateProtectionDomain();
             MemoryRegion mr = pd.register(arena.allocate(16384, 4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
             CompletionChannel ch = d.createCompletionChannel();
             CompletionQueue cq = d.createCompletionQueue(16, ch);
             WorkCompletions wc = new WorkCompletions(4)) {
            cq.requestNotify(false);
            assertEquals(0, cq.poll(wc));
            assertTrue(mr.lkey() != 0);
        }
        if (i % CM_EVERY == 0) {
            try (EventChannel ec = new EventChannel(); CmId id = ec.createId()) {
                id.resolveAddress(null, new InetSocketAddress(ip, 20049), 2000);
                expectEvent(ec, CmEvent.Type.ADDR_RESOLVED);
            }
        }
    }

    @Test
    void thousandCyclesLeakNothing() {
        String dev = deviceName();
        InetAddress ip = deviceAddress();
        for (int i = 0; i < 50; i++) { // warm up: JIT, class loading, libibverbs' one-time state
            cycle(dev, ip, i);
        }
        System.gc();
        long fds0 = ProcessProbe.fds();
        int threads0 = Thread.activeCount();
        long rss0 = ProcessProbe.rssKiB();
        long start = System.nanoTime();
        long malloc0 = 0;
        long maps0 = 0;
        for (int i = 0; i < CYCLES; i++) {
            if (i == CYCLES / 2) { // the JVM's own growth settles in the first half
                System.gc();
                malloc0 = ProcessProbe.mallocInUseKiB();
                maps0 = ProcessProbe.mappings();
            }
            cycle(dev, ip, i);
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        System.gc();
        long fds1 = ProcessProbe.fds();
        int threads1 = Thread.activeCount();
        long rss1 = ProcessProbe.rssKiB();
        long malloc1 = ProcessProbe.mallocInUseKiB();
        long maps1 = ProcessProbe.mappings();
        System.out.printf("LeakTest: second half: malloc in use %d -> %d KiB, mappings %d -> %d%n",
                malloc0, malloc1, maps0, maps1);
        System.out.printf("LeakTest: %d cycles (%d with rdma_cm) in %d ms; fds %d -> %d, threads %d -> %d, RSS %d -> %d KiB%n",
                CYCLES, CYCLES / CM_EVERY, ms, fds0, fds1, threads0, threads1, rss0, rss1);
        assertEquals(0, LiveResources.total(), () -> "left open: " + LiveResources.snapshot());
        assertTrue(Math.abs(fds1 - fds0) <= 2, "fds " + fds0 + " -> " + fds1);
        assertTrue(Math.abs(threads1 - threads0) <= 1, "threads " + threads0 + " -> " + threads1);
        // a leak of one 16 KiB MR plus a CQ ring or a context per cycle would be > 32 MiB;
        // the first guest run saw +22 MiB (heap/JIT growth is in RSS too): NMT would be sharper
        assertTrue(rss1 - rss0 < 32 * 1024, "RSS grew " + (rss1 - rss0) + " KiB");
        // Sharper than RSS: a leaked context or CQ ring stays mmap'd (>= 1 mapping a cycle,
        // 500 over the second half), and a leaked context's malloc'd state is KiBs a cycle.
        assertTrue(maps1 - maps0 < 50, "mappings grew by " + (maps1 - maps0) + " over the last 500 cycles");
        assertTrue(malloc1 - malloc0 < 2048, "malloc'd memory grew by " + (malloc1 - malloc0)
                + " KiB over the last 500 cycles");
    }

}
