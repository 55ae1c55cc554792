package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import org.rpcrdma.transport.rpc.ApiBridge;
import org.rpcrdma.transport.rpc.ConnectionEngine;

/** What the engine may do with this package's objects: see {@link ApiBridge}. */
final class EngineAccess implements ApiBridge.Access {
    @Override
    public Connection connection(ConnectionEngine engine) {
        return new Connection(engine);
    }

    @Override
    public ConnectionEngine engine(Connection connection) {
        return connection.engine();
    }

    @Override
    public ReceivedMessage message(MemorySegment bytes, ConnectionEngine owner, int slot, long placed) {
        return new ReceivedMessage(bytes, owner, slot, placed);
    }

    @Override
    public ReceivedMessage message(MemorySegment bytes, Runnable releaser, long placed) {
        return new ReceivedMessage(bytes, releaser, placed);
    }

    @Override
    public ReceivedMessage reusableMessage(ConnectionEngine owner) {
        return ReceivedMessage.reusable(owner);
    }

    @Override
    public void reuse(ReceivedMessage m, MemorySegment view, int slot) {
        m.reuse(view, slot);
    }

    @Override
    public boolean inReceiveBuffer(ReceivedMessage m) {
        return m.inReceiveBuffer();
    }

    @Override
    public RpcRdmaStats snapshot(Map<String, Long> sums) {
        return new RpcRdmaStats(sums);
    }
}
