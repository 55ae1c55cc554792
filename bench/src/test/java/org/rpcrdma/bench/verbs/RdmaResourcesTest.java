package org.rpcrdma.bench.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RdmaResourcesTest {
    @Test
    void countsTheObjectsOfThisProcesssThreadsAndSumsTheirMemoryRegions() {
        String mrs = """
                dev rxe0 mrn 4 rkey 0x1204 lkey 0x1204 mrlen 4096 pdn 2 pid 123 comm java
                dev rxe0 mrn 5 rkey 0x1305 lkey 0x1305 mrlen 16777216 pdn 2 pid 123 comm java
                dev rxe0 mrn 6 rkey 0x1406 lkey 0x1406 mrlen 65536 pdn 3 pid 1234 comm java
                dev rxe0 mrn 7 rkey 0x1507 lkey 0x1507 mrlen 8192 pdn 4 pid 12 comm java
                """;
        Map<String, Object> m = new LinkedHashMap<>();
        RdmaResources.count(m, "mr", mrs, Set.of(123L, 125L));
        assertEquals(2, m.get("mr"));
        assertEquals(16781312L, m.get("mrBytes"));
        RdmaResources.count(m, "qp", "link rxe0/1 lqpn 17 type RC state RTS pid 123 comm java\n"
                + "link rxe0/1 lqpn 18 type RC state RTS pid 125 comm rpcrdma-server-\n"
                + "link rxe0/1 lqpn 1 type GSI state RTS comm [ib_core]\n", Set.of(123L, 125L));
        assertEquals(2, m.get("qp"));
    }
}
