package org.rpcrdma.bench.verbs;

import static org.rpcrdma.bench.verbs.LatencyCurve.PROC_ECHO;
import static org.rpcrdma.bench.verbs.LatencyCurve.PROC_NULL;
import static org.rpcrdma.bench.verbs.LatencyCurve.REPLY_HEADER;
import static org.rpcrdma.bench.verbs.LatencyCurve.lastInline;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.rpcrdma.bench.verbs.LatencyCurve.Point;
import org.rpcrdma.transport.CallHandler;
import org.rpcrdma.transport.CallOptions;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.RegisteredBuffer;
import org.rpcrdma.transport.ReplyReader;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.RpcRdmaServer;
import org.rpcrdma.xdr.Xdr;

/**
 * The RPC points of a {@link LatencyCurve} run: forward calls through {@link RpcRdmaClient}
 * to an {@link RpcRdmaServer} that answers NULL and echo ({@link #handler}), one curve per
 * inline threshold ({@link #run}), timed one blocking call at a time into an HdrHistogram
 * ({@link #measure}); and the JIT pre-warm in the run's mode ({@link #prewarm}). Past the
 * threshold a call goes as a long call (a Position-Zero Read chunk the server pulls) and an
 * echo's reply through a Reply chunk.
 *
 * <p>Apart from the raw ping-pong ({@link VerbsPingPong}) and the output ({@link Report}):
 * the calls, their messages and the server's answers are this class's alone.
 */
final class RpcPoints {
    private final InetAddress ip;
    private final CurveOptions options;
    private final long warmupNanos;
    private final long measureNanos;
    private final long prewarmNanos;
    private final PrintStream out;
    private final Consumer<Point> progress;

    RpcPoints(InetAddress ip, CurveOptions o, PrintStream out, Consumer<Point> progress) {
        this.ip = ip;
        this.options = o;
        this.warmupNanos = o.warmupNanos();
        this.measureNanos = o.measureNanos();
        this.prewarmNanos = o.prewarmNanos();
        this.out = out;
        this.progress = progress;
    }

    /**
     * The server's handler of every point (and of the in-memory pre-warm): NULL and echo,
     * answered before the handler returns from one reply buffer of the largest size, with the
     * zero-allocation shapes the bench measures: an immediate handler (one reused call object,
     * {@link CallHandler#immediate}) and {@link #call}'s callAndRead. The reply's
     * slice is kept while its length repeats (it does, per point).
     */
    static CallHandler handler(int largest) {
        return CallHandler.immediate(new Answer(largest));
    }

    private static final class Answer implements CallHandler {
        private final MemorySegment buf;
        private MemorySegment reply;

        Answer(int largest) {
            buf = MemorySegment.ofArray(new byte[REPLY_HEADER + largest]);
            reply = buf.asSlice(0, REPLY_HEADER);
        }

        @Override
        public void handle(IncomingCall c) {
            MemorySegment m = c.message().bytes();
            int args = (int) m.byteSize() - 40;
            boolean echo = Xdr.getInt(m, 20) == PROC_ECHO;
            Xdr.putInt(buf, 0, c.xid());
            Xdr.putInt(buf, 4, 1); // REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS (zeros)
            long length = REPLY_HEADER + (echo ? args : 0);
            if (echo) {
                MemorySegment.copy(m, 40, buf, REPLY_HEADER, args);
            }
            if (reply.byteSize() != length) {
                reply = buf.asSlice(0, length);
            }
            c.reply(reply);
        }
    }

    /** A server with {@link #handler} and a client connected to it, both in {@code mode}. */
    static final class Endpoints implements AutoCloseable {
        final RpcRdmaServer server;
        final RpcRdmaClient client;

        Endpoints(InetAddress ip, int threshold, int largest, Mode mode) {
            this(ip, threshold, largest, mode, handler(largest));
        }

