package org.rpcrdma.transport;

import java.lang.reflect.Method;

/**
 * The bytes this thread has allocated so far (HotSpot's per-thread counter), for tests that
 * bound what a call path allocates. Through reflection: the transport module reads no
 * management module.
 */
final class ThreadAllocation {
    private static final Object THREADS;
    private static final Method ALLOCATED;

    static {
        try {
            THREADS = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
            ALLOCATED = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private ThreadAllocation() {
    }

    static long bytes() {
        try {
            return (long) ALLOCATED.invoke(THREADS);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("the thread allocation counter", e);
        }
    }
}
