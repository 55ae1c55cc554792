package org.rpcrdma.transport.core;

/**
 * Which way an RPC travels on one connection (RFC 8167 §2): {@link #FORWARD} calls go from
 * the connection's initiator (client) to the listener (server), {@link #BACKWARD} calls the
 * other way. Credits and XIDs are accounted per direction, never shared (RFC 8167 §4.1).
 */
public enum Direction {
    FORWARD,
    BACKWARD;

    /**
     * The direction a received message belongs to. A received CALL means the peer is the
     * requester; a received REPLY means we are (RFC 8167 §4). On the client, a received
     * CALL is a backward call; on the server it is a forward call.
     *
     * @param receivedCall {@code true} if the RPC msg_type is CALL, {@code false} for REPLY
     * @param weAreClient  {@code true} on the connection initiator
     */
    public static Direction ofReceived(boolean receivedCall, boolean weAreClient) {
        return receivedCall == weAreClient ? BACKWARD : FORWARD;
    }

    /** The direction in which a locally originated call travels. */
    public static Direction ofOwnCalls(boolean weAreClient) {
        return weAreClient ? FORWARD : BACKWARD;
    }
}
