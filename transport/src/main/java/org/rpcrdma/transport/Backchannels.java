package org.rpcrdma.transport;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.rpcrdma.transport.rpc.CallRequest;

/**
 * A server's {@link Backchannel}s, one per client id: made on first use, bound to the
 * connection the client enables its backchannel on (RFC 8167 §5.4), forgotten once the
 * client stayed away ({@link Backchannel#IDLE_FORGET_MILLIS}) or its session ended.
 */
final class Backchannels {
    private final RpcRdmaOptions options;
    private final ConcurrentHashMap<Long, Backchannel> byClient;

    Backchannels(RpcRdmaOptions options) {
        this(options, new ConcurrentHashMap<>());
    }

    /** Over {@code byClient}: tests hold a client's entry (the map's per-key lock) to order a race. */
    Backchannels(RpcRdmaOptions options, ConcurrentHashMap<Long, Backchannel> byClient) {
        this.options = options;
        this.byClient = byClient;
    }

    /** The backchannel of {@code clientId}, made on first use. */
    Backchannel get(long clientId) {
        return byClient.computeIfAbsent(clientId, this::create);
    }

    private Backchannel create(long clientId) {
        return new Backchannel(clientId, options, this::forget);
    }

    /**
     * Client {@code clientId} enabled its backchannel on {@code c}: its calls go there now.
     * Bound in one step with the map's entry (its per-key lock), as {@link #forget} closes
     * and removes it: the forget either removed it first (a new one is made and bound here)
     * or then finds it bound to {@code c}, never a closed one bound.
     */
    Backchannel bind(long clientId, Connection c) {
        AtomicReference<List<CallRequest>> resend = new AtomicReference<>();
        Backchannel b = byClient.compute(clientId, (k, kept) -> {
            Backchannel x = kept == null ? create(k) : kept;
            resend.set(x.attach(c));
            return x;
        });
        b.resend(c, resend.get()); // no lock held: a call failing here runs its caller's code
        return b;
    }

    /** A backchannel's forget timer came due: closed and removed in one step, if still abandoned. */
    private void forget(Backchannel b, BooleanSupplier closeIfAbandoned) {
        byClient.computeIfPresent(b.clientId(), (k, kept) -> kept == b && closeIfAbandoned.getAsBoolean() ? null : kept);
    }

    /** Forgets {@code clientId}'s backchannel (its session ended); its waiting calls fail. */
    void remove(long clientId) {
        Backchannel b = byClient.remove(clientId);
        if (b != null) {
            b.close();
        }
    }

    /** The server closed: every backchannel's waiting calls fail. */
    void closeAll() {
        byClient.values().forEach(Backchannel::close);
        byClient.clear();
    }
}
