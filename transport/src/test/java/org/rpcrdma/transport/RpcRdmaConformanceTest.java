package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ConformanceTable} over the in-memory link: a raw peer on one side of an
 * {@link InMemoryPair}, our server or client on the other.
 */
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RpcRdmaConformanceTest {
    /** Our server: forward credits 4, at most 16 segments per chunk list; the raw client keeps receives posted through its backward credits. */
    static final RpcRdmaOptions SERVER_SIDE = RpcRdmaOptions.defaults().withInlineThreshold(1024).withCredits(4).withMaxChunkSegments(16).withBackwardCredits(8)
            .withReconnectAttempts(0);
    /** Our client: takes backward calls, without chunks (RFC 8167 §5.3). */
    static final RpcRdmaOptions CLIENT_SIDE = RpcRdmaOptions.defaults().withInlineThreshold(1024).withCredits(ConformancePlayer.GRANT)
            .withBackwardCredits(2).withBackwardChunks(false).withReconnectAttempts(0);

    @Test
    void theTableHoldsOnTheInMemoryLink() throws Exception {
        new ConformancePlayer(ConformancePlayer.LinkKind.MEMORY, h -> {
            InMemoryPair p = InMemoryPair.open(SERVER_SIDE, h);
            return new ConformancePlayer.Session(p.server(), new RawPeer(p.client(), true), p::exposedCount,
                    () -> p.chunkBytesInUse(false), p);
        }, h -> {
            InMemoryPair p = InMemoryPair.open(CLIENT_SIDE, call -> { });
            p.client().serveBackwardCalls(h);
            return new ConformancePlayer.Session(p.client(), new RawPeer(p.server(), true), p::exposedCount,
                    () -> p.chunkBytesInUse(true), p);
        }, 2000).run();
    }

    @Test
    void theTableIsWellFormed() {
        List<String> ids = ConformanceTable.RULES.stream().map(ConformanceTable.Rule::id).toList();
        assertEquals(ids.size(), ids.stream().distinct().count(), "rule ids are unique");
        assertTrue(ids.size() >= 80, "at least 80 rules: " + ids.size());
        assertEquals(List.of(), ConformanceTable.unknownDivergences(), "every listed divergence names a rule");
    }
}
