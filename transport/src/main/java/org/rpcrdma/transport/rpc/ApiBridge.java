package org.rpcrdma.transport.rpc;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RpcRdmaStats;

/**
 * How the engine makes and reaches the API's objects without the API publishing a member
 * that only the engine needs (the JDK's {@code SharedSecrets} pattern): the API package
 * registers one {@link Access} when {@link Connection} is initialised, and the engine calls
 * it. The API classes keep package-private constructors; this package is not exported.
 */
public final class ApiBridge {
    /** What the engine needs of the API package. */
    public interface Access {
        /** The public face of a new connection engine. */
        Connection connection(ConnectionEngine engine);

        /** The engine behind a connection. */
        ConnectionEngine engine(Connection connection);

        /** A message in receive buffer {@code slot} of {@code owner}, {@code placed} bytes written in place (-1: none). */
        ReceivedMessage message(MemorySegment bytes, ConnectionEngine owner, int slot, long placed);

        /** A message whose release runs {@code releaser}, {@code placed} bytes written in place (-1: none). */
        ReceivedMessage message(MemorySegment bytes, Runnable releaser, long placed);

        /** The one message object an immediate handler of {@code owner} is given each time. */
        ReceivedMessage reusableMessage(ConnectionEngine owner);

        /** Points the reusable message at the next call's bytes. */
        void reuse(ReceivedMessage m, MemorySegment view, int slot);

        /** Whether {@code m} holds one of its connection's receive buffers. */
        boolean inReceiveBuffer(ReceivedMessage m);

        /** A snapshot of the {@link StatsCounters#sums()} of an endpoint's counters. */
        RpcRdmaStats snapshot(Map<String, Long> sums);
    }

    private static volatile Access access;

    private ApiBridge() {
    }

    /** Called once, by the API package. */
    public static void register(Access a) {
        if (access != null) {
            throw new IllegalStateException("API access registered twice");
        }
        access = a;
    }

    /** The API package's access (initialising {@link Connection}, which registers it, if need be). */
    public static Access access() {
        return Holder.ACCESS;
    }

    /** Constant once read: the JIT folds it. */
    private static final class Holder {
        static final Access ACCESS = load();

        private static Access load() {
            try {
                Class.forName(Connection.class.getName(), true, Connection.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            return access;
        }
    }
}
