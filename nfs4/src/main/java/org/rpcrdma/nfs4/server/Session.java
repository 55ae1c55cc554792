package org.rpcrdma.nfs4.server;

import org.rpcrdma.nfs4.ChannelAttrs;
import org.rpcrdma.transport.Connection;

/**
 * A session (RFC 8881 §2.10): its id, its client, the fore channel's slots and reply
 * cache, the negotiated channel attributes, and the connection its back channel is bound
 * to (RFC 8167: the client's own RPC-over-RDMA connection), null if none.
 */
final class Session {
    final byte[] id;
    final ClientTable.Client client;
    final ReplyCache slots;
    final ChannelAttrs fore;
    final ChannelAttrs back;
    final int cbProgram;
    private volatile Connection backChannel;
    private volatile boolean callbackPathUp;
    private int callbackSequence; // the back channel's slot 0 (RFC 8881 §2.10.6.3)

    Session(byte[] id, ClientTable.Client client, ChannelAttrs fore, ChannelAttrs back, int cbProgram) {
        this.id = id;
        this.client = client;
        this.fore = fore;
        this.back = back;
        this.cbProgram = cbProgram;
        this.slots = new ReplyCache(fore.maxRequests());
    }

    Connection backChannel() {
        return backChannel;
    }

    void bindBackChannel(Connection c) {
        backChannel = c;
    }

    boolean callbackPathUp() {
        return callbackPathUp && backChannel != null;
    }

    void callbackPath(boolean up) {
        callbackPathUp = up;
    }

    /** The sequence ID of the next CB_SEQUENCE on the back channel's slot 0. */
    synchronized int nextCallbackSequence() {
        return ++callbackSequence;
    }
}
