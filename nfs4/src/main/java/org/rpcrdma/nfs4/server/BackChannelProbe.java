package org.rpcrdma.nfs4.server;

import java.lang.System.Logger.Level;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.oncrpc.OncRpcClient;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.transport.Connection;

/**
 * Checks a session's back channel when it is bound (CREATE_SESSION, BIND_CONN_TO_SESSION):
 * a CB_NULL to the client's callback program over the client's own connection (RFC 8167).
 * Until it is answered no callback path is assumed; if it is not answered, SEQUENCE says
 * SEQ4_STATUS_CB_PATH_DOWN (RFC 8881 §18.46.3) and no delegation is granted.
 */
final class BackChannelProbe {
    private static final System.Logger LOG = System.getLogger(BackChannelProbe.class.getName());

    private final long timeoutMillis;
    private final Set<Session> answered = ConcurrentHashMap.newKeySet();

    BackChannelProbe(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    void probe(Session s) {
        Connection c = s.backChannel();
        answered.remove(s);
        s.callbackPath(false);
        try {
            c.markBackchannelReady(); // the client said it serves callbacks here (RFC 8167 §6)
            new OncRpcClient(c, s.cbProgram, Nfs4.CB_VERSION)
                    .callAsync(RpcProcedure.NULL, null, timeoutMillis, TimeUnit.MILLISECONDS)
                    .whenComplete((v, e) -> {
                        s.callbackPath(e == null);
                        answered.add(s);
                        LOG.log(e == null ? Level.DEBUG : Level.WARNING, "CB_NULL on the back channel: {0}",
                                e == null ? "answered" : e.toString());
                    });
        } catch (RuntimeException e) {
            answered.add(s);
            LOG.log(Level.WARNING, "CB_NULL not sent: {0}", e.toString());
        }
    }

    /** Whether the probe of {@code s} has ended (answered or failed). */
    boolean probed(Session s) {
        return answered.contains(s);
    }
}
