package org.rpcrdma.oncrpc;

/**
 * One procedure of a program version: its number and the codecs of its arguments and
 * results. The same constant serves both sides, the client's
 * {@link OncRpcClient#call(RpcProcedure, Object)} and the server's
 * {@link RpcProgramVersion#procedure(RpcProcedure, RpcHandler)}.
 *
 * @param number  the procedure number (0 is NULL, which every version serves itself)
 * @param args    codec of the arguments ({@link Codecs#VOID} for none)
 * @param results codec of the results
 * @param <A>     argument type
 * @param <R>     result type
 */
public record RpcProcedure<A, R>(int number, XdrCodec<A> args, XdrCodec<R> results) {
    /** Procedure 0 of every program version: void in, void out (RFC 5531 §12.1). */
    public static final RpcProcedure<Void, Void> NULL = new RpcProcedure<>(0, Codecs.VOID, Codecs.VOID);

    /** Checks the codecs are there. */
    public RpcProcedure {
        java.util.Objects.requireNonNull(args, "args");
        java.util.Objects.requireNonNull(results, "results");
    }
}
