package org.rpcrdma.transport.endpoint;

import java.lang.System.Logger.Level;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Releases lost connections on threads of their own, so that neither a reconnect nor the
 * server's rdma_cm thread (which accepts every client's connection) waits for one:
 * Soft-RoCE's {@code rdma_destroy_qp} of a QP that failed on a dead link took close to a
 * minute, at both ends, waiting in rxe's pool cleanup ({@code __rxe_cleanup}) for the QP's
 * last reference. Linux's xprtrdma does the same: a new connection does not wait for the old
 * one's teardown. Each release runs once, on its thread; {@link #await} lets a closing
 * endpoint wait for those in progress before it frees what they still use (its registered
 * buffers, its event channel).
 */
final class Teardowns {
    private static final System.Logger LOG = System.getLogger(Teardowns.class.getName());

    private final String name;
    private final Set<Thread> running = ConcurrentHashMap.newKeySet();

    /** {@code name}: the threads' name. */
    Teardowns(String name) {
        this.name = name;
    }

    /** Runs {@code release} on a thread of its own; a failure is logged once, never thrown. */
    void release(Runnable release) {
        Thread t = Thread.ofPlatform().daemon().name(name).unstarted(() -> {
            try {
                release.run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "releasing a lost connection failed: {0}", e.toString());
            } finally {
                running.remove(Thread.currentThread());
            }
        });
        running.add(t); // ORDER: before it starts, so that await() sees it
        t.start();
    }

    /** Releases in progress. */
    int inProgress() {
        return running.size();
    }

    /** Waits up to {@code millis} for every release in progress; whether none is left. */
    boolean await(long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        boolean interrupted = false;
        for (Thread t : running) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                t.join(TimeUnit.NANOSECONDS.toMillis(left) + 1);
            } catch (InterruptedException e) {
                interrupted = true; // still wait: what the release uses must not be freed under it
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        running.removeIf(t -> !t.isAlive());
        return running.isEmpty();
    }
}
