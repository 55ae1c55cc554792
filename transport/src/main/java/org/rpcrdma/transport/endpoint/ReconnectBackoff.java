package org.rpcrdma.transport.endpoint;

import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * How often a client that lost its connection tries again, and when it gives up. With
 * calls to carry over and no backchannel: {@link RpcRdmaOptions#reconnectAttempts()}
 * attempts, 100 ms more between each (at most 1 s). With a backchannel in use the client
 * must keep a connection while callbacks are possible (RFC 8167 §5.4: the server cannot
 * connect to it, its backward calls wait for the client to return): it tries at least as
 * many times and then on, doubling the pause up to {@link #MAX_DELAY_MILLIS}, for
 * {@link RpcRdmaOptions#backchannelWaitMillis()} ({@code 0}, the default: until it is
 * back or closed).
 */
final class ReconnectBackoff {
    static final long FIRST_DELAY_MILLIS = 100;
    /** The longest pause between attempts: Linux's xprtrdma waits at most 30 s (RPCRDMA_MAX_REEST_TO). */
    static final long MAX_DELAY_MILLIS = 30_000;

    private final int attempts;
    private final long limitNanos;
    private final boolean backchannel;
    private final long startNanos;

    /** For a connection lost at {@code startNanos} ({@link System#nanoTime()}) that did or did not carry a backchannel. */
    ReconnectBackoff(RpcRdmaOptions o, boolean backchannel, long startNanos) {
        this.attempts = o.reconnectAttempts();
        this.limitNanos = TimeUnit.MILLISECONDS.toNanos(o.backchannelWaitMillis());
        this.backchannel = backchannel;
        this.startNanos = startNanos;
    }

    /** Whether attempt {@code n} (from 1) is made at {@code nowNanos}. */
    boolean mayAttempt(int n, long nowNanos) {
        if (n <= attempts) {
            return true;
        }
        return backchannel && (limitNanos == 0 || nowNanos - startNanos < limitNanos);
    }

    /** The pause after failed attempt {@code n} (from 1). */
    long delayMillis(int n) {
        if (!backchannel) {
            return Math.min(FIRST_DELAY_MILLIS * n, 1000L);
        }
        return Math.min(FIRST_DELAY_MILLIS << Math.min(n - 1, 20), MAX_DELAY_MILLIS);
    }

    boolean unlimited() {
        return backchannel && limitNanos == 0;
    }
}
