package org.rpcrdma.oncrpc4j;

import java.io.IOException;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcDispatchable;
import org.dcache.oncrpc4j.rpc.RpcException;
import org.dcache.oncrpc4j.xdr.Xdr;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.IncomingCall;

/**
 * Turns each received call into an oncrpc4j {@link RpcCall} and dispatches it to the
 * program registered for its program and version, answering as oncrpc4j's own dispatcher
 * does: PROG_UNAVAIL for an unknown program, the reject status of an {@link RpcException}
 * (an authentication error), GARBAGE_ARGS for arguments that do not decode, SYSTEM_ERR for a
 * program that fails otherwise.
 */
final class RpcCallDispatcher implements CallHandler {
    private static final System.Logger LOG = System.getLogger(RpcCallDispatcher.class.getName());

    private final Map<OncRpcProgram, RpcDispatchable> programs;
    private final Function<Connection, RdmaRpcTransport> transports;
    private final Consumer<RpcCall> interceptor;

    RpcCallDispatcher(Map<OncRpcProgram, RpcDispatchable> programs, Function<Connection, RdmaRpcTransport> transports,
            Consumer<RpcCall> interceptor) {
        this.programs = programs;
        this.transports = transports;
        this.interceptor = interceptor;
    }

    @Override
    public void handle(IncomingCall in) {
        Xdr xdr = XdrSegments.received(in.message());
        RpcCall call = new RpcCall(in.xid(), xdr, new CallTransport(transports.apply(in.connection()), in));
        try {
            xdr.xdrDecodeInt(); // xid and msg_type: the transport matched both
            xdr.xdrDecodeInt();
            call.accept();
        } catch (RpcException e) {
            call.reject(e.getStatus(), e.getRpcReply());
            return;
        } catch (IOException e) {
            // oncrpc4j's TCP filter drops such a call; here that would hold the caller's credit
            call.failRpcGarbage();
            return;
        }
        RpcDispatchable program = programs.get(new OncRpcProgram(call.getProgram(), call.getProgramVersion()));
        if (program == null) {
            call.failProgramUnavailable();
            return;
        }
        try {
            if (interceptor != null) {
                interceptor.accept(call);
            }
            program.dispatchOncRpcCall(call);
        } catch (RpcException e) {
            call.reject(e.getStatus(), e.getRpcReply());
        } catch (IOException e) { // OncRpcException too: arguments that do not decode
            LOG.log(System.Logger.Level.DEBUG, "{0}: {1}", call, e.getMessage());
            call.failRpcGarbage();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "{0} failed: {1}", call, e.toString());
            call.failRpcSystem();
        }
    }
}
