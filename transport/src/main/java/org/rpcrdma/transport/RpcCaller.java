package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * One way to make RPC calls, whoever makes them: a {@link Connection} (forward from a
 * client, backward from a server), an {@link RpcRdmaClient} (forward, across reconnects) and
 * a server's {@link Backchannel} to one client (backward, waiting for a client that lost its
 * connection, RFC 8167 §5.4). Each call takes its bytes (an ONC RPC CALL, from its XID on),
 * {@link CallOptions} (timeout, retry, maxReplyBytes, DDP argument, receptacle; every
 * implementation takes every option) and comes in four shapes:
 * <ul>
 * <li>future: {@link #call(MemorySegment, CallOptions)}; release the reply;</li>
 * <li>blocking: {@link #callAndWait(MemorySegment, CallOptions)}; release the reply;</li>
 * <li>read in place: {@link #callAndRead(MemorySegment, CallOptions, ReplyReader)}, the
 *     reply's bytes valid while the reader runs;</li>
 * <li>callback: {@link #call(MemorySegment, CallOptions, ReplyCallback)}, exactly once.</li>
 * </ul>
 *
 * <p>One exception family: a call that fails ends with an unchecked {@link RpcRdmaException}
 * ({@link CallTimeoutException}, {@link ConnectionLostException}, {@link RdmaErrorException},
 * {@link MalformedReplyException}, ...), thrown by the blocking shapes, completing the
 * future exceptionally, or given to {@link ReplyCallback#onFailure}. Blocking shapes also
 * throw {@link InterruptedException} (the call is then abandoned). Bad arguments are
 * thrown at the call in every shape, before anything is sent: {@link IllegalArgumentException}
 * naming the argument ({@code rpcCall} that is not an ONC RPC CALL, {@code maxReplyBytes},
 * {@code ddpArgument}, {@code receptacle}; a negative timeout already when the options are
 * built), {@link NullPointerException} for a null one.
 */
public interface RpcCaller {
    /**
     * Sends a call; the future completes with the reply (release it) or exceptionally.
     * Cancelling the future abandons the call (its late reply is dropped when it comes).
     */
    CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions options);

    /**
     * Sends a call and waits for its reply (release it).
     *
     * @throws InterruptedException if interrupted while waiting (the call is abandoned)
     */
    ReceivedMessage callAndWait(MemorySegment rpcCall, CallOptions options) throws InterruptedException;

    /**
     * Sends a call, waits for its reply and runs {@code reader} on this thread with the
     * reply's bytes (from its XID), valid only until it returns; then the receive buffer
     * goes back. On a connection nothing is allocated per call on the inline path.
     *
     * @return what {@code reader} returned
     * @throws InterruptedException if interrupted while waiting (the call is abandoned)
     */
    <T> T callAndRead(MemorySegment rpcCall, CallOptions options, ReplyReader<T> reader) throws InterruptedException;

    /**
     * Sends a call answered through {@code callback}, exactly once, on the thread that took
     * the completion (a timeout's on an expiry thread): it must not block. On a connection
     * nothing is allocated per call on the inline path, and the bytes must stay valid until
     * the call completes.
     */
    void call(MemorySegment rpcCall, CallOptions options, ReplyCallback callback);

    /**
     * The largest reply a call here may allow ({@link CallOptions#withMaxReplyBytes}): 0
     * where replies must fit inline.
     */
    int maxReplyBytes();

    /** {@link #call(MemorySegment, CallOptions)} with {@link CallOptions#DEFAULT}. */
    default CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall) {
        return call(rpcCall, CallOptions.DEFAULT);
    }

    /** {@link #callAndWait(MemorySegment, CallOptions)} with {@link CallOptions#DEFAULT}. */
    default ReceivedMessage callAndWait(MemorySegment rpcCall) throws InterruptedException {
        return callAndWait(rpcCall, CallOptions.DEFAULT);
    }

    /** {@link #callAndRead(MemorySegment, CallOptions, ReplyReader)} with {@link CallOptions#DEFAULT}. */
    default <T> T callAndRead(MemorySegment rpcCall, ReplyReader<T> reader) throws InterruptedException {
        return callAndRead(rpcCall, CallOptions.DEFAULT, reader);
    }

    /** {@link #call(MemorySegment, CallOptions, ReplyCallback)} with {@link CallOptions#DEFAULT}. */
    default void call(MemorySegment rpcCall, ReplyCallback callback) {
        call(rpcCall, CallOptions.DEFAULT, callback);
    }
}
