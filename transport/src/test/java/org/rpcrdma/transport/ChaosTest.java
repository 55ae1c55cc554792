package org.rpcrdma.transport;

import org.junit.jupiter.api.Timeout;

/**
 * {@link ChaosBehaviour} over the in-memory link: a new pair stands for each connection
 * the server drops (its link goes down as a QP in error would), four callers with timeouts
 * of a few ms, many calls.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ChaosTest extends ChaosBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.IN_MEMORY;
    }

    @Override
    long runMillis() {
        return Long.getLong("rpcrdma.chaos.millis", 8000);
    }

    @Override
    int callers() {
        return 4;
    }

    @Override
    int minTimeoutMillis() {
        return 1;
    }

    @Override
    int timeoutSpreadMillis() {
        return 30;
    }

    @Override
    int backwardMinTimeoutMillis() {
        return 1;
    }

    @Override
    int backwardTimeoutSpreadMillis() {
        return 30;
    }

    @Override
    int dropOneIn() {
        return 300;
    }

    @Override
    long paceMillis() {
        return 50;
    }

    @Override
    int paceOneIn() {
        return 4;
    }

    @Override
    long backwardPaceMillis() {
        return 50;
    }

    @Override
    int minReplies() {
        return 100;
    }
}
