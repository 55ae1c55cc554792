package org.rpcrdma.transport.verbs;

/**
 * One rdma_cm event, copied out of librdmacm and already acknowledged (so destroying its id
 * never waits). For {@link Type#CONNECT_REQUEST}, {@link #id()} is the new, not yet accepted
 * id: its owner must accept or reject it and close it eventually; {@link #listenId()} is
 * the listener. {@link #privateData()} is what the peer passed with connect/accept/reject;
 * the transport may pad it (e.g. to 56 bytes for a REQ), so look for content, not length
 * (RFC 8797 section 4 says to search the whole buffer).
 */
public record CmEvent(Type type, int status, CmId id, CmId listenId, byte[] privateData,
                      int responderResources, int initiatorDepth) {

    /** enum rdma_cm_event_type, in its C order. */
    public enum Type {
        ADDR_RESOLVED, ADDR_ERROR, ROUTE_RESOLVED, ROUTE_ERROR, CONNECT_REQUEST, CONNECT_RESPONSE,
        CONNECT_ERROR, UNREACHABLE, REJECTED, ESTABLISHED, DISCONNECTED, DEVICE_REMOVAL,
        MULTICAST_JOIN, MULTICAST_ERROR, ADDR_CHANGE, TIMEWAIT_EXIT, UNKNOWN;

        static Type of(int value) {
            Type[] all = values();
            return value >= 0 && value < all.length - 1 ? all[value] : UNKNOWN;
        }
    }

    @Override
    public String toString() {
        return "CmEvent[" + type + ", status " + status + ", " + privateData.length + " bytes private data]";
    }
}
