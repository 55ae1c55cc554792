package org.rpcrdma.oncrpc4j.example;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.dcache.oncrpc4j.rpc.OncRpcProgram;
import org.dcache.oncrpc4j.rpc.RpcAuthTypeNone;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcDispatchable;
import org.dcache.oncrpc4j.rpc.RpcTransport;
import org.dcache.oncrpc4j.xdr.XdrString;
import org.rpcrdma.oncrpc4j.OncRpcRdmaSvc;
import org.rpcrdma.oncrpc4j.OncRpcRdmaSvcBuilder;
import org.rpcrdma.oncrpc4j.RdmaRpcTransport;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;

/** The README's "Already using oncrpc4j?" example, compiled and run by HelloRdmaTest. */
public final class HelloRdma {
    static final OncRpcProgram HELLO = new OncRpcProgram(0x20000123, 1);
    static final int SAY_HELLO = 1;

    /** An oncrpc4j program, unchanged. */
    static final RpcDispatchable PROGRAM = call -> {
        XdrString name = new XdrString();
        call.retrieveCall(name);
        call.reply(new XdrString("hello " + name.stringValue()));
    };

    /** The server: the only change is the builder (was new OncRpcSvcBuilder().withTCP()...). */
    static OncRpcRdmaSvc service(int port) {
        OncRpcRdmaSvc svc = new OncRpcRdmaSvcBuilder()
                .withPort(port)
                .withWorkerThreadIoStrategy()
                .build();
        svc.register(HELLO, PROGRAM);
        return svc;
    }

    /** The client: an oncrpc4j RpcCall on an RDMA transport. */
    static String hello(RpcTransport transport, String name) throws Exception {
        XdrString reply = new XdrString();
        new RpcCall(HELLO.getNumber(), HELLO.getVersion(), new RpcAuthTypeNone(), transport)
                .call(SAY_HELLO, new XdrString(name), reply, 5, TimeUnit.SECONDS);
        return reply.stringValue();
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            service(RpcRdmaOptions.DEFAULT_PORT).start(); // serves until the JVM exits
            Thread.currentThread().join();
        }
        InetSocketAddress server = new InetSocketAddress(args[0], RpcRdmaOptions.DEFAULT_PORT);
        try (RpcRdmaClient client = RpcRdmaClient.connect(server, RpcRdmaOptions.defaults());
             RdmaRpcTransport transport = new RdmaRpcTransport(client, null, server, 1 << 20)) {
            System.out.println(hello(transport, "rdma"));
        }
    }
}
