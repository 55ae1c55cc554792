package org.rpcrdma.transport.core;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** JFR events of the transport (enable with -XX:StartFlightRecording; all in category RPC-over-RDMA). */
public final class Events {
    private Events() {}

    /** One RPC from send to reply (or failure), per direction. */
    @Name("org.rpcrdma.Call")
    @Label("RPC Call")
    @Category("RPC-over-RDMA")
    @Description("Latency of one call, from issue to reply or failure")
    public static final class Call extends Event {
        @Label("Connection") public String connection;
        @Label("Direction") public String direction;
        @Label("XID") public int xid;
        @Label("Outcome") public String outcome;
    }

    /** Tells whether Call events are recorded, without allocating an event per call. */
    public static final Call CALL_PROBE = new Call();

    /** Time a call waited for a credit (RFC 8166 §3.3). */
    @Name("org.rpcrdma.CreditWait")
    @Label("Credit Wait")
    @Category("RPC-over-RDMA")
    public static final class CreditWait extends Event {
        @Label("Connection") public String connection;
        @Label("Direction") public String direction;
        @Label("Window") public int window;
    }

    /** A connection changed state (open, closing, lost). */
    @Name("org.rpcrdma.ConnectionState")
    @Label("Connection State")
    @Category("RPC-over-RDMA")
    public static final class ConnectionState extends Event {
        @Label("Connection") public String connection;
        @Label("State") public String state;
        @Label("Reason") public String reason;
    }

    public static void state(String connection, String state, String reason) {
        ConnectionState e = new ConnectionState();
        if (e.shouldCommit()) {
            e.connection = connection;
            e.state = state;
            e.reason = reason;
            e.commit();
        }
    }
}
