package org.rpcrdma.oncrpc.tools;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.oncrpc.Codecs;
import org.rpcrdma.oncrpc.OncRpcClient;
import org.rpcrdma.oncrpc.RpcProcedure;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaOptions;

/**
 * {@code rpcrdma-ping HOST[:PORT] PROGRAM VERSION [-c COUNT] [-s SIZE]}: NULL calls
 * (procedure 0, AUTH_NONE) over RPC-over-RDMA to any ONC RPC server; prints each round trip
 * and a min/median/max summary. {@code -s} pads each call with SIZE zero bytes of
 * arguments (a NULL procedure ignores them): past the inline threshold the call goes as a
 * long call, RDMA_NOMSG with a Position-Zero Read chunk the server pulls (RFC 8166 §3.5.3).
 * Exit status 0 only if every call got an accepted reply; 1 if some did not; 2 for usage or
 * connection errors. Built on the typed layer ({@link OncRpcClient}), so a refused call
 * prints what the server said.
 */
public final class RpcRdmaPing {
    private RpcRdmaPing() {}

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        String target = null;
        Integer prog = null;
        Integer vers = null;
        int count = 5;
        int pad = 0;
        try {
            for (int i = 0; i < args.length; i++) {
                if (args[i].equals("-c")) {
                    count = Integer.parseInt(args[++i]);
                    if (count < 1) {
                        throw new IllegalArgumentException("COUNT must be >= 1");
                    }
                } else if (args[i].equals("-s")) {
                    pad = Integer.parseInt(args[++i]);
                    if (pad < 0 || pad % 4 != 0 || pad > RpcRdmaOptions.DEFAULT_MAX_CHUNK_BYTES - 1024) {
                        throw new IllegalArgumentException("SIZE must be a multiple of 4 from 0 to "
                                + (RpcRdmaOptions.DEFAULT_MAX_CHUNK_BYTES - 1024));
                    }
                } else if (target == null) {
                    target = args[i];
                } else if (prog == null) {
                    prog = Integer.decode(args[i]);
                } else if (vers == null) {
                    vers = Integer.decode(args[i]);
                } else {
                    throw new IllegalArgumentException("unexpected argument " + args[i]);
                }
            }
            if (vers == null) {
                throw new IllegalArgumentException("missing arguments");
            }
        } catch (RuntimeException e) {
            System.err.println("rpcrdma-ping: " + e.getMessage());
            System.err.println("usage: rpcrdma-ping HOST[:PORT] PROGRAM VERSION [-c COUNT] [-s SIZE]");
            return 2;
        }
        String host = target;
        int port = RpcRdmaOptions.DEFAULT_PORT;
        int colon = target.lastIndexOf(':');
        if (colon > 0 && target.indexOf(':') == colon) {
            host = target.substring(0, colon);
            port = Integer.parseInt(target.substring(colon + 1));
        }
        InetSocketAddress addr = new InetSocketAddress(host, port);
        long[] rtt = new long[count];
        int ok = 0;
        try (RpcRdmaClient c = RpcRdmaClient.connect(addr, RpcRdmaOptions.defaults())) {
            OncRpcClient rpc = new OncRpcClient(c, prog, vers);
            RpcProcedure<byte[], Void> padded = new RpcProcedure<>(0, Codecs.fixedOpaque(pad), Codecs.VOID);
            System.out.printf("RPC-over-RDMA NULL to %s program %d version %d (inline %d/%d)%s%n", addr, prog, vers,
                    c.connection().sendInlineThreshold(), c.connection().receiveInlineThreshold(),
                    pad == 0 ? "" : ", " + pad + " bytes of padding after the call header");
            for (int i = 0; i < count; i++) {
                long t0 = System.nanoTime();
                try {
                    rpc.call(padded, new byte[pad], 30, TimeUnit.SECONDS);
                    rtt[ok++] = System.nanoTime() - t0;
                    System.out.printf("reply from %s: seq=%d time=%.1f us%n", addr, i, rtt[ok - 1] / 1000.0);
                } catch (Exception e) {
                    System.out.printf("seq=%d failed: %s%n", i, e.getMessage());
                }
            }
        } catch (RuntimeException e) {
            System.err.println("rpcrdma-ping: cannot connect to " + addr + ": " + e.getMessage());
            return 2;
        }
        if (ok > 0) {
            long[] s = Arrays.copyOf(rtt, ok);
            Arrays.sort(s);
            System.out.printf("%d calls, %d accepted; rtt min/median/max = %.1f/%.1f/%.1f us%n", count, ok,
                    s[0] / 1000.0, s[ok / 2] / 1000.0, s[ok - 1] / 1000.0);
        } else {
            System.out.printf("%d calls, 0 accepted%n", count);
        }
        return ok == count ? 0 : 1;
    }
}
