package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.security.SecureRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.wire.AuthSys;
import org.rpcrdma.transport.wire.OncRpc;
import org.rpcrdma.transport.wire.OpaqueAuth;
import org.rpcrdma.transport.wire.RpcCallHeader;
import org.rpcrdma.transport.wire.RpcMessageException;
import org.rpcrdma.transport.wire.RpcReplyHeader;
import org.rpcrdma.transport.wire.XdrReader;
import org.rpcrdma.transport.wire.XdrWriter;

/**
 * ONC RPC calls (RFC 5531) of one program and version over a {@link Connection}, with
 * AUTH_NONE or AUTH_SYS credentials. A NULL call in three lines:
 *
 * <pre>{@code
 * try (var c = RpcRdmaClient.connect(new InetSocketAddress(host, 20049), RpcRdmaOptions.defaults())) {
 *     new RpcClient(c, 100003, 4).nullCall();
 * }
 * }</pre>
 *
 * Thread-safe; XIDs start at a random value and increase.
 */
public final class RpcClient {
    private static final AtomicInteger NEXT_XID = new AtomicInteger(new SecureRandom().nextInt());

    /** Sends one call: the client endpoint's (follows reconnects) or one connection's. */
    private final Function<MemorySegment, CompletableFuture<ReceivedMessage>> transport;
    private final int program;
    private final int version;
    private final OpaqueAuth credential;

    /** Calls through the client endpoint: after a reconnect, on the new connection. */
    public RpcClient(RpcRdmaClient client, int program, int version) {
        this(client::call, program, version, OpaqueAuth.NONE);
    }

    /** Calls on one connection (e.g. a server's backward calls, or an {@code InMemoryPair}). */
    public RpcClient(Connection connection, int program, int version) {
        this(connection::call, program, version, OpaqueAuth.NONE);
    }

    private RpcClient(Function<MemorySegment, CompletableFuture<ReceivedMessage>> transport, int program, int version,
            OpaqueAuth credential) {
        this.transport = transport;
        this.program = program;
        this.version = version;
        this.credential = credential;
    }

    /** The same program with AUTH_SYS credentials (RFC 5531 Appendix A). */
    public RpcClient withAuthSys(AuthSys auth) {
        return new RpcClient(transport, program, version, auth.toOpaqueAuth());
    }

    /** Builds the Call message bytes (header + args). */
    public byte[] encodeCall(int xid, int procedure, byte[] args) {
        int hlen = RpcCallHeader.encodedLength(credential, OpaqueAuth.NONE);
        byte[] msg = new byte[hlen + args.length];
        MemorySegment seg = MemorySegment.ofArray(msg);
        RpcCallHeader.encode(new XdrWriter(seg, 0, hlen), xid, program, version, procedure, credential, OpaqueAuth.NONE);
        System.arraycopy(args, 0, msg, hlen, args.length);
        return msg;
    }

    /**
     * Calls {@code procedure} with XDR-encoded {@code args}; the future completes with the
     * results bytes of an accepted SUCCESS reply, or with {@link RpcReplyException}, or the
     * transport's exception.
     */
    public CompletableFuture<byte[]> callAsync(int procedure, byte[] args) {
        int xid = NEXT_XID.getAndIncrement();
        return transport.apply(MemorySegment.ofArray(encodeCall(xid, procedure, args))).thenApply(RpcClient::results);
    }

    private static byte[] results(ReceivedMessage m) {
        try (m) {
            MemorySegment b = m.bytes();
            RpcReplyHeader h = new RpcReplyHeader().decode(new XdrReader(b, 0, b.byteSize()));
            if (!h.isSuccess()) {
                boolean accepted = h.replyStat() == OncRpc.MSG_ACCEPTED;
                throw new RpcReplyException(h.xid(), h.replyStat(), accepted ? h.acceptStat() : h.rejectStat(),
                        h.mismatchLow(), h.mismatchHigh());
            }
            return b.asSlice(h.resultsOffset()).toArray(ValueLayout.JAVA_BYTE);
        } catch (RpcMessageException e) {
            throw new RpcRdmaException("malformed RPC reply: " + e.getMessage(), e);
        }
    }

    /** Blocking call. */
    public byte[] call(int procedure, byte[] args, long timeout, TimeUnit unit) throws InterruptedException, TimeoutException {
        try {
            return callAsync(procedure, args).get(timeout, unit);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() instanceof CompletionException ce ? ce.getCause() : e.getCause();
            if (c instanceof RuntimeException r) {
                throw r;
            }
            throw new RpcRdmaException("call failed", c);
        }
    }

    /** Procedure 0, no arguments, no results (RFC 5531 §12.1); waits up to 30 s. */
    public void nullCall() throws InterruptedException, TimeoutException {
        call(0, new byte[0], 30, TimeUnit.SECONDS);
    }
}
