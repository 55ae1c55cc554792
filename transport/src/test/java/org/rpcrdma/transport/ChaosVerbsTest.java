package org.rpcrdma.transport;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ChaosBehaviour} on real verbs: our server closes connections at random while
 * {@link RpcRdmaClient} reconnects, backward calls go through the server's
 * {@link Backchannel}; two callers, every call paced and with longer timeouts, as the
 * device under emulation runs slower.
 */
@Tag("verbs")
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ChaosVerbsTest extends ChaosBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.VERBS;
    }

    @Override
    long runMillis() {
        return Long.getLong("rpcrdma.chaos.millis", 20_000);
    }

    @Override
    int callers() {
        return 2;
    }

    @Override
    int minTimeoutMillis() {
        return 5;
    }

    @Override
    int timeoutSpreadMillis() {
        return 200;
    }

    @Override
    int backwardMinTimeoutMillis() {
        return 20;
    }

    @Override
    int backwardTimeoutSpreadMillis() {
        return 500;
    }

    @Override
    int dropOneIn() {
        return 150;
    }

    @Override
    long paceMillis() {
        return 200;
    }

    @Override
    int paceOneIn() {
        return 1;
    }

    @Override
    long backwardPaceMillis() {
        return 300;
    }

    @Override
    int minReplies() {
        return 50;
    }
}
