package org.rpcrdma.transport.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class DirectionTest {
    @Test
    void receivedCallOnClientIsBackward() {
        assertEquals(Direction.BACKWARD, Direction.ofReceived(true, true));
        assertEquals(Direction.FORWARD, Direction.ofReceived(false, true));
        assertEquals(Direction.FORWARD, Direction.ofReceived(true, false));
        assertEquals(Direction.BACKWARD, Direction.ofReceived(false, false));
        assertEquals(Direction.FORWARD, Direction.ofOwnCalls(true));
        assertEquals(Direction.BACKWARD, Direction.ofOwnCalls(false));
    }
}
