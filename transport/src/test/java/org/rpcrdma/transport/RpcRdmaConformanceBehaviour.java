package org.rpcrdma.transport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ConformanceTable} played over a link by {@link ConformancePlayer}: a raw peer on one
 * end, our server or our client on the other, every rule's outcome and our endpoint's
 * resources after it checked.
 */
@Timeout(value = 600, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
abstract class RpcRdmaConformanceBehaviour {
    /** Our server: forward credits 4, at most 16 segments per chunk list; the raw client keeps receives posted through its backward credits. */
    static final RpcRdmaOptions SERVER_SIDE = RpcRdmaOptions.builder().inlineThreshold(1024).credits(4)
            .maxChunkSegments(16).backwardCredits(8).reconnectAttempts(0).build();
    /** Our client: takes backward calls, without chunks (RFC 8167 §5.3). */
    static final RpcRdmaOptions CLIENT_SIDE = RpcRdmaOptions.builder().inlineThreshold(1024)
            .credits(ConformancePlayer.GRANT).backwardCredits(2).backwardChunks(false)
            .reconnectAttempts(0).build();

    abstract LinkFixture link();

    /** Our client's options on this link. */
    RpcRdmaOptions clientSide() {
        return CLIENT_SIDE;
    }

    @Test
    void theTableHolds() throws Exception {
        LinkFixture l = link();
        new ConformancePlayer(l.kind(), h -> l.conformanceSession(true, SERVER_SIDE, h),
                h -> l.conformanceSession(false, clientSide(), h), l.conformanceWaitMillis()).run();
        l.checkNothingLeft();
    }
}
