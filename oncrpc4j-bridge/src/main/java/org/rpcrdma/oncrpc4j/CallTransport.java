package org.rpcrdma.oncrpc4j;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.channels.CompletionHandler;
import org.dcache.oncrpc4j.rpc.ReplyQueue;
import org.dcache.oncrpc4j.rpc.RpcTransport;
import org.dcache.oncrpc4j.xdr.Xdr;
import org.rpcrdma.transport.IncomingCall;

/**
 * The transport of one received call, as its {@link org.dcache.oncrpc4j.rpc.RpcCall} sees it:
 * the reply oncrpc4j encodes ({@code reply}, {@code reject}, the {@code fail*} methods) answers
 * that call, through the caller's Reply chunk when it does not fit inline (the transport
 * decides, RFC 8166 §3.5.4); a call made on it ({@code new RpcCall(..., call.getTransport())})
 * goes on the connection in this side's direction, backward on a server (RFC 8167).
 */
final class CallTransport implements RpcTransport {
    private final RdmaRpcTransport connection;
    private final IncomingCall call;

    CallTransport(RdmaRpcTransport connection, IncomingCall call) {
        this.connection = connection;
        this.call = call;
    }

    @Override
    public <A> void send(Xdr xdr, A attachment, CompletionHandler<Integer, ? super A> handler) {
        MemorySegment msg = XdrSegments.encoded(xdr);
        if (XdrSegments.messageType(msg) == XdrSegments.CALL) {
            connection.sendCall(msg, attachment, handler);
            return;
        }
        try {
            call.reply(msg);
        } catch (RuntimeException e) { // answered twice, or a reply the caller left no room for
            handler.failed(e, attachment);
            return;
        }
        handler.completed((int) msg.byteSize(), attachment);
    }

    @Override
    public ReplyQueue getReplyQueue() {
        return connection.getReplyQueue();
    }

    @Override
    public boolean isOpen() {
        return connection.isOpen();
    }

    @Override
    public InetSocketAddress getLocalSocketAddress() {
        return connection.getLocalSocketAddress();
    }

    @Override
    public InetSocketAddress getRemoteSocketAddress() {
        return connection.getRemoteSocketAddress();
    }

    @Override
    public RpcTransport getPeerTransport() {
        return connection;
    }

    @Override
    public void startTLS() {
        connection.startTLS();
    }

    @Override
    public boolean isTLS() {
        return false;
    }

    @Override
    public String toString() {
        return "call " + call.xid() + " on " + connection;
    }
}
