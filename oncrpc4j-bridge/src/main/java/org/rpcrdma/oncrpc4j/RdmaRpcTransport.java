package org.rpcrdma.oncrpc4j;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.channels.CompletionHandler;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.dcache.oncrpc4j.rpc.OncRpcAcceptedException;
import org.dcache.oncrpc4j.rpc.OncRpcRejectedException;
import org.dcache.oncrpc4j.rpc.ReplyQueue;
import org.dcache.oncrpc4j.rpc.RpcAccepsStatus;
import org.dcache.oncrpc4j.rpc.RpcReply;
import org.dcache.oncrpc4j.rpc.RpcTransport;
import org.dcache.oncrpc4j.xdr.Xdr;
import org.rpcrdma.transport.Backchannel;
import org.rpcrdma.transport.BidirectionalCaller;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcCaller;

/**
 * oncrpc4j's {@link RpcTransport} over an RPC-over-RDMA {@link RpcCaller}: an
 * {@link org.dcache.oncrpc4j.rpc.RpcCall} made on it goes as an RPC call in the caller's
 * direction (forward through a client or its connection, backward through a server's
 * connection or backchannel, RFC 8167), and its reply is handed to the {@link ReplyQueue}
 * the way oncrpc4j's TCP transport does.
 *
 * <p>Timeouts: oncrpc4j's own (the {@code ReplyQueue}) apply as given; the transport's
 * {@code callTimeoutMillis} bounds every call as well (0: no bound), so set it no lower than
 * the longest timeout the program uses.
 */
public final class RdmaRpcTransport implements RpcTransport, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RdmaRpcTransport.class.getName());

    private final RpcCaller caller;
    private final ReplyQueue replyQueue = new ReplyQueue();
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    /** Every call's options, made once: a Reply chunk of maxReplyBytes where a reply may not fit inline. */
    private final CallOptions options;

    /**
     * @param maxReplyBytes the largest reply a call on this transport expects: beyond the
     *        receive inline threshold, each call offers a Reply chunk that large (RFC 8166
     *        §3.5.4); 0 for replies that always fit inline
     */
    public RdmaRpcTransport(RpcCaller caller, InetSocketAddress local, InetSocketAddress remote,
            int maxReplyBytes) {
        this.caller = Objects.requireNonNull(caller, "caller");
        // oncrpc4j keys a transport's waiting calls by this address: never null
        this.local = local != null ? local : new InetSocketAddress(0);
        this.remote = remote;
        if (maxReplyBytes < 0) {
            throw new IllegalArgumentException("maxReplyBytes " + maxReplyBytes + " < 0");
        }
        this.options = CallOptions.DEFAULT.withMaxReplyBytes(maxReplyBytes);
    }

    /** The caller below. */
    public RpcCaller caller() {
        return caller;
    }

    @Override
    public <A> void send(Xdr xdr, A attachment, CompletionHandler<Integer, ? super A> handler) {
        MemorySegment msg = XdrSegments.encoded(xdr);
        if (XdrSegments.messageType(msg) != XdrSegments.CALL) {
            handler.failed(new IllegalStateException("only calls are sent on " + this
                    + "; a reply goes on the transport of the call it answers"), attachment);
            return;
        }
        sendCall(msg, attachment, handler);
    }

    <A> void sendCall(MemorySegment msg, A attachment, CompletionHandler<Integer, ? super A> handler) {
        int xid = XdrSegments.xid(msg);
        CompletableFuture<ReceivedMessage> reply;
        try {
            reply = caller.call(msg, options); // a Reply chunk only where the reply may not fit inline
        } catch (RuntimeException e) {
            handler.failed(e, attachment);
            return;
        }
        handler.completed((int) msg.byteSize(), attachment);
        reply.whenComplete((m, e) -> deliver(xid, m, e));
    }

    /** Hands a reply (or the call's failure) to the handler registered for {@code xid}, as oncrpc4j's TCP filter does. */
    private void deliver(int xid, ReceivedMessage m, Throwable failure) {
        Xdr xdr = null;
        if (m != null) {
            try (m) {
                xdr = XdrSegments.received(m);
            }
        }
        CompletionHandler<RpcReply, RpcTransport> callback = replyQueue.get(xid);
        if (callback == null) {
            return; // timed out or cancelled in oncrpc4j: nobody waits for it
        }
        if (xdr == null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            callback.failed(cause, this);
            return;
        }
        try {
            xdr.xdrDecodeInt(); // xid (matched by the transport)
            xdr.xdrDecodeInt(); // msg_type REPLY (checked by the transport)
            RpcReply reply = new RpcReply(xid, xdr, this);
            if (!reply.isAccepted()) {
                callback.failed(new OncRpcRejectedException(reply.getRejectStatus()), this);
            } else if (reply.getAcceptStatus() != RpcAccepsStatus.SUCCESS) {
                callback.failed(new OncRpcAcceptedException(reply.getAcceptStatus()), this);
            } else {
                callback.completed(reply, this);
            }
        } catch (IOException e) { // OncRpcException too: a reply header that does not decode
            LOG.log(System.Logger.Level.DEBUG, "reply {0} does not decode: {1}", xid, e.getMessage());
            callback.failed(e, this);
        }
    }

    @Override
    public ReplyQueue getReplyQueue() {
        return replyQueue;
    }

    @Override
    public boolean isOpen() {
        Connection c = caller instanceof BidirectionalCaller b ? b.connection()
                : caller instanceof Backchannel bc ? bc.connection() : null;
        return c != null && c.isOpen();
    }

    @Override
    public InetSocketAddress getLocalSocketAddress() {
        return local;
    }

    @Override
    public InetSocketAddress getRemoteSocketAddress() {
        return remote;
    }

    /** The same connection: RPC-over-RDMA carries both directions on it (RFC 8167). */
    @Override
    public RpcTransport getPeerTransport() {
        return this;
    }

    @Override
    public void startTLS() {
        throw new IllegalStateException("RPC-over-RDMA has no TLS (RFC 9289 covers TCP only)");
    }

    @Override
    public boolean isTLS() {
        return false;
    }

    /**
     * Fails the calls still waiting (as oncrpc4j does on a disconnect) and stops oncrpc4j's
     * timeout thread; the connection stays open (it belongs to its client or server).
     */
    @Override
    public void close() {
        replyQueue.handleDisconnect(local);
        replyQueue.shutdown();
    }

    @Override
    public String toString() {
        return "oncrpc4j transport on " + caller;
    }
}
