package org.rpcrdma.transport;

/**
 * Serves calls received on a connection. Runs on the connection's completion thread: it
 * must not block; reply at once or hand the call to another thread and reply later.
 */
@FunctionalInterface
public interface CallHandler {
    void handle(IncomingCall call);
}
