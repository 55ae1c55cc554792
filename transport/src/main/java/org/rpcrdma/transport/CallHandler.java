package org.rpcrdma.transport;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.rpcrdma.transport.rpc.ImmediateHandler;
import org.rpcrdma.transport.rpc.PeerCall;

/**
 * Serves calls received on a connection. Runs on the thread that took the call off the
 * completion queue (the connection's poller, or a caller of {@code callAndWait} that
 * dispatched it on the way): it must not block; reply at once, or hand the call to another
 * thread and reply later ({@link #onExecutor} does that for a whole handler).
 */
@FunctionalInterface
public interface CallHandler {
    void handle(IncomingCall call);

    /**
     * A handler that runs {@code handler} on {@code executor} instead of the completion
     * thread: for handlers that block or take long (the completion thread serves every
     * message of the connection). The call's bytes stay valid until it is answered. A
     * handler that throws (an {@link Error} too), or an executor that rejects the task, gets
     * the call answered SYSTEM_ERR, as on the completion thread.
     */
    static CallHandler onExecutor(Executor executor, CallHandler handler) {
        Objects.requireNonNull(executor, "executor");
        Objects.requireNonNull(handler, "handler");
        return call -> {
            Runnable task = () -> {
                try {
                    handler.handle(call);
                } catch (Throwable e) { // an Error too: else the call is never answered
                    failed(call, e);
                }
            };
            try {
                executor.execute(task);
            } catch (RejectedExecutionException e) {
                failed(call, e);
            }
        };
    }

    /**
     * A handler that answers each call before it returns, on the thread that gives it the
     * call: then the transport hands it one reused call object (no allocation per call on
     * the inline path). The call and its message are usable only inside
     * {@code handle}, on that thread; using them after it returned, or from another thread,
     * throws {@link IllegalStateException}. A call left unanswered when it returns is answered
     * SYSTEM_ERR (and counted as a handler failure). For handlers that hand calls to other
     * threads, use the handler itself or {@link #onExecutor}.
     */
    static CallHandler immediate(CallHandler handler) {
        return handler instanceof ImmediateHandler ? handler : new ImmediateHandler(handler);
    }

    private static void failed(IncomingCall call, Throwable e) {
        if (call instanceof PeerCall c) {
            c.handlerFailed(e);
        } else if (e instanceof RuntimeException r) {
            throw r;
        } else if (e instanceof Error r) {
            throw r;
        } else {
            throw new IllegalStateException("call handler threw", e);
        }
    }
}
