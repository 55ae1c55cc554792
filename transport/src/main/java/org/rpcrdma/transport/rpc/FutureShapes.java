package org.rpcrdma.transport.rpc;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.rpcrdma.transport.Backchannel;
import org.rpcrdma.transport.CallTimeoutException;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.ReplyCallback;
import org.rpcrdma.transport.ReplyReader;
import org.rpcrdma.transport.RpcRdmaException;

/**
 * The blocking, read-in-place and callback shapes over a call's future, for the paths that
 * have one anyway: a call parked while its endpoint has no open connection, a retried call
 * (its bytes are copied), a backward call through a {@link Backchannel}. The future carries
 * the call's deadline, so a timeout ends it with {@link CallTimeoutException} here too.
 */
public final class FutureShapes {
    private static final System.Logger LOG = System.getLogger(FutureShapes.class.getName());

    private FutureShapes() {}

    /** Waits for the reply; a failure is rethrown as the {@link RpcRdmaException} it is. */
    public static ReceivedMessage await(CompletableFuture<ReceivedMessage> f) throws InterruptedException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            f.cancel(false);
            throw e;
        } catch (ExecutionException e) {
            throw unchecked(e.getCause());
        } catch (CancellationException e) {
            throw new RpcRdmaException("call cancelled", e);
        }
    }

    public static <T> T read(CompletableFuture<ReceivedMessage> f, ReplyReader<T> reader) throws InterruptedException {
        try (ReceivedMessage m = await(f)) {
            return reader.read(m.bytes());
        }
    }

    public static void callback(CompletableFuture<ReceivedMessage> f, ReplyCallback callback) {
        f.whenComplete((m, t) -> {
            if (t != null) {
                callback.onFailure(unchecked(t));
                return;
            }
            try (m) {
                callback.onReply(m.bytes());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "a reply callback threw: {0}", e.toString());
            }
        });
    }

    private static RuntimeException unchecked(Throwable t) {
        Throwable c = t instanceof CompletionException ce && ce.getCause() != null ? ce.getCause() : t;
        return c instanceof RuntimeException r ? r : new RpcRdmaException("call failed: " + c, c);
    }
}
