package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link RpcRdmaConformanceBehaviour} over the in-memory pair, and the table's own form (no link needed). */
class RpcRdmaConformanceTest extends RpcRdmaConformanceBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.IN_MEMORY;
    }

    @Test
    void theTableIsWellFormed() {
        List<String> ids = ConformanceTable.RULES.stream().map(ConformanceTable.Rule::id).toList();
        assertEquals(ids.size(), ids.stream().distinct().count(), "rule ids are unique");
        assertTrue(ids.size() >= 80, "at least 80 rules: " + ids.size());
        assertEquals(List.of(), ConformanceTable.unknownDivergences(), "every listed divergence names a rule");
    }
}
