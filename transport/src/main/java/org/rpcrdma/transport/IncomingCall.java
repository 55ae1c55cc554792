package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;

/**
 * A call received from the peer (a forward call on a server, a backward call on a client).
 * The handler answers with {@link #reply} now or later, from any thread, exactly once.
 * The call's bytes stay valid until the reply is sent or {@link #message()} is released.
 */
public interface IncomingCall {
    /** The RPC call bytes, starting at the XID. */
    ReceivedMessage message();

    int xid();

    /** The connection the call arrived on (for backward calls from a server handler). */
    Connection connection();

    /**
     * Sends the RPC reply (bytes start at the XID; the XID must be this call's). Releases
     * the call's receive buffer.
     */
    void reply(MemorySegment rpcReply);
}
