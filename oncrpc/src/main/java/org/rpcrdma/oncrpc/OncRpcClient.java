package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.MalformedReplyException;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.wire.AuthSys;
import org.rpcrdma.transport.wire.OncRpc;
import org.rpcrdma.transport.wire.OpaqueAuth;
import org.rpcrdma.transport.wire.RpcCallHeader;
import org.rpcrdma.transport.wire.RpcMessageException;
import org.rpcrdma.transport.wire.RpcReplyHeader;
import org.rpcrdma.transport.wire.XdrException;
import org.rpcrdma.transport.wire.XdrReader;

/**
 * Typed ONC RPC calls (RFC 5531) to one program version through an {@link RpcTransport}:
 * forward calls from a client, or backward calls from a server (RFC 8167).
 *
 * <pre>{@code
 * OncRpcClient nfs = new OncRpcClient(RpcTransport.of(rdmaClient), 100003, 4);
 * nfs.nullCall();
 * R r = nfs.call(MY_PROC, args);                        // blocking
 * CompletableFuture<R> f = nfs.callAsync(MY_PROC, args); // or not
 * }</pre>
 *
 * <p>A reply other than an accepted SUCCESS fails the call with the matching
 * {@link RpcReplyException} and its results are never decoded; a reply that does not
 * decode fails it with {@link MalformedReplyException}; timeouts and a lost connection are
 * the transport's ({@code CallTimeoutException}, {@code ConnectionLostException}). Credentials
 * are AUTH_NONE unless {@link #withAuthSys}; verifiers are AUTH_NONE. Thread-safe and
 * immutable; XIDs come from one counter started at a random value.
 */
public final class OncRpcClient {
    private static final AtomicInteger NEXT_XID = new AtomicInteger(new SecureRandom().nextInt());

    private final RpcTransport transport;
    private final int program;
    private final int version;
    private final OpaqueAuth credential;

    /** Calls {@code program} version {@code version} through {@code transport} with AUTH_NONE. */
    public OncRpcClient(RpcTransport transport, int program, int version) {
        this(transport, program, version, OpaqueAuth.NONE);
    }

    private OncRpcClient(RpcTransport transport, int program, int version, OpaqueAuth credential) {
        this.transport = java.util.Objects.requireNonNull(transport, "transport");
        this.program = program;
        this.version = version;
        this.credential = credential;
    }

    /** The same program with AUTH_SYS credentials (RFC 5531 Appendix A). */
    public OncRpcClient withAuthSys(AuthSys auth) {
        return new OncRpcClient(transport, program, version, auth.toOpaqueAuth());
    }

    /** The same program with any credential (its verifier is AUTH_NONE). */
    public OncRpcClient withCredential(OpaqueAuth cred) {
        return new OncRpcClient(transport, program, version, cred);
    }

    public int program() {
        return program;
    }

    public int version() {
        return version;
    }

    /** Calls {@code proc} with the transport's default timeout. */
    public <A, R> CompletableFuture<R> callAsync(RpcProcedure<A, R> proc, A args) {
        return send(proc, args, RpcTransport.DEFAULT_TIMEOUT);
    }

    /** Calls {@code proc} with its own timeout ({@code 0}: none); then {@code CallTimeoutException}. */
    public <A, R> CompletableFuture<R> callAsync(RpcProcedure<A, R> proc, A args, long timeout, TimeUnit unit) {
        if (timeout < 0) {
            throw new IllegalArgumentException("negative timeout " + timeout);
        }
        return send(proc, args, unit.toNanos(timeout));
    }

    /** oncrpc4j's shape: procedure {@code proc} with its argument and result codecs given here. */
    public <A, R> CompletableFuture<R> callAsync(int proc, A args, XdrCodec<A> argCodec, XdrCodec<R> resultCodec) {
        return callAsync(new RpcProcedure<>(proc, argCodec, resultCodec), args);
    }

    /** Blocking {@link #callAsync(int, Object, XdrCodec, XdrCodec)}. */
    public <A, R> R call(int proc, A args, XdrCodec<A> argCodec, XdrCodec<R> resultCodec) throws InterruptedException {
        return call(new RpcProcedure<>(proc, argCodec, resultCodec), args);
    }

    /**
     * Blocking {@link #callAsync(RpcProcedure, Object)}: the results, or the call's failure
     * rethrown as it is ({@link RpcReplyException}, the transport's exceptions).
     */
    public <A, R> R call(RpcProcedure<A, R> proc, A args) throws InterruptedException {
        return await(callAsync(proc, args));
    }

    /** Blocking {@link #callAsync(RpcProcedure, Object, long, TimeUnit)}. */
    public <A, R> R call(RpcProcedure<A, R> proc, A args, long timeout, TimeUnit unit) throws InterruptedException {
        return await(callAsync(proc, args, timeout, unit));
    }

