package org.rpcrdma.transport.rpc;

import java.util.Objects;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.IncomingCall;

/**
 * A handler that answers every call before it returns ({@link CallHandler#immediate}): the
 * responder may then give it the same call object each time (no allocation per call). On
 * the paths that do not reuse (chunked calls, a nested dispatch) it is an ordinary handler.
 */
public record ImmediateHandler(CallHandler handler) implements CallHandler {
    public ImmediateHandler {
        Objects.requireNonNull(handler, "handler");
    }

    @Override
    public void handle(IncomingCall call) {
        handler.handle(call);
    }
}
