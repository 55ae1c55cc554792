package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.transport.Backchannel;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaClient;

/**
 * Where an {@link OncRpcClient} sends its calls: one of the transport's call paths, each
 * with its own rules for timeouts, reconnects and backward calls. A forward client uses
 * {@link #of(RpcRdmaClient)} (follows reconnects) or {@link #of(Connection)}; a server
 * makes backward calls with {@link #of(Backchannel)} (they wait for a client that lost its
 * connection to return, RFC 8167 §5.4) or on the {@link Connection} a call arrived on.
 */
@FunctionalInterface
public interface RpcTransport {
    /** {@code timeoutNanos} for "the transport's default" ({@code RpcRdmaOptions.callTimeoutMillis}). */
    long DEFAULT_TIMEOUT = -1;

    /**
     * Sends one RPC call message (from its XID on); the future completes with the reply,
     * which the caller releases, or with the transport's exception.
     *
     * @param timeoutNanos the call's deadline, {@code 0} for none, {@link #DEFAULT_TIMEOUT}
     *                     for the transport's default
     */
    CompletableFuture<ReceivedMessage> send(MemorySegment rpcCall, long timeoutNanos);

    /**
     * Sends one call with chunks (RFC 8166 §3.4-3.5), with the transport's default timeout:
     * {@code payload} (may be null) marks the call's DDP-eligible argument, which travels in
     * a read chunk when the call does not fit inline; {@code receptacle} (may be null) is
     * offered as a write chunk for a DDP result (the reply's {@code placedBytes()} says what
     * landed there); a reply of up to {@code maxReplyBytes} is allowed (a Reply chunk is
     * offered when that exceeds the receive inline threshold). Without any of the three
     * this is {@link #send(MemorySegment, long)}.
     *
     * @throws UnsupportedOperationException from a transport without chunks, when one is asked for
     */
    default CompletableFuture<ReceivedMessage> send(MemorySegment rpcCall, DdpArgument payload,
            MemorySegment receptacle, int maxReplyBytes) {
        return send(rpcCall, payload, receptacle, maxReplyBytes, DEFAULT_TIMEOUT);
    }

    /** {@link #send(MemorySegment, DdpArgument, MemorySegment, int)} with a timeout as {@link #send(MemorySegment, long)}'s. */
    default CompletableFuture<ReceivedMessage> send(MemorySegment rpcCall, DdpArgument payload,
            MemorySegment receptacle, int maxReplyBytes, long timeoutNanos) {
        if (payload == null && receptacle == null && maxReplyBytes == 0) {
            return send(rpcCall, timeoutNanos);
        }
        throw new UnsupportedOperationException("this transport sends no chunks (a DDP argument, a receptacle"
                + " or a Reply chunk was asked for)");
    }

    /**
     * The largest reply a call may allow here ({@code maxReplyBytes}); 0 (the default) for
     * a transport without chunks, whose replies must fit inline.
     */
    default int maxReplyBytes() {
        return 0;
    }

    /** Calls on one connection: forward from a client, backward from a server. */
    static RpcTransport of(Connection c) {
        return new RpcTransport() {
            @Override
            public CompletableFuture<ReceivedMessage> send(MemorySegment m, long t) {
                return t == DEFAULT_TIMEOUT ? c.call(m) : c.call(m, t, TimeUnit.NANOSECONDS);
            }

            @Override
            public CompletableFuture<ReceivedMessage> send(MemorySegment m, DdpArgument payload,
                    MemorySegment receptacle, int maxReplyBytes, long t) {
                return t == DEFAULT_TIMEOUT ? c.call(m, payload, receptacle, maxReplyBytes)
                        : c.call(m, payload, receptacle, maxReplyBytes, t, TimeUnit.NANOSECONDS);
            }

            @Override
            public int maxReplyBytes() {
                return c.maxReplyBytes();
            }
        };
    }

    /** Forward calls through a client endpoint (after a reconnect, on the new connection), not retried. */
    static RpcTransport of(RpcRdmaClient client) {
        return of(client, false);
    }

    /**
     * Forward calls through a client endpoint; with {@code retry}, a call whose connection
     * is lost is sent again with the same XID after the reconnect (for idempotent
     * procedures, or servers with a duplicate request cache).
     */
    static RpcTransport of(RpcRdmaClient client, boolean retry) {
        return new RpcTransport() {
            @Override
            public CompletableFuture<ReceivedMessage> send(MemorySegment m, long t) {
                return t == DEFAULT_TIMEOUT ? client.call(m, retry) : client.call(m, t, TimeUnit.NANOSECONDS, retry);
            }

            /**
             * A call that only allows a large reply is parked and retried as {@link #send(MemorySegment,
             * long)}; one with DDP goes on the current connection, neither parked during a
             * reconnect nor retried (its memory is exposed on that connection).
             */
            @Override
            public CompletableFuture<ReceivedMessage> send(MemorySegment m, DdpArgument payload,
                    MemorySegment receptacle, int maxReplyBytes, long t) {
                if (payload == null && receptacle == null) {
                    return t == DEFAULT_TIMEOUT ? client.call(m, maxReplyBytes, retry)
                            : client.call(m, maxReplyBytes, t, TimeUnit.NANOSECONDS, retry);
                }
                Connection c = client.connection();
                return t == DEFAULT_TIMEOUT ? c.call(m, payload, receptacle, maxReplyBytes)
                        : c.call(m, payload, receptacle, maxReplyBytes, t, TimeUnit.NANOSECONDS);
            }

            @Override
            public int maxReplyBytes() {
                return client.maxReplyBytes();
            }
        };
    }

    /** Backward calls to one client, across its reconnects. */
    static RpcTransport of(Backchannel b) {
        return (m, t) -> t == DEFAULT_TIMEOUT ? b.call(m) : b.call(m, t, TimeUnit.NANOSECONDS);
    }
}
