package org.rpcrdma.transport.rpc;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;
import jdk.jfr.Unsigned;

/** JFR events of the transport (enable with -XX:StartFlightRecording; all in category RPC-over-RDMA). */
public final class Events {
    private Events() {}

    /**
     * One call of ours from issue to reply (or failure), per direction. Recorded only when
     * it took longer than its threshold (20 ms by default, as the JDK's default profile sets
     * for jdk.SocketRead): a profile does not record every call. No stack trace: the call
     * is completed on the thread that polls the completion queue, whose stack says nothing
     * of who made the call, and taking one per call is not cheap.
     */
    @Name("org.rpcrdma.Call")
    @Label("RPC Call")
    @Category("RPC-over-RDMA")
    @Description("One RPC from issue to reply or failure")
    @StackTrace(false)
    @Threshold("20 ms")
    public static final class Call extends Event {
        @Label("Connection") public String connection;
        @Label("Direction") @Description("FORWARD: client to server; BACKWARD: server to client (RFC 8167)")
        public String direction;
        @Label("XID") @Unsigned public int xid;
        @Label("Program") @Unsigned public int program;
        @Label("Version") @Unsigned public int version;
        @Label("Procedure") @Unsigned public int procedure;
        @Label("Call Bytes") @Description("The RPC call message, with its DDP-eligible data")
        @DataAmount public long callBytes;
        @Label("Reply Bytes") @Description("The RPC reply message, with data placed in the caller's write chunks")
        @DataAmount public long replyBytes;
        @Label("Outcome") @Description("reply, or why the call ended without one") public String outcome;
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
