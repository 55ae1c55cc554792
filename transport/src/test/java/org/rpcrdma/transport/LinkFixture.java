package org.rpcrdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.rpcrdma.transport.link.VerbsLink;
import org.rpcrdma.transport.rpc.CallRequest;

/**
 * A kind of link the behaviour suites are played over, as Netty plays one socket suite over
 * every transport: {@link #IN_MEMORY} ({@link InMemoryPair}, on the host) and {@link #VERBS}
 * (an {@link RpcRdmaServer} and an {@link RpcRdmaClient} on the Soft-RoCE device in the
 * guest). A suite opens a client and a server over it ({@link #open}) and asserts through
 * {@link Ends} only, so a case means the same on both; what only one link can show stays in
 * a class of that link.
 */
abstract class LinkFixture {
    /** The in-memory pair from main: the whole transport, no device. */
    static final LinkFixture IN_MEMORY = new InMemory();
    /** Real verbs: our server and reconnecting client over rxe (tests tagged {@code verbs}). */
    static final LinkFixture VERBS = new Verbs();

    /** How long a case waits for what must happen (the first calls of a JVM under TCG take hundreds of ms). */
    abstract long patienceMillis();

    /** {@code o} as this link needs it (verbs: a connect timeout that survives emulation). */
    abstract RpcRdmaOptions adapt(RpcRdmaOptions o);

    /** True when exposures go under memory windows of their own with {@code o} (verbs with windows on). */
    abstract boolean bindsWindows(RpcRdmaOptions o);

    /** Opens a client and a server with {@code o} (adapted), the server's forward calls served by {@code handler}. */
    abstract Ends open(RpcRdmaOptions o, CallHandler handler) throws Exception;

    /** The conformance table's name for this link (its listed divergences are per link). */
    abstract ConformancePlayer.LinkKind kind();

    /** How long the conformance player waits for what must happen. */
    abstract long conformanceWaitMillis();

    /**
     * A conformance session with {@code o}: our server serving with {@code handler} and a
     * raw client ({@code ourServer}), or our client serving backward calls with it and a raw
     * server. The raw peer sees every byte from the first.
     */
    abstract ConformancePlayer.Session conformanceSession(boolean ourServer, RpcRdmaOptions o, CallHandler handler)
            throws Exception;

    /**
     * A client that connects again when the server drops it, with {@code o} (adapted): the
     * server serves forward calls with {@code serverHandler}, the client backward calls with
     * {@code backward}, its backchannel ready before this returns.
     */
    abstract Reconnecting openReconnecting(RpcRdmaOptions o, CallHandler serverHandler, CallHandler backward)
            throws Exception;

    /** Fails if the link holds anything no endpoint owns (verbs: a verbs object left open). */
    abstract void checkNothingLeft() throws Exception;

    /** Waits up to the link's patience for {@code c}; its final value. */
    final boolean await(BooleanSupplier c) {
        return CoreDefectsTest.await(c, patienceMillis());
    }

    /** A client and a server joined over the link. */
    abstract static class Ends implements AutoCloseable {
        /** The client's connection now. */
        abstract Connection client();

        /** The client as users call it: the connection in memory, the reconnecting client on verbs. */
        abstract RpcCaller caller();

        /** The server's connection to this client (waits for the accept on verbs). */
        abstract Connection server();

        /** The server's statistics (the whole server on verbs, which has this one client). */
        abstract RpcRdmaStats serverStats();

        /** Rkeys either side exposes now. */
        abstract int exposedNow();

        /**
         * Waits until what was sent so far has been delivered, where the link can say so: the
         * in-memory link (asynchronous, like a NIC) can; on verbs callers wait for outcomes.
         */
        void settle() {
        }

        abstract RegisteredBuffer allocateRegistered(long bytes);

        abstract RegisteredBuffers registeredBuffers();

        /** A second client of the same server, for a peer that plays by hand (closed with this one). */
        abstract Connection anotherClient(RpcRdmaOptions o) throws Exception;

