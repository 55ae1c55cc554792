package org.rpcrdma.transport.rpc;

/**
 * Which way an RPC travels on one connection (RFC 8167 §2): {@link #FORWARD} calls go from
 * the connection's initiator (client) to the listener (server), {@link #BACKWARD} calls the
 * other way. Credits and XIDs are accounted per direction, never shared (RFC 8167 §4.1).
 */
public enum Direction {
    FORWARD,
    BACKWARD;

    /** The direction in which a locally originated call travels. */
    public static Direction ofOwnCalls(boolean weAreClient) {
        return weAreClient ? FORWARD : BACKWARD;
    }
}
