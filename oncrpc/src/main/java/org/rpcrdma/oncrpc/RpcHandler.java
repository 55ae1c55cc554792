package org.rpcrdma.oncrpc;

/**
 * Serves one procedure: gets the decoded arguments and answers through {@code call} now
 * ({@link RpcServerCall#reply} before returning) or later, from any thread, exactly once.
 * It runs on the connection's completion thread, so it must not block: work that waits
 * goes to another thread, which replies when done. Throwing before replying answers the
 * call SYSTEM_ERR.
 *
 * <pre>{@code
 * v1.procedure(ECHO, (args, call) -> call.reply(args));
 * v1.procedure(SLOW, (args, call) -> pool.submit(() -> call.reply(work(args))));
 * }</pre>
 */
@FunctionalInterface
public interface RpcHandler<A, R> {
    void handle(A args, RpcServerCall<R> call);
}