    /**
     * A call with direct data placement and a reply that may exceed the inline threshold
     * (RFC 8166 §3.4-3.5), as NFS WRITE and READ use it; the transport's default timeout.
     * The argument's DDP-eligible item ({@link Codecs#payload}), if any, goes as the call's
     * {@link DdpArgument}: in a read chunk the server pulls when the call does not fit
     * inline. {@code receptacle} (may be null) is offered as a write chunk; decode the
     * result into it with {@link Codecs#payloadInto}{@code (receptacle)}, which finds the
     * data placed there or inline, whichever the server chose. {@code maxReplyBytes} is the
     * largest reply expected (a Reply chunk is offered when it exceeds the inline threshold;
     * 0 for "inline only").
     *
     * @throws IllegalArgumentException (in the future) for arguments with more than one
     *         DDP-eligible item: the transport places one per call
     */
    public <A, R> CompletableFuture<R> callAsync(RpcProcedure<A, R> proc, A args, MemorySegment receptacle,
            int maxReplyBytes) {
        CompletableFuture<ReceivedMessage> reply;
        try {
            MessageEncoder.Encoded call = encodeCall(NEXT_XID.getAndIncrement(), proc, args);
            long[] at = call.ddpOffsets();
            if (at.length > 1) {
                throw new IllegalArgumentException(at.length + " DDP-eligible items in one call; the transport places one");
            }
            DdpArgument payload = at.length == 1 ? new DdpArgument(at[0], call.ddpLengths()[0]) : null;
            reply = transport.send(call.message(), payload, receptacle, maxReplyBytes);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (receptacle == null) {
            return reply.thenApply(r -> results(r, proc.results()));
        }
        return reply.thenApply(r -> r.placedBytes() < 0 ? results(r, proc.results())
                : Placement.during(receptacle, r.placedBytes(), () -> results(r, proc.results())));
    }

    /** Blocking {@link #callAsync(RpcProcedure, Object, MemorySegment, int)}. */
    public <A, R> R call(RpcProcedure<A, R> proc, A args, MemorySegment receptacle, int maxReplyBytes)
            throws InterruptedException {
        return await(callAsync(proc, args, receptacle, maxReplyBytes));
    }

    /** Procedure 0 (RFC 5531 §12.1), blocking. */
    public void nullCall() throws InterruptedException {
        call(RpcProcedure.NULL, null);
    }

    /**
     * A call without chunks of its own (the transport still sends one too large for the
     * inline threshold as a long call). Calls with DDP go through
     * {@link #callAsync(RpcProcedure, Object, MemorySegment, int)}.
     */
    private <A, R> CompletableFuture<R> send(RpcProcedure<A, R> proc, A args, long timeoutNanos) {
        CompletableFuture<ReceivedMessage> reply;
        try {
            MessageEncoder.Encoded call = encodeCall(NEXT_XID.getAndIncrement(), proc, args);
            // a transport that refuses at once (BackchannelNotEnabledException) fails the future too
            reply = transport.send(call.message(), timeoutNanos);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return reply.thenApply(r -> results(r, proc.results()));
    }

    /** The Call message for {@code proc(args)} with its DDP-eligible items located. */
    <A> MessageEncoder.Encoded encodeCall(int xid, RpcProcedure<A, ?> proc, A args) {
        return MessageEncoder.encodeWithItems(w -> {
            RpcCallHeader.encode(w, xid, program, version, proc.number(), credential, OpaqueAuth.NONE);
            proc.args().encode(w, args);
        });
    }

    /** The reply's results; never decoded unless the reply is MSG_ACCEPTED / SUCCESS (RFC 5531 §9). */
    private static <R> R results(ReceivedMessage reply, XdrCodec<R> codec) {
        try (reply) {
            MemorySegment b = reply.bytes();
            XdrReader r = new XdrReader(b, 0, b.byteSize());
            RpcReplyHeader h = new RpcReplyHeader().decode(r);
            if (h.replyStat() == OncRpc.MSG_DENIED) {
                throw h.rejectStat() == OncRpc.RPC_MISMATCH
                        ? new RpcReplyException.RpcMismatch(h.xid(), h.mismatchLow(), h.mismatchHigh())
                        : new RpcReplyException.AuthError(h.xid(), h.authStat());
            }
            switch (h.acceptStat()) {
                case OncRpc.SUCCESS -> { }
                case OncRpc.PROG_UNAVAIL -> throw new RpcReplyException.ProgUnavail(h.xid());
                case OncRpc.PROG_MISMATCH -> throw new RpcReplyException.ProgMismatch(h.xid(), h.mismatchLow(),
                        h.mismatchHigh());
                case OncRpc.PROC_UNAVAIL -> throw new RpcReplyException.ProcUnavail(h.xid());
                case OncRpc.GARBAGE_ARGS -> throw new RpcReplyException.GarbageArgs(h.xid());
                case OncRpc.SYSTEM_ERR -> throw new RpcReplyException.SystemErr(h.xid());
                default -> throw new MalformedReplyException("call 0x" + Integer.toHexString(h.xid())
                        + ": accept_stat " + h.acceptStat(), null); // RpcReplyHeader admits none: a guard
            }
            try {
                return codec.decode(r);
            } catch (XdrException e) {
                throw new MalformedReplyException("call 0x" + Integer.toHexString(h.xid())
                        + ": results do not decode: " + e.getMessage(), e);
            }
        } catch (RpcMessageException e) {
            throw new MalformedReplyException("malformed RPC reply: " + e.getMessage(), e);
        }
    }

    /** Waits for a call; rethrows its failure unwrapped (interrupt: the call is abandoned). */
    static <R> R await(CompletableFuture<R> f) throws InterruptedException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            f.cancel(false);
            throw e;
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        } catch (CancellationException e) {
            throw new RpcRdmaException("call cancelled", e);
        }
    }

    private static RuntimeException unwrap(Throwable t) {
        Throwable c = t instanceof CompletionException ce && ce.getCause() != null ? ce.getCause() : t;
        return c instanceof RuntimeException r ? r : new RpcRdmaException("call failed: " + c, c);
    }
}
