package org.rpcrdma.transport.link;

import java.util.concurrent.locks.StampedLock;
import java.util.function.Function;
import java.util.function.Supplier;
import org.rpcrdma.transport.LinkClosedException;

/**
 * The gate between one {@link VerbsLink}'s use of native memory and its release: the
 * argument that nothing native is used after free, in one place.
 *
 * <p>Every use of the link's native memory (posts, CQ polls and arming, the channel wait,
 * exposing and withdrawing chunk memory) holds the read side ({@link #enter},
 * {@link #enterUnlessStopping}, {@link #enterUnlessFreed}); {@link #free} sets {@code freed}
 * and frees under the write side, so nothing native is used after free however late a
 * thread comes, and a post after destroy gets {@link LinkClosedException}. The read side is
 * never held while calling out to the ConnectionEngine: dispatch runs user code, which may post (a
 * read lock held there would block behind a waiting destroy's write lock) or block as long
 * as it likes.
 *
 * <p>Apart from {@link VerbsLink} because its users are: the link's posts
 * ({@link WorkRequests}), its polls ({@link CompletionPoller}; a completion group's CQ has
 * a gate of its own), the link's chunk calls and its destroy all go through here.
 */
public final class LinkGate {
    /**
     * Read side: any use of native memory (post, poll, arm, channel wait); never held while
     * calling out to the ConnectionEngine. Write side: destroy, while it frees.
     */
    private final StampedLock lock = new StampedLock();
    /** Set under the write side before anything is freed; read under the read side. */
    private boolean freed;
    /** Destroy has begun: the poller stops, posts are refused (checked before the lock too, so they stop early). */
    private volatile boolean stopping;
    /** The refusal of a post of {@code what} (names the link's connection). */
    private final Function<String, LinkClosedException> refusal;

    LinkGate(Function<String, LinkClosedException> refusal) {
        this.refusal = refusal;
    }

    /**
     * Takes the read side for a use of native memory ({@code what}: for the refusal); the
     * caller releases it with {@link #exit} in a finally.
     *
     * @throws LinkClosedException if destroy has begun; nothing native was touched
     */
    long enter(String what) {
        if (stopping) {
            throw refusal.apply(what); // early, without the lock: don't keep a waiting destroy out
        }
        long stamp = lock.readLock();
        if (freed) {
            lock.unlockRead(stamp);
            throw refusal.apply(what);
        }
        return stamp;
    }

    /**
     * The read side for a poll, or 0 (no stamp: nothing to {@link #exit}) once destroy has
     * begun or freed everything.
     */
    long enterUnlessStopping() {
        long stamp = lock.readLock();
        if (freed || stopping) {
            lock.unlockRead(stamp);
            return 0;
        }
        return stamp;
    }

    /** The read side, or 0 (no stamp: nothing to {@link #exit}) once everything was freed. */
    long enterUnlessFreed() {
        long stamp = lock.readLock();
        if (freed) {
            lock.unlockRead(stamp);
            return 0;
        }
        return stamp;
    }

    void exit(long stamp) {
        lock.unlockRead(stamp);
    }

    /** Runs {@code r} under the read side unless everything was freed (then not at all). */
    void runUnlessFreed(Runnable r) {
        long stamp = enterUnlessFreed();
        if (stamp != 0) {
            try {
                r.run();
            } finally {
                exit(stamp);
            }
        }
    }

    /** Whether some thread holds the read side now (a test's view of who keeps the gate). */
    boolean readHeld() {
        return lock.isReadLocked();
    }

    /** Destroy has begun: the poller stops polling, posts are refused. */
    void stop() {
        stopping = true;
    }

    boolean stopping() {
        return stopping;
    }

    /**
     * Takes the write side, which waits out every post, poll and channel wait in progress,
     * sets {@code freed} and runs {@code freeAll} under it: what it returns.
     */
    <T> T free(Supplier<T> freeAll) {
        long stamp = lock.writeLock();
        try {
            freed = true;
            return freeAll.get();
        } finally {
            lock.unlockWrite(stamp);
        }
    }
}
