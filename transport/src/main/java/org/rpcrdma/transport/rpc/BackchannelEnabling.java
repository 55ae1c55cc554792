package org.rpcrdma.transport.rpc;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.function.BiConsumer;
import org.rpcrdma.transport.BackchannelNotEnabledException;
import org.rpcrdma.transport.Connection;

/**
 * Whether one {@link ConnectionEngine}'s backward direction is on (RFC 8167 §4.1, §6): on a
 * client, whether it announced its backchannel with our control program and which
 * instance id it gave; on a server, whether the client enabled it here (then backward calls
 * may be sent) and whom to tell. Both sides keep whether backward calls may carry chunks
 * (RFC 8167 §5.3).
 */
public final class BackchannelEnabling {
    private static final System.Logger LOG = System.getLogger(BackchannelEnabling.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String name;
    private final boolean client;
    private volatile boolean ready;
    /** See {@link #backwardChunks(boolean)}. */
    private volatile boolean backwardChunks;
    private volatile boolean announced;
    /** Server: told when a client enables its backchannel here, with the client's instance id. */
    private volatile BiConsumer<Connection, Long> listener;
    private volatile long clientInstance;

    public BackchannelEnabling(String name, boolean client) {
        this.name = name;
        this.client = client;
    }

    /** Client: the enable call of our control program, remembered as announced (to repeat after reconnect). */
    public MemorySegment announce() {
        announced = true;
        return BackchannelControl.enableCall(RANDOM.nextInt(), clientInstance, backwardChunks);
    }

    /** Client: whether the backchannel was announced with our control program. */
    public boolean announced() {
        return announced;
    }

    /** Server: the upper layer learned that the client is ready for backward calls. */
    public void markReady() {
        ready = true;
    }

    /** Refuses a call in the backward direction before the client enabled its backchannel. */
    public void checkReady() {
        if (!client && !ready) {
            throw new BackchannelNotEnabledException(name + ": client has not enabled its backchannel;"
                    + " backward call not sent");
        }
    }

    /** Client: the instance id sent when enabling the backchannel (the same on every connection). */
    public void clientInstance(long id) {
        this.clientInstance = id;
    }

    public long clientInstance() {
        return clientInstance;
    }

    /**
     * Chunked backward calls (RFC 8167 §5.3) on this connection: a client's, whether it
     * takes them (set by its endpoint, said in the enable call); a server's, whether the
     * client said so (then it may send them).
     */
    public void backwardChunks(boolean v) {
        this.backwardChunks = v;
    }

    public boolean backwardChunks() {
        return backwardChunks;
    }

    /** Server: called when a client enables its backchannel on this connection. */
    public void listener(BiConsumer<Connection, Long> l) {
        this.listener = l;
    }

    /** Server: the client enabled its backchannel on {@code conn} with our control program (and was answered). */
    void enabled(ConnectionEngine conn, long instance) {
        if (instance != 0) {
            clientInstance = instance;
        }
        BiConsumer<Connection, Long> l = listener;
        if (l != null && instance != 0) {
            try {
                l.accept(conn.connection(), instance);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, name + ": backchannel listener threw", e);
            }
        }
    }
}
