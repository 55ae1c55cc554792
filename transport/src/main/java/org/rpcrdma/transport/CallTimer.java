package org.rpcrdma.transport;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Call deadlines for every connection of the process: one daemon thread. A timer only
 * completes the call's future exceptionally (the same path as a caller's
 * {@code orTimeout} or {@code cancel}); it never runs user code itself beyond the
 * future's dependents.
 */
final class CallTimer {
    private static final ScheduledThreadPoolExecutor TIMER = make();

    private CallTimer() {}

    private static ScheduledThreadPoolExecutor make() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1,
                r -> Thread.ofPlatform().daemon().name("rpcrdma-call-timer").unstarted(r));
        t.setRemoveOnCancelPolicy(true); // answered calls leave nothing behind
        return t;
    }

    static ScheduledFuture<?> schedule(Runnable expire, long nanos) {
        return TIMER.schedule(expire, nanos, TimeUnit.NANOSECONDS);
    }
}