        /** Closes both ends and fails if anything is left: rkeys, registrations (verbs: any verbs object). */
        @Override
        public abstract void close() throws Exception;
    }

    /**
     * A reconnecting client and its server: calls either way go over the connection of the
     * moment; a drop makes the client connect again and carry over what it should.
     */
    abstract static class Reconnecting implements AutoCloseable {
        /** A forward call over the client's connection now. */
        abstract CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions options);

        /** A backward call from the server to this client over the connection now. */
        abstract CompletableFuture<ReceivedMessage> callBack(MemorySegment rpcCall, CallOptions options);

        /** The server drops {@code serverConnection} (its end of a connection to this client). */
        abstract void drop(Connection serverConnection);

        /** The client's connection now. */
        abstract Connection client();

        /** The server's end of the connection now (null while there is none). */
        abstract Connection server();

        /** How many times the client connected again. */
        abstract long reconnects();

        /** Closes both ends and fails if anything is left. */
        @Override
        public abstract void close() throws Exception;
    }

    private static final class InMemory extends LinkFixture {
        @Override
        long patienceMillis() {
            return 5_000;
        }

        @Override
        RpcRdmaOptions adapt(RpcRdmaOptions o) {
            return o;
        }

        @Override
        boolean bindsWindows(RpcRdmaOptions o) {
            return false;
        }

        @Override
        ConformancePlayer.LinkKind kind() {
            return ConformancePlayer.LinkKind.MEMORY;
        }

        @Override
        long conformanceWaitMillis() {
            return 2000;
        }

        @Override
        ConformancePlayer.Session conformanceSession(boolean ourServer, RpcRdmaOptions o, CallHandler h) {
            if (ourServer) {
                InMemoryPair p = InMemoryPair.open(o, h);
                return new ConformancePlayer.Session(p.server(), new RawPeer(p.client(), true), p::exposedCount,
                        () -> p.chunkBytesInUse(false), p);
            }
            InMemoryPair p = InMemoryPair.open(o, call -> { });
            p.client().serveBackwardCalls(h);
            return new ConformancePlayer.Session(p.client(), new RawPeer(p.server(), true), p::exposedCount,
                    () -> p.chunkBytesInUse(true), p);
        }

        @Override
        void checkNothingLeft() {
            // the pair's close frees all it has
        }

        /**
         * A new pair stands for each connection: the client's calls the lost one hands over
         * (its orphan sink) go to the next, as {@link RpcRdmaClient} resubmits them.
         */
        @Override
        Reconnecting openReconnecting(RpcRdmaOptions o, CallHandler serverHandler, CallHandler backward) {
            return new Reconnecting() {
                final Object lock = new Object();
                final List<InMemoryPair> all = new CopyOnWriteArrayList<>();
                final AtomicInteger reconnects = new AtomicInteger();
                volatile InMemoryPair current = connect();

                InMemoryPair connect() {
                    InMemoryPair p = InMemoryPair.open(o, serverHandler);
                    p.client().serveBackwardCalls(backward);
                    p.server().markBackchannelReady();
                    p.client().engine().orphanSink(os -> adopt(p, os));
                    all.add(p);
                    return p;
                }

                /** Runs on whatever thread saw the loss, holding no transport lock. */
                void adopt(InMemoryPair lost, List<CallRequest> orphans) {
                    InMemoryPair next;
                    synchronized (lock) {
                        if (current == lost) {
                            current = connect();
                            reconnects.incrementAndGet();
                        }
                        next = current;
                    }
                    orphans.forEach(next.client().engine()::submit);
                }

                @Override
                CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions options) {
                    return current.client().call(rpcCall, options);
                }

                @Override
                CompletableFuture<ReceivedMessage> callBack(MemorySegment rpcCall, CallOptions options) {
                    return current.server().call(rpcCall, options);
                }

                /** As the server's QP going to error: both ends see the loss. */
                @Override
                void drop(Connection serverConnection) {
                    RawAccess.link(serverConnection).disconnect();
                }

                @Override
                Connection client() {
                    return current.client();
                }

                @Override
                Connection server() {
                    return current.server();
                }

                @Override
                long reconnects() {
                    return reconnects.get();
                }

                @Override
                public void close() {
                    synchronized (lock) {
                        for (InMemoryPair p : all) {
                            p.close();
                            assertEquals(0, p.registeredBuffers().live(), "registered buffers left");
                        }
                    }
                }
            };
        }

        @Override
        Ends open(RpcRdmaOptions o, CallHandler handler) {
            InMemoryPair p = InMemoryPair.open(o, handler);
            return new Ends() {
                @Override
                Connection client() {
                    return p.client();
                }

                @Override
                RpcCaller caller() {
                    return p.client();
                }

                @Override
                Connection server() {
                    return p.server();
                }

                @Override
                RpcRdmaStats serverStats() {
                    assertTrue(p.settle(), "the in-memory link delivered what was sent"); // as a NIC, it delivers asynchronously
                    return p.server().stats();
                }

                @Override
                int exposedNow() {
                    assertTrue(p.settle(), "the in-memory link delivered what was sent");
                    return p.exposedCount();
                }

                @Override
                void settle() {
                    assertTrue(p.settle(), "the in-memory link delivered what was sent");
                }

                @Override
                RegisteredBuffer allocateRegistered(long bytes) {
                    return p.allocateRegistered(bytes);
                }

                @Override
                RegisteredBuffers registeredBuffers() {
                    return p.registeredBuffers();
                }

                @Override
                Connection anotherClient(RpcRdmaOptions o2) {
                    throw new UnsupportedOperationException("an in-memory pair has one client");
                }

                @Override
                public void close() {
                    p.close();
                    assertEquals(0, p.registeredBuffers().live(), "registered buffers left");
                }
            };
        }
    }

    private static final class Verbs extends LinkFixture {
        @Override
        long patienceMillis() {
            return 30_000;
        }

        @Override
        RpcRdmaOptions adapt(RpcRdmaOptions o) {
            return o.toBuilder().connectTimeoutMillis(30_000).build();
        }

        @Override
        boolean bindsWindows(RpcRdmaOptions o) {
            return o.memoryWindows();
        }

        @Override
        ConformancePlayer.LinkKind kind() {
            return ConformancePlayer.LinkKind.VERBS;
        }

        @Override
        long conformanceWaitMillis() {
            return 15_000;
        }

        /** A connection is reused across rules and replaced only after one that closes it (set-up is the expensive part). */
        @Override
        ConformancePlayer.Session conformanceSession(boolean ourServer, RpcRdmaOptions options, CallHandler h)
                throws Exception {
            RpcRdmaOptions o = adapt(options);
            InetAddress ip = EndpointVerbsTest.deviceAddress();
            if (ourServer) {
                AtomicReference<Connection> accepted = new AtomicReference<>();
                RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, h, accepted::set);
                RpcRdmaClient raw = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
                if (!CoreDefectsTest.await(() -> accepted.get() != null, 30_000)) {
                    throw new AssertionError("the server never saw the raw client's connection");
                }
                Connection dut = accepted.get();
                return new ConformancePlayer.Session(dut, new RawPeer(raw.connection(), false),
                        () -> exposed(dut) + exposed(raw.connection()), () -> chunkBytes(dut), () -> {
                            raw.close();
                            server.close();
                        });
            }
            AtomicReference<RawPeer> rawPeer = new AtomicReference<>();
            // the tap is in place before the connection is accepted: nothing arrives unseen
            RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, call -> { },
                    c -> rawPeer.set(new RawPeer(c, false)));
            RpcRdmaClient client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
            client.connection().serveBackwardCalls(h);
            Connection dut = client.connection();
            return new ConformancePlayer.Session(dut, rawPeer.get(),
                    () -> exposed(dut) + exposed(rawPeer.get().conn), () -> chunkBytes(dut), () -> {
                        client.close();
                        server.close();
                    });
        }

        private static int exposed(Connection c) {
            return ((VerbsLink) RawAccess.link(c)).exposedNow();
        }

        private static long chunkBytes(Connection c) {
            return ((VerbsLink) RawAccess.link(c)).chunkBytesInUse();
        }

        @Override
        void checkNothingLeft() throws Exception {
            EndpointVerbsTest.closeAndCheckNothingLeft();
        }

        /** Our server and a reconnecting {@link RpcRdmaClient}; backward calls go through the server's {@link Backchannel}. */
        @Override
        Reconnecting openReconnecting(RpcRdmaOptions options, CallHandler serverHandler, CallHandler backward)
                throws Exception {
            RpcRdmaOptions o = adapt(options);
            InetAddress ip = EndpointVerbsTest.deviceAddress();
            AtomicReference<Connection> latest = new AtomicReference<>();
            RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, serverHandler, latest::set);
            RpcRdmaClient client;
            Backchannel back;
            try {
                client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
            try {
                client.enableBackchannel(backward).get(60, TimeUnit.SECONDS);
                back = server.backchannel(client.clientId());
            } catch (Exception e) {
                EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
                throw e;
            }
            return new Reconnecting() {
                @Override
                CompletableFuture<ReceivedMessage> call(MemorySegment rpcCall, CallOptions callOptions) {
                    return client.call(rpcCall, callOptions);
                }

                @Override
                CompletableFuture<ReceivedMessage> callBack(MemorySegment rpcCall, CallOptions callOptions) {
                    return back.call(rpcCall, callOptions);
                }

                @Override
                void drop(Connection serverConnection) {
                    serverConnection.close(0, TimeUnit.MILLISECONDS);
                }

                @Override
                Connection client() {
                    return client.connection();
                }

                /** The connection the server accepted last (a reconnect's replaces the one before). */
                @Override
                Connection server() {
                    return latest.get();
                }

                @Override
                long reconnects() {
                    return client.reconnects();
                }

                @Override
                public void close() throws Exception {
                    EndpointVerbsTest.closeAndCheckNothingLeft(client, server);
                }
            };
        }

        @Override
        Ends open(RpcRdmaOptions options, CallHandler handler) throws Exception {
            RpcRdmaOptions o = adapt(options);
            InetAddress ip = EndpointVerbsTest.deviceAddress();
            AtomicReference<Connection> accepted = new AtomicReference<>();
            RpcRdmaServer server = RpcRdmaServer.listen(new InetSocketAddress(ip, 0), o, handler,
                    c -> accepted.compareAndSet(null, c));
            RpcRdmaClient client;
            try {
                client = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), o);
            } catch (RuntimeException e) {
                server.close();
                throw e;
            }
            return new Ends() {
                private RpcRdmaClient other;

                @Override
                Connection client() {
                    return client.connection();
                }

                @Override
                RpcCaller caller() {
                    return client;
                }

                @Override
                Connection server() {
                    if (!CoreDefectsTest.await(() -> accepted.get() != null, 30_000)) {
                        throw new AssertionError("the server never saw the client's connection");
                    }
                    return accepted.get();
                }

                @Override
                RpcRdmaStats serverStats() {
                    return server.stats();
                }

                @Override
                int exposedNow() {
                    int n = exposed(client.connection());
                    for (Connection s : server.connections()) {
                        n += exposed(s);
                    }
                    return n;
                }

                @Override
                RegisteredBuffer allocateRegistered(long bytes) {
                    return client.allocateRegistered(bytes);
                }

                @Override
                RegisteredBuffers registeredBuffers() {
                    return client.registeredBuffers();
                }

                @Override
                Connection anotherClient(RpcRdmaOptions o2) {
                    other = RpcRdmaClient.connect(new InetSocketAddress(ip, server.port()), adapt(o2));
                    return other.connection();
                }

                @Override
                public void close() throws Exception {
                    EndpointVerbsTest.closeAndCheckNothingLeft(other, client, server);
                    assertEquals(0, client.registeredBuffers().live(), "the client's close freed what was left");
                }
            };
        }
    }
}
