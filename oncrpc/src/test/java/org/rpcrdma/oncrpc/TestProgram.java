package org.rpcrdma.oncrpc;

import java.util.List;
import java.util.Optional;

/**
 * The program the conformance suite calls, as its XDR would declare it (the model the
 * expected outcomes are derived from):
 * <pre>
 * enum color { RED = 0, GREEN = 1, BLUE = 7 };
 * struct prims { int i; unsigned int u; hyper h; unsigned hyper uh; float f; double d; };
 * program TEST_PROG {
 *   version TEST_V2 {
 *     bool        ECHO_BOOL(bool)         = 1;
 *     color       ECHO_ENUM(color)        = 2;
 *     opaque&lt;16&gt;  ECHO_OPAQUE16(opaque&lt;16&gt;) = 3;
 *     string&lt;16&gt;  ECHO_STRING16(string&lt;16&gt;) = 4;
 *     int&lt;4&gt;      ECHO_ARRAY4(int&lt;4&gt;)      = 5;
 *     int *       ECHO_OPTIONAL(int *)    = 6;
 *     opaque&lt;&gt;    ECHO_OPAQUE(opaque&lt;&gt;)   = 7;
 *     int&lt;&gt;       ECHO_LIST(int&lt;&gt;)        = 8;
 *     opaque[5]   ECHO_FIXED(opaque[5])   = 9;
 *     int         WHO_AM_I(void)          = 10;   // AUTH_SYS uid, or -1
 *     prims       ECHO_PRIMS(prims)       = 11;
 *   } = 2;
 *   version TEST_V5 { bool ECHO_BOOL(bool) = 1; } = 5;
 * } = 0x20000099;
 * </pre>
 * Versions 2 and 5 only, so PROG_MISMATCH must say low 2, high 5 for 0, 1, 3, 4, 6 and up.
 */
final class TestProgram {
    private TestProgram() {}

    static final int PROG = 0x2000_0099;
    static final int V2 = 2;
    static final int V5 = 5;

    enum Color implements XdrEnum {
        RED(0), GREEN(1), BLUE(7);

        private final int v;

        Color(int v) {
            this.v = v;
        }

        @Override
        public int value() {
            return v;
        }
    }

    record Prims(int i, long u, long h, long uh, float f, double d) {}

    static final XdrCodec<Prims> PRIMS = XdrCodec.of(
            (w, p) -> {
                w.writeInt(p.i());
                Codecs.UNSIGNED_INT.encode(w, p.u());
                w.writeLong(p.h()).writeLong(p.uh()).writeFloat(p.f()).writeDouble(p.d());
            },
            r -> new Prims(r.readInt(), r.readUnsignedInt(), r.readLong(), r.readUnsignedLong(), r.readFloat(),
                    r.readDouble()));

    static final RpcProcedure<Boolean, Boolean> ECHO_BOOL = echo(1, Codecs.BOOL);
    static final RpcProcedure<Color, Color> ECHO_ENUM = echo(2, Codecs.enumeration(Color.class));
    static final RpcProcedure<byte[], byte[]> ECHO_OPAQUE16 = echo(3, Codecs.opaque(16));
    static final RpcProcedure<String, String> ECHO_STRING16 = echo(4, Codecs.string(16));
    static final RpcProcedure<int[], int[]> ECHO_ARRAY4 = echo(5, Codecs.intArray(4));
    static final RpcProcedure<Optional<Integer>, Optional<Integer>> ECHO_OPTIONAL = echo(6, Codecs.optional(Codecs.INT));
    static final RpcProcedure<byte[], byte[]> ECHO_OPAQUE = echo(7, Codecs.OPAQUE);
    static final RpcProcedure<List<Integer>, List<Integer>> ECHO_LIST = echo(8, Codecs.array(Codecs.INT, Integer.MAX_VALUE));
    static final RpcProcedure<byte[], byte[]> ECHO_FIXED = echo(9, Codecs.fixedOpaque(5));
    static final RpcProcedure<Void, Integer> WHO_AM_I = new RpcProcedure<>(10, Codecs.VOID, Codecs.INT);
    static final RpcProcedure<Prims, Prims> ECHO_PRIMS = echo(11, PRIMS);

    private static <T> RpcProcedure<T, T> echo(int n, XdrCodec<T> c) {
        return new RpcProcedure<>(n, c, c);
    }

    /** A dispatcher serving the program: every ECHO answers its argument at once. */
    static RpcDispatcher dispatcher() {
        RpcDispatcher d = new RpcDispatcher();
        RpcProgramVersion v2 = d.program(PROG, V2);
        for (RpcProcedure<?, ?> p : List.of(ECHO_BOOL, ECHO_ENUM, ECHO_OPAQUE16, ECHO_STRING16, ECHO_ARRAY4,
                ECHO_OPTIONAL, ECHO_OPAQUE, ECHO_LIST, ECHO_FIXED, ECHO_PRIMS)) {
            registerEcho(v2, p);
        }
        v2.procedure(WHO_AM_I, (v, call) -> call.reply(call.authSys() == null ? -1 : call.authSys().uid()));
        registerEcho(d.program(PROG, V5), ECHO_BOOL);
        return d;
    }

    @SuppressWarnings("unchecked")
    private static <T> void registerEcho(RpcProgramVersion v, RpcProcedure<?, ?> p) {
        RpcProcedure<T, T> e = (RpcProcedure<T, T>) p;
        v.procedure(e, (args, call) -> call.reply(args));
    }
}
