package org.rpcrdma.oncrpc.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RpcRdmaPingTest {
    @Test
    void usageErrorsExitTwo() {
        assertEquals(2, RpcRdmaPing.run(new String[0]));
        assertEquals(2, RpcRdmaPing.run(new String[] {"host", "100003"}));
        assertEquals(2, RpcRdmaPing.run(new String[] {"host", "100003", "4", "-c", "0"}));
        assertEquals(2, RpcRdmaPing.run(new String[] {"host", "x", "4"}));
    }
}