        /** As {@link #Endpoints(InetAddress, int, int, Mode)} with a server answering through {@code handler}. */
        Endpoints(InetAddress ip, int threshold, int largest, Mode mode, CallHandler handler) {
            RpcRdmaOptions o = RpcRdmaOptions.builder().inlineThreshold(threshold)
                    .connectTimeoutMillis(30_000).reconnectAttempts(0).build();
            // Sizes past the default chunk limit (e.g. 16 MiB): room for one call and one reply
            // in chunk memory registered once, so the point measures transfers, not registrations.
            int chunk = largest + 64 * 1024;
            if (chunk > o.maxChunkBytes()) {
                o = o.toBuilder().maxChunkBytes(chunk).maxChunkSegments(Math.max(o.maxChunkSegments(), chunk >> 18))
                        .chunkMemoryBytes(Math.max(o.chunkMemoryBytes(), 2L * chunk)).build();
            }
            server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), mode.server(o), handler, null);
            RpcRdmaClient cl = null;
            try {
                cl = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), mode.client(o));
            } finally {
                if (cl == null) {
                    server.close();
                }
            }
            client = cl;
        }

        @Override
        public void close() {
            client.close();
            server.close();
        }
    }

    private int xid;
    private CallOptions callOptions = CallOptions.timeout(10, TimeUnit.SECONDS);

    /**
     * One blocking call allowing a reply of {@code replyBytes} (a Reply chunk is offered when
     * that is not inline), its reply read in place: whether it had that many bytes.
     */
    private boolean call(Endpoints e, MemorySegment call, int replyBytes) throws InterruptedException {
        Xdr.putInt(call, 0, ++xid);
        options(replyBytes);
        return e.client.connection().callAndRead(call, callOptions, sizeCheck);
    }

    /** The call options of a call expecting {@code replyBytes}, made once per point. */
    private void options(int replyBytes) {
        expected = replyBytes;
        if (callOptions.maxReplyBytes() != replyBytes) {
            callOptions = CallOptions.timeout(10, TimeUnit.SECONDS).withMaxReplyBytes(replyBytes);
        }
    }

    /** One call of {@code shape} (not {@link Shape#CALLBACK}) through the client, as a user writes it. */
    private boolean call(Endpoints e, MemorySegment call, int replyBytes, Shape shape) throws Exception {
        if (shape == Shape.READ) {
            return call(e, call, replyBytes);
        }
        Xdr.putInt(call, 0, ++xid);
        options(replyBytes);
        try (ReceivedMessage m = shape == Shape.WAIT ? e.client.callAndWait(call, callOptions)
                : e.client.call(call, callOptions).get()) {
            return m.bytes().byteSize() == replyBytes;
        }
    }

    /** The reply size the next call expects, and the reader that checks it (made once: no lambda per call). */
    private int expected;
    private final ReplyReader<Boolean> sizeCheck = r -> r.byteSize() == expected;

    /** An ONC RPC call of procedure {@code proc} with {@code size} bytes of arguments (the XID is set per call). */
    static MemorySegment callMessage(int proc, int size) {
        return writeCallHeader(MemorySegment.ofArray(new byte[40 + size]), proc);
    }

    /** Writes the ONC RPC call header of procedure {@code proc} into {@code call} (the XID is set per call). */
    static MemorySegment writeCallHeader(MemorySegment call, int proc) {
        Xdr.putInt(call, 4, 0); // CALL
        Xdr.putInt(call, 8, 2); // RPC version 2
        Xdr.putInt(call, 12, 0x20000099);
        Xdr.putInt(call, 16, 1);
        Xdr.putInt(call, 20, proc);
        return call;
    }

    /**
     * {@link JitPrewarm}, then NULL and echo calls in this run's mode ({@link JitPrewarm.Calls}'
     * sizes under {@code threshold}) until the JIT is quiet, their bytes in registered memory as
     * the points' are ({@link #run}): memory exposed in place, its own rkey beside the Reply
     * chunk's, withdrawn by LOCAL_INV, is a path of its own to compile.
     */
    void prewarm(int[] sizes, int threshold) throws InterruptedException {
        out.println("[bench] " + JitPrewarm.run(ip, sizes, threshold, prewarmNanos));
        out.flush();
        JitPrewarm.Calls c = new JitPrewarm.Calls(sizes, threshold);
        // connected only now: in busy mode its server poller spins from the start
        try (Endpoints e = new Endpoints(ip, threshold, c.largest(), options.mode())) {
            MemorySegment[] registered = new MemorySegment[c.messages.length];
            for (int i = 0; i < registered.length; i++) { // closed with the client
                registered[i] = e.client.allocateRegistered(c.messages[i].byteSize()).segment();
                MemorySegment.copy(c.messages[i], 0, registered[i], 0, c.messages[i].byteSize());
            }
            out.println("[bench] " + JitPrewarm.untilQuiet(6 * prewarmNanos,
                    n -> call(e, registered[c.index(n)], c.replyBytes[c.index(n)])));
        } catch (RuntimeException ex) {
            out.println("[bench] pre-warm: connect failed: " + ex);
        }
        out.flush();
    }

    /** The {@code rpc-<T>} series: NULL and echo at every size, one connection while it works. */
    void run(int threshold, int[] sizes) {
        String series = "rpc-" + threshold / 1024 + "k";
        Endpoints e = null;
        RegisteredBuffer callBuffer = null; // closed with its client if not before
        try {
            for (String op : new String[] {"null", "echo"}) {
                int proc = op.equals("echo") ? PROC_ECHO : PROC_NULL;
                for (int size : sizes) {
                    if (e == null) {
                        try {
                            e = new Endpoints(ip, threshold, sizes[sizes.length - 1], options.mode());
                        } catch (RuntimeException ex) {
                            progress.accept(Point.failed(series, op, threshold, size, "connect failed: " + ex.getMessage()));
                            continue;
                        }
                    }
                    // The call's bytes in registered memory (RegisteredBuffers): a long call is
                    // then pulled straight from them (zero copy), as an application would send one.
                    if (callBuffer != null) {
                        callBuffer.close();
                    }
                    callBuffer = e.client.allocateRegistered(40 + size);
                    MemorySegment call = writeCallHeader(callBuffer.segment(), proc);
                    int expect = REPLY_HEADER + (proc == PROC_ECHO ? size : 0);
                    try {
                        if (!call(e, call, expect)) {
                            throw new IllegalStateException("reply not of the " + expect + " bytes expected");
                        }
                    } catch (RpcRdmaException ex) {
                        if (ex.getMessage() != null && ex.getMessage().contains("exceeds")) {
                            // the transport's own inline check: expected past lastInline(threshold)
                            progress.accept(Point.failed(series, op, threshold, size, size > lastInline(threshold)
                                    ? "needs chunks" : "needs chunks (below the expected edge: " + ex.getMessage() + ")"));
                        } else {
                            progress.accept(Point.failed(series, op, threshold, size, "error: " + ex));
                            e.close();
                            e = null;
                        }
                        continue;
                    } catch (RuntimeException ex) {
                        progress.accept(Point.failed(series, op, threshold, size, "error: " + ex));
                        e.close();
                        e = null;
                        continue;
                    }
                    try {
                        progress.accept(Point.of(series, op, threshold, size, measure(e, call, expect, warmupNanos)));
                    } catch (Exception ex) {
                        progress.accept(Point.failed(series, op, threshold, size, "error: " + ex));
                        e.close();
                        e = null;
                    }
                }
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        } finally {
            if (e != null) {
                e.close();
            }
        }
    }

    /** Calls for {@code warmup}, then times each call for this run's measuring time. */
    Histogram measure(Endpoints e, MemorySegment call, int expect, long warmup)
            throws InterruptedException {
        return measure(e, call, expect, warmup, measureNanos);
    }

    /** {@link #measure(Endpoints, MemorySegment, int, long)} timing calls for {@code measure} ns. */
    Histogram measure(Endpoints e, MemorySegment call, int expect, long warmup, long measure)
            throws InterruptedException {
        try {
            return measure(e, call, expect, warmup, measure, Shape.READ);
        } catch (InterruptedException | RuntimeException ex) {
            throw ex;
        } catch (Exception ex) {
            throw new IllegalStateException(ex); // only the future shape throws others
        }
    }

    /**
     * Calls of {@code shape} for {@code warmup} ns, then times each for {@code measure} ns
     * (the callback shape times itself: {@link CallbackLoop}).
     */
    Histogram measure(Endpoints e, MemorySegment call, int expect, long warmup, long measure, Shape shape)
            throws Exception {
        if (shape == Shape.CALLBACK) {
            options(expect);
            CallbackLoop loop = new CallbackLoop(e.client, call, callOptions, expect, warmup, measure, xid);
            try {
                return loop.run();
            } finally {
                xid = loop.xid();
            }
        }
        long end = System.nanoTime() + warmup;
        while (System.nanoTime() < end) {
            call(e, call, expect, shape);
        }
        Histogram h = new Histogram(3);
        end = System.nanoTime() + measure;
        long t;
        do {
            long t0 = System.nanoTime();
            boolean ok = call(e, call, expect, shape);
            t = System.nanoTime();
            if (!ok) {
                throw new IllegalStateException("reply not of the " + expect + " bytes expected");
            }
            h.recordValue(t - t0);
        } while (t < end);
        return h;
    }
}
