package org.rpcrdma.transport.verbs;

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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * What this process holds, for leak tests: file descriptors, RSS, memory mappings (a leaked
 * verbs context or CQ ring stays mmap'd) and glibc's malloc'd bytes in use (a leaked
 * context's state), and how often a thread went to sleep (a wait that wakes on a timer
 * shows there). Linux only.
 */
public final class ProcessProbe {
    private ProcessProbe() {}

    public static long fds() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static long rssKiB() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no VmRSS");
    }

    public static long mappings() {
        try {
            return Files.readAllLines(Path.of("/proc/self/maps")).size();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** glibc mallinfo2(): uordblks (in use from arenas) + hblkhd (in use from mmap), in KiB. */
    public static long mallocInUseKiB() {
        Linker linker = Linker.nativeLinker();
        StructLayout info = MemoryLayout.structLayout(
                ValueLayout.JAVA_LONG.withName("arena"), ValueLayout.JAVA_LONG.withName("ordblks"),
                ValueLayout.JAVA_LONG.withName("smblks"), ValueLayout.JAVA_LONG.withName("hblks"),
                ValueLayout.JAVA_LONG.withName("hblkhd"), ValueLayout.JAVA_LONG.withName("usmblks"),
                ValueLayout.JAVA_LONG.withName("fsmblks"), ValueLayout.JAVA_LONG.withName("uordblks"),
                ValueLayout.JAVA_LONG.withName("fordblks"), ValueLayout.JAVA_LONG.withName("keepcost"));
        MethodHandle mallinfo2 = linker.downcallHandle(linker.defaultLookup().find("mallinfo2").orElseThrow(),
                FunctionDescriptor.of(info));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = (MemorySegment) mallinfo2.invokeExact((SegmentAllocator) arena);
            return (m.get(ValueLayout.JAVA_LONG, 7 * 8) + m.get(ValueLayout.JAVA_LONG, 4 * 8)) / 1024;
        } catch (Throwable t) {
            throw new AssertionError("mallinfo2", t);
        }
    }

    private static final MethodHandle GETTID = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("gettid").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT));

    /** The calling thread's kernel id (its directory in /proc/self/task). */
    public static int gettid() {
        try {
            return (int) GETTID.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError("gettid", t);
        }
    }

    /**
     * The thread's voluntary context switches so far: one per time it blocked and was woken
     * (a poll(2) that returns on its timeout counts one).
     */
    public static long voluntarySwitches(int tid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/task", Integer.toString(tid), "status"))) {
                if (line.startsWith("voluntary_ctxt_switches:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no voluntary_ctxt_switches for thread " + tid);
    }

    /**
     * The kernel ids of this process's threads whose name starts with {@code prefix}. The JVM
     * gives a platform thread its Java name, cut to the kernel's 15 characters.
     */
    public static List<Integer> threadsNamed(String prefix) {
        List<Integer> tids = new ArrayList<>();
        try (Stream<Path> s = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : s.toList()) {
                String comm;
                try {
                    comm = Files.readString(task.resolve("comm")).trim();
                } catch (IOException gone) {
                    continue; // the thread ended meanwhile
                }
                if (comm.startsWith(prefix)) {
                    tids.add(Integer.parseInt(task.getFileName().toString()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return tids;
    }

    /** The sum of {@link #voluntarySwitches} of {@code tids}. */
    public static long voluntarySwitches(List<Integer> tids) {
        long n = 0;
        for (int tid : tids) {
            n += voluntarySwitches(tid);
        }
        return n;
    }
}
