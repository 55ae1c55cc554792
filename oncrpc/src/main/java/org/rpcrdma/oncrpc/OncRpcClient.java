package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.MalformedReplyException;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcCaller;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.xdr.AuthSys;
import org.rpcrdma.xdr.OncRpc;
import org.rpcrdma.xdr.OpaqueAuth;
import org.rpcrdma.xdr.RpcCallHeader;
import org.rpcrdma.xdr.RpcMessageException;
import org.rpcrdma.xdr.RpcReplyHeader;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;

/**
 * Typed ONC RPC calls (RFC 5531) to one program version through an {@link RpcCaller}:
 * forward calls from a client ({@code RpcRdmaClient}, which follows reconnects, or a
 * {@code Connection}), or backward calls from a server (RFC 8167: a {@code Backchannel}, which
 * waits for a client that lost its connection to return, or the {@code Connection} a call
 * arrived on).
 *
 * <pre>{@code
 * OncRpcClient nfs = new OncRpcClient(rdmaClient, 100003, 4);
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

    private final RpcCaller transport;
    private final int program;
    private final int version;
    private final OpaqueAuth credential;
    /** The largest reply a call allows when its result codec has no bound. */
    private final int maxReplyBytes;

    /** Calls {@code program} version {@code version} through {@code transport} with AUTH_NONE. */
    public OncRpcClient(RpcCaller transport, int program, int version) {
        this(transport, program, version, OpaqueAuth.NONE, DEFAULT_MAX_REPLY_BYTES);
    }

    private OncRpcClient(RpcCaller transport, int program, int version, OpaqueAuth credential, int maxReplyBytes) {
        this.transport = java.util.Objects.requireNonNull(transport, "transport");
        this.program = program;
        this.version = version;
        this.credential = credential;
        this.maxReplyBytes = maxReplyBytes;
    }

    /** The same program with AUTH_SYS credentials (RFC 5531 Appendix A). */
    public OncRpcClient withAuthSys(AuthSys auth) {
        return new OncRpcClient(transport, program, version, auth.toOpaqueAuth(), maxReplyBytes);
    }

    /** The same program with any credential (its verifier is AUTH_NONE). */
    public OncRpcClient withCredential(OpaqueAuth cred) {
        return new OncRpcClient(transport, program, version, cred, maxReplyBytes);
    }

    /**
     * The same program, its calls allowing replies of up to {@code n} bytes (default
     * {@link #DEFAULT_MAX_REPLY_BYTES}; at most the transport's {@link RpcCaller#maxReplyBytes()},
     * {@code maxChunkBytes} on RDMA, beyond which it is clamped). A call offers a Reply
     * chunk that large when it exceeds the receive inline threshold (RFC 8166 §3.5.4); a
     * result codec with a smaller {@link XdrCodec#maxEncodedSize() bound} sizes it from
     * that bound instead. 0: replies must fit inline.
     */
    public OncRpcClient withMaxReplyBytes(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("negative maxReplyBytes " + n);
        }
        return new OncRpcClient(transport, program, version, credential, n);
    }

    /**
     * Replies a call allows by default: 128 KiB, so the default 32 credits of calls each
     * offering a Reply chunk that large fit the default 4 MiB of chunk memory.
     */
    public static final int DEFAULT_MAX_REPLY_BYTES = 128 << 10;
    /** {@code timeoutNanos} for the transport's default ({@code RpcRdmaOptions.callTimeoutMillis}). */
    private static final long DEFAULT_TIMEOUT = -1;
    /**
     * A reply's header before its results (RFC 5531 §9): XID, REPLY, MSG_ACCEPTED, the
     * verifier (flavor, length, up to MAX_AUTH_BYTES = 400 of body), SUCCESS.
     */
    static final int REPLY_HEADER_MAX = 5 * 4 + 400 + 4;

    public int program() {
        return program;
    }

    public int version() {
        return version;
    }

    /**
     * Calls {@code proc} with the transport's default timeout. A result that may exceed the
     * receive inline threshold comes through a Reply chunk the call offers, sized as
     * {@link #withMaxReplyBytes} says.
     */
    public <A, R> CompletableFuture<R> callAsync(RpcProcedure<A, R> proc, A args) {
        return send(proc, args, null, -1, DEFAULT_TIMEOUT);
    }

    /** Calls {@code proc} with its own timeout ({@code 0}: none); then {@code CallTimeoutException}. */
    public <A, R> CompletableFuture<R> callAsync(RpcProcedure<A, R> proc, A args, long timeout, TimeUnit unit) {
        return send(proc, args, null, -1, timeoutNanos(timeout, unit));
    }

    /** oncrpc4j's shape: procedure {@code proc} with its argument and result codecs given here. */
    public <A, R> CompletableFuture<R> callAsync(int proc, A args, XdrCodec<A> argCodec, XdrCodec<R> resultCodec) {
        return callAsync(new RpcProcedure<>(proc, argCodec, resultCodec), args);
    }

    /** Blocking {@link #callAsync(int, Object, XdrCodec, XdrCodec)}. */
    public <A, R> R call(int proc, A args, XdrCodec<A> argCodec, XdrCodec<R> resultCodec) throws InterruptedException {
        return call(new RpcProcedure<>(proc, argCodec, resultCodec), args);
    }

    /** {@link #callAsync(int, Object, XdrCodec, XdrCodec)} with its own timeout ({@code 0}: none). */
    public <A, R> CompletableFuture<R> callAsync(int proc, A args, XdrCodec<A> argCodec, XdrCodec<R> resultCodec,
            long timeout, TimeUnit unit) {
        return callAsync(new RpcProcedure<>(proc, argCodec, resultCodec), args, timeout, unit);
    }

    /** Blocking {@link #callAsync(int, Object, XdrCodec, XdrCodec, long, TimeUnit)}. */
    public <A, R> R call(int proc, A args, XdrCodec<A> argCodec, XdrCodec<R> resultCodec, long timeout, TimeUnit unit)
            throws InterruptedException {
        return call(new RpcProcedure<>(proc, argCodec, resultCodec), args, timeout, unit);
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
     * A call with direct data placement (RFC 8166 §3.4), as NFS WRITE and READ use it, with
     * the transport's default timeout. The argument's DDP-eligible item ({@link Codecs#payload}),
     * if any, goes as the call's {@link DdpArgument}, its segment as it is ({@link DdpArgument#of}):
     * in a read chunk the server pulls when the call does not fit inline (exposed in place
     * from registered memory), else copied into the Send. {@code receptacle} (may be null) is offered as a write
     * chunk for the result's DDP-eligible item: a {@link Codecs#payload} in the result codec
     * decodes into it, whether the server placed the data there or sent it inline (the
     * result is the slice filled). The reply is allowed as large as for
     * {@link #callAsync(RpcProcedure, Object)}.
     */
    public <A, R> CompletableFuture<R> callAsync(RpcProcedure<A, R> proc, A args, MemorySegment receptacle) {
        return send(proc, args, receptacle, -1, DEFAULT_TIMEOUT);
    }

    /** {@link #callAsync(RpcProcedure, Object, MemorySegment)} with its own timeout ({@code 0}: none). */
    public <A, R> CompletableFuture<R> callAsync(RpcProcedure<A, R> proc, A args, MemorySegment receptacle,
            long timeout, TimeUnit unit) {
        return send(proc, args, receptacle, -1, timeoutNanos(timeout, unit));
    }

    /** Blocking {@link #callAsync(RpcProcedure, Object, MemorySegment)}. */
    public <A, R> R call(RpcProcedure<A, R> proc, A args, MemorySegment receptacle) throws InterruptedException {
        return await(callAsync(proc, args, receptacle));
    }

    /** Blocking {@link #callAsync(RpcProcedure, Object, MemorySegment, long, TimeUnit)}. */
    public <A, R> R call(RpcProcedure<A, R> proc, A args, MemorySegment receptacle, long timeout, TimeUnit unit)
            throws InterruptedException {
        return await(callAsync(proc, args, receptacle, timeout, unit));
    }

    /**
     * {@link #callAsync(RpcProcedure, Object, MemorySegment)} with the largest reply given
     * here: {@code maxReplyBytes} (a Reply chunk is offered when it exceeds the inline
     * threshold; 0 for "inline only"), not derived from the result codec. A receptacle
     * baked into the result codec ({@link Codecs#payloadInto}) works as well.
     *
     * @throws IllegalArgumentException (in the future) for arguments with more than one
     *         DDP-eligible item: the transport places one per call
     */
    public <A, R> CompletableFuture<R> callAsync(RpcProcedure<A, R> proc, A args, MemorySegment receptacle,
            int maxReplyBytes) {
        return send(proc, args, receptacle, checkMaxReply(maxReplyBytes), DEFAULT_TIMEOUT);
    }

    /** {@link #callAsync(RpcProcedure, Object, MemorySegment, int)} with its own timeout ({@code 0}: none). */
    public <A, R> CompletableFuture<R> callAsync(RpcProcedure<A, R> proc, A args, MemorySegment receptacle,
            int maxReplyBytes, long timeout, TimeUnit unit) {
        return send(proc, args, receptacle, checkMaxReply(maxReplyBytes), timeoutNanos(timeout, unit));
    }

    /** Blocking {@link #callAsync(RpcProcedure, Object, MemorySegment, int)}. */
    public <A, R> R call(RpcProcedure<A, R> proc, A args, MemorySegment receptacle, int maxReplyBytes)
            throws InterruptedException {
        return await(callAsync(proc, args, receptacle, maxReplyBytes));
    }

    /** Blocking {@link #callAsync(RpcProcedure, Object, MemorySegment, int, long, TimeUnit)}. */
    public <A, R> R call(RpcProcedure<A, R> proc, A args, MemorySegment receptacle, int maxReplyBytes, long timeout,
            TimeUnit unit) throws InterruptedException {
        return await(callAsync(proc, args, receptacle, maxReplyBytes, timeout, unit));
    }

    /** Procedure 0 (RFC 5531 §12.1), blocking. */
    public void nullCall() throws InterruptedException {
        call(RpcProcedure.NULL, null);
    }

    /**
     * Every call goes here. {@code maxReply} -1: sized from the result codec's bound, else
     * this client's limit; either way clamped to what the transport allows.
     */
    private <A, R> CompletableFuture<R> send(RpcProcedure<A, R> proc, A args, MemorySegment receptacle, int maxReply,
            long timeoutNanos) {
        int allowed = maxReply >= 0 ? maxReply : replyLimit(proc.results());
        CompletableFuture<ReceivedMessage> reply;
        try {
            // the DDP-eligible argument is not encoded into the message: its segment goes as it is
            MessageEncoder.Encoded call = MessageEncoder.encodeLeavingOut(callBody(NEXT_XID.getAndIncrement(), proc,
                    args), 1);
            long[] at = call.ddpOffsets();
            if (at.length > 1) {
                throw new IllegalArgumentException(at.length + " DDP-eligible items in one call; the transport places one");
            }
            DdpArgument payload = at.length == 1 ? DdpArgument.of(at[0], call.leftOut()[0]) : null;
            CallOptions o = CallOptions.DEFAULT.withDdpArgument(payload).withReceptacle(receptacle)
                    .withMaxReplyBytes(allowed);
            if (timeoutNanos != DEFAULT_TIMEOUT) {
                o = o.withTimeout(timeoutNanos, TimeUnit.NANOSECONDS);
            }
            // a transport that refuses at once (BackchannelNotEnabledException) fails the future too
            reply = transport.call(call.message(), o);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        reply = reply.exceptionallyCompose(t -> CompletableFuture.failedFuture(ReplyLimit.explain(t, allowed,
                maxReply >= 0, transport.maxReplyBytes())));
        if (receptacle == null) {
            return reply.thenApply(r -> results(r, proc.results()));
        }
        return reply.thenApply(r -> Placement.during(receptacle, r.placedBytes(), () -> results(r, proc.results())));
    }

    /** The largest reply a call of a procedure with these results allows (see {@link #withMaxReplyBytes}). */
    int replyLimit(XdrCodec<?> results) {
        long bound = results.maxEncodedSize();
        long want = bound < 0 ? maxReplyBytes : Math.min(maxReplyBytes, REPLY_HEADER_MAX + bound);
        return (int) Math.min(want, transport.maxReplyBytes());
    }

    private static int checkMaxReply(int maxReplyBytes) {
        if (maxReplyBytes < 0) {
            throw new IllegalArgumentException("negative maxReplyBytes " + maxReplyBytes);
        }
        return maxReplyBytes;
    }

    private static long timeoutNanos(long timeout, TimeUnit unit) {
        if (timeout < 0) {
            throw new IllegalArgumentException("negative timeout " + timeout);
        }
        return unit.toNanos(timeout);
    }

    /** The Call message for {@code proc(args)} with its DDP-eligible items located. */
    <A> MessageEncoder.Encoded encodeCall(int xid, RpcProcedure<A, ?> proc, A args) {
        return MessageEncoder.encodeWithItems(callBody(xid, proc, args));
    }

    private <A> java.util.function.Consumer<org.rpcrdma.xdr.XdrWriter> callBody(int xid,
            RpcProcedure<A, ?> proc, A args) {
        return w -> {
            RpcCallHeader.encode(w, xid, program, version, proc.number(), credential, OpaqueAuth.NONE);
            proc.args().encode(w, args);
        };
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
