package org.rpcrdma.transport.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class DirectionTest {
    @Test
    void clientCallsForwardServerCallsBackward() {
        assertEquals(Direction.FORWARD, Direction.ofOwnCalls(true));
        assertEquals(Direction.BACKWARD, Direction.ofOwnCalls(false));
    }
}
