package org.rpcrdma.oncrpc4j;

import static org.rpcrdma.oncrpc4j.EchoProgram.*;

import java.nio.channels.CompletionHandler;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.dcache.oncrpc4j.rpc.RpcAuthTypeNone;
import org.dcache.oncrpc4j.rpc.RpcAuthTypeUnix;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcReply;
import org.dcache.oncrpc4j.rpc.RpcTransport;
import org.dcache.oncrpc4j.xdr.XdrInt;
import org.dcache.oncrpc4j.xdr.XdrVoid;

/**
 * The calls an oncrpc4j client makes to {@link EchoProgram}, each described by its outcome,
 * so that one transport's answers can be compared with another's. The program's own code
 * and the client's are the same on every transport.
 */
final class Scenarios {
    /** Bigger than the default 4 KiB inline threshold: goes through a Reply chunk on RDMA. */
    static final int LARGE = 60_000;

    private Scenarios() {
    }

    static List<String> run(RpcTransport t) throws Exception {
        List<String> out = new ArrayList<>();
        RpcCall client = new RpcCall(PROG, VERS, new RpcAuthTypeUnix(1000, 100, new int[] {100, 200}, 0, "client"), t);
        out.add(outcome(() -> {
            client.call(NULL, XdrVoid.XDR_VOID, XdrVoid.XDR_VOID, 30, TimeUnit.SECONDS);
            return "null";
        }));
        out.add(outcome(() -> echo(client, pattern(100))));
        out.add(outcome(() -> echo(client, pattern(LARGE))));
        out.add(outcome(() -> {
            Ids ids = new Ids();
            client.call(WHOAMI, XdrVoid.XDR_VOID, ids, 30, TimeUnit.SECONDS);
            return "whoami " + ids;
        }));
        out.add(outcome(() -> {
            XdrInt sum = new XdrInt();
            client.call(ADD, new XdrInt(5), sum, 30, TimeUnit.SECONDS); // the second int is missing
            return "sum " + sum.intValue();
        }));
        for (int proc : new int[] {SYSTEM, THROWS, TOO_WEAK, MISMATCH, 99}) {
            out.add(outcome(() -> {
                client.call(proc, XdrVoid.XDR_VOID, XdrVoid.XDR_VOID, 30, TimeUnit.SECONDS);
                return "proc " + proc + " answered";
            }));
        }
        for (RpcCall other : List.of(new RpcCall(PROG + 1, VERS, new RpcAuthTypeNone(), t),
                new RpcCall(PROG, VERS + 1, new RpcAuthTypeNone(), t))) {
            out.add(outcome(() -> {
                other.call(NULL, XdrVoid.XDR_VOID, XdrVoid.XDR_VOID, 30, TimeUnit.SECONDS);
                return other + " answered";
            }));
        }
        out.add(outcome(() -> {
            Blob answer = new Blob();
            client.call(CALLBACK, new Blob(new byte[] {1, 2, 3, 4, 5}), answer, 30, TimeUnit.SECONDS);
            return "callback " + Arrays.toString(answer.bytes);
        }));
        out.add(outcome(() -> {
            CompletableFuture<Blob> f = client.call(ECHO, new Blob(pattern(LARGE)), Blob.class);
            return "future " + check(pattern(LARGE), f.get(30, TimeUnit.SECONDS).bytes);
        }));
        out.add(outcome(() -> {
            CompletableFuture<String> done = new CompletableFuture<>();
            client.call(ECHO, new Blob(pattern(7)), new CompletionHandler<RpcReply, RpcTransport>() {
                @Override
                public void completed(RpcReply reply, RpcTransport transport) {
                    try {
                        Blob b = new Blob();
                        reply.getReplyResult(b);
                        done.complete("handler " + check(pattern(7), b.bytes));
                    } catch (Exception e) {
                        done.completeExceptionally(e);
                    }
                }

                @Override
                public void failed(Throwable e, RpcTransport transport) {
                    done.completeExceptionally(e);
                }
            }, 30, TimeUnit.SECONDS);
            return done.get(30, TimeUnit.SECONDS);
        }));
        out.add(outcome(() -> {
            CompletableFuture<String> failed = new CompletableFuture<>();
            client.call(SYSTEM, XdrVoid.XDR_VOID, new CompletionHandler<RpcReply, RpcTransport>() {
                @Override
                public void completed(RpcReply reply, RpcTransport transport) {
                    failed.complete("completed");
                }

                @Override
                public void failed(Throwable e, RpcTransport transport) {
                    failed.complete("handler failed " + e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            });
            return failed.get(30, TimeUnit.SECONDS);
        }));
        return out;
    }

    /** A blocking call that outlives its timeout; {@code program.release} lets it answer. */
    static String timeout(RpcTransport t) throws Exception {
        RpcCall client = new RpcCall(PROG, VERS, new RpcAuthTypeNone(), t);
        return outcome(() -> {
            client.call(SLOW, XdrVoid.XDR_VOID, XdrVoid.XDR_VOID, 200, TimeUnit.MILLISECONDS);
            return "answered in time";
        });
    }

    static String echo(RpcCall client, byte[] bytes) throws Exception {
        Blob answer = new Blob();
        client.call(ECHO, new Blob(bytes), answer, 30, TimeUnit.SECONDS);
        return "echo " + check(bytes, answer.bytes);
    }

    static String check(byte[] expected, byte[] got) {
        return Arrays.equals(expected, got) ? expected.length + " bytes" : "MISMATCH " + got.length + " bytes";
    }

    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    interface Call {
        String run() throws Exception;
    }

    static String outcome(Call c) {
        try {
            return c.run();
        } catch (TimeoutException e) {
            return "timeout";
        } catch (Exception e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }
}
