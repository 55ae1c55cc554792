package org.rpcrdma.transport.verbs;

import org.rpcrdma.bindings.NativeErrors;
import org.rpcrdma.transport.NativeFailureException;

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

    private static final int ECONNREFUSED = 111;

    /**
     * This event as the failure of the asynchronous step {@code function} started (e.g.
     * {@code rdma_connect} awaiting ESTABLISHED). rdma_cm gives an error event's status as
     * a negated errno, except for REJECTED, whose status is the peer's CM reject reason
     * (IB_CM_REJ_INVALID_SERVICE_ID, 8, when nobody listens on the port): that is reported
     * as ECONNREFUSED, the reason in the detail.
     *
     * @param detail what was awaited, for the message
     */
    public NativeFailureException failure(String function, String detail) {
        int errno = status < 0 ? -status : type == Type.REJECTED ? ECONNREFUSED : NativeErrors.EIO;
        String what = type + (type == Type.REJECTED ? " (reject reason " : " (status ") + status + ")";
        return new NativeFailureException(function, errno, NativeErrors.strerror(errno), what + ", " + detail);
    }

    @Override
    public String toString() {
        return "CmEvent[" + type + ", status " + status + ", " + privateData.length + " bytes private data]";
    }
}
