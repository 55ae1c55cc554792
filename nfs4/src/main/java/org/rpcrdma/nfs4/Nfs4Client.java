package org.rpcrdma.nfs4;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.rpcrdma.oncrpc.OncRpcClient;
import org.rpcrdma.oncrpc.RpcDispatcher;
import org.rpcrdma.oncrpc.RpcReplyException;
import org.rpcrdma.transport.BackchannelNotEnabledException;
import org.rpcrdma.transport.BidirectionalCaller;
import org.rpcrdma.transport.ChunksUnavailableException;
import org.rpcrdma.transport.Connection;
import org.rpcrdma.transport.RdmaErrorException;
import org.rpcrdma.transport.RpcRdmaClient;
import org.rpcrdma.transport.RpcRdmaException;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.xdr.AuthSys;

/**
 * A minimal NFSv4.1 client (RFC 8881) over RPC-over-RDMA, with its callback service on the
 * same connection (RFC 8167; RFC 8881 §2.10.3.1).
 *
 * <p>{@link #connect} serves the back channel on the connection first, then NULL,
 * EXCHANGE_ID, CREATE_SESSION with CREATE_SESSION4_FLAG_CONN_BACK_CHAN (callback program
 * {@link Nfs4#CB_PROGRAM}, AUTH_SYS callback security, back-channel ca_maxrequests = the
 * transport's backward credits, request and response sizes what fits inline) and
 * SEQUENCE + RECLAIM_COMPLETE. Every later COMPOUND starts with SEQUENCE on a slot of the
 * {@link SlotTable}; NFS4ERR_GRACE and NFS4ERR_DELAY are retried a bounded number of times.
 * After a reconnect the new connection's back channel is bound to the session
 * ({@link BackChannelBinder}). A CB_RECALL of a delegation we hold is answered
 * at once and its DELEGRETURN sent from another thread (never the transport's, which
 * delivers the callback); {@link #recalls()} reports each one.
 */
public final class Nfs4Client implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Nfs4Client.class.getName());
    /** Retries of a COMPOUND answered NFS4ERR_GRACE or NFS4ERR_DELAY, and the wait before each. */
    static final int RETRIES = 60;
    static final long RETRY_MILLIS = 500;
    private static final int FORE_SLOTS = 16;

    /** An open file: its filehandle, open stateid and the delegation OPEN gave (maybe none). */
    public record OpenFile(byte[] fh, Stateid stateid, FileOps.Delegation delegation) {}

    /** A CB_RECALL we answered: its RPC XID, the delegation, and the DELEGRETURN it led to. */
    public record Recall(int xid, Stateid stateid, byte[] fh, CompletableFuture<Void> returned) {}

    private final BidirectionalCaller caller;
    private final BackChannelBinder binder;
    private final AutoCloseable owned;
    private final OncRpcClient nfs;
    private final CallbackService callbacks = new CallbackService(this::recall);
    private final ExecutorService returner = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "nfs4-delegreturn");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, OpenFile> delegations = new ConcurrentHashMap<>();
    private final BlockingQueue<Recall> recalls = new LinkedBlockingQueue<>();
    private final byte[] owner;
    private long clientId;
    private byte[] sessionId;
    private SessionOps.SessionResult session;
    private SlotTable slots;
    private volatile int lastSequenceFlags;

    private Nfs4Client(BidirectionalCaller caller, AutoCloseable owned, AuthSys cred) {
        this.caller = caller;
        this.binder = new BackChannelBinder(caller::connection, this::bind);
        this.owned = owned;
        this.nfs = new OncRpcClient(caller, Nfs4.PROGRAM, Nfs4.VERSION).withAuthSys(cred);
        byte[] id = new byte[8];
        new SecureRandom().nextBytes(id);
        this.owner = ("panama-rpcrdma-" + HexFormat.of().formatHex(id)).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Connects to {@code server} and sets up a session with a back channel on the
     * connection. {@code options} must grant backward credits (they become the back
     * channel's ca_maxrequests). The client owns the connection and closes it.
     */
    public static Nfs4Client connect(InetSocketAddress server, RpcRdmaOptions options, AuthSys cred)
            throws InterruptedException {
        if (options.backwardCredits() < 1) {
            throw new IllegalArgumentException("NFSv4.1 callbacks need backward credits (builder().backwardCredits)");
        }
        RpcRdmaClient rdma = RpcRdmaClient.connect(server, options);
        return open(rdma, options.backwardCredits(), cred, rdma);
    }

    /**
     * A session over a client that is already connected (an {@code RpcRdmaClient}, which the
     * session follows across reconnects, or an {@code InMemoryPair}'s client {@link Connection}),
     * which the caller owns and closes; {@code backwardCredits} as it was opened with.
     */
    public static Nfs4Client open(BidirectionalCaller caller, int backwardCredits, AuthSys cred)
            throws InterruptedException {
        return open(caller, backwardCredits, cred, null);
    }

    private static Nfs4Client open(BidirectionalCaller caller, int backwardCredits, AuthSys cred, AutoCloseable owned)
            throws InterruptedException {
        Nfs4Client c = establish(new Nfs4Client(caller, owned, cred), backwardCredits, cred);
        // a new connection serves our callbacks at once (the transport re-serves them), but
        // the server sends them only on a connection bound to the session's back channel
        caller.onReconnect(conn -> c.binder.reconnected(conn));
        return c;
    }

    private static Nfs4Client establish(Nfs4Client c, int backwardCredits, AuthSys cred) throws InterruptedException {
        try {
            c.establish(backwardCredits, cred);
            return c;
        } catch (RuntimeException | InterruptedException e) {
            c.returner.shutdownNow();
            c.binder.close();
            c.closeOwned();
            throw e;
        }
    }

    private void establish(int backwardCredits, AuthSys cred) throws InterruptedException {
        RpcDispatcher d = new RpcDispatcher();
        callbacks.register(d);
        caller.serveBackwardCalls(d); // RFC 8167 §6: ready before CREATE_SESSION names this connection
        nfs.nullCall();
        LOG.log(Level.DEBUG, "NULL answered; EXCHANGE_ID");
        byte[] verifier = new byte[Nfs4.NFS4_VERIFIER_SIZE];
        new SecureRandom().nextBytes(verifier);
        var exid = SessionOps.exchangeId(verifier, owner);
        SessionOps.ExchangeIdResult x = plain(Compound.of(exid)).get(exid);
        clientId = x.clientId();
        LOG.log(Level.DEBUG, "client ID {0} ({1}); CREATE_SESSION", Long.toHexString(clientId), x.implName());
        ChannelAttrs fore = new ChannelAttrs(0, FileOps.MAX_IO + 64 * 1024, FileOps.MAX_IO + 64 * 1024, 4096, 16,
                FORE_SLOTS, -1);
        // RFC 8167 §5.3: callbacks and their replies go inline (RDMA_MSG, no chunks), so what
        // fits is the inline threshold of each direction less the transport header
        Connection conn = caller.connection();
        ChannelAttrs back = new ChannelAttrs(0, conn.receiveInlineThreshold() - RpcRdma.INLINE_MSG_HEADER_BYTES,
                conn.sendInlineThreshold() - RpcRdma.INLINE_MSG_HEADER_BYTES, 0, 8, backwardCredits, -1);
        var cs = SessionOps.createSession(clientId, x.sequenceId(), Nfs4.CREATE_SESSION4_FLAG_CONN_BACK_CHAN, fore,
                back, Nfs4.CB_PROGRAM, cred);
        session = plain(Compound.of(cs)).get(cs);
        if ((session.flags() & Nfs4.CREATE_SESSION4_FLAG_CONN_BACK_CHAN) == 0) {
            throw new Nfs4Exception(Nfs4.NFS4ERR_NOTSUPP, Nfs4.OP_CREATE_SESSION,
                    "the server did not bind the back channel to this connection");
        }
        sessionId = session.sessionId();
        binder.bound(caller.connection());
        callbacks.session(sessionId, Math.max(1, session.back().maxRequests()));
        slots = new SlotTable(Math.max(1, Math.min(FORE_SLOTS, session.fore().maxRequests())));
        compound(Compound.of(SessionOps.reclaimComplete(false))).check();
        LOG.log(Level.DEBUG, "session {0}: fore {1}, back {2}", HexFormat.of().formatHex(sessionId), session.fore(),
                session.back());
    }

    /** A COMPOUND outside a session (EXCHANGE_ID, CREATE_SESSION, DESTROY_*), checked. */
    private CompoundResult plain(Compound c) throws InterruptedException {
        return nfs.call(c.procedure(), c, null, 0).check();
    }

    /** {@code c} in the session (SEQUENCE first), inline. */
    public CompoundResult compound(Compound c) throws InterruptedException {
        return compound(c, null, 0);
    }

    /**
     * {@code c} in the session with SEQUENCE first; {@code receptacle} for a READ's data (a
     * write chunk), {@code maxReplyBytes} for a reply larger than inline (a Reply chunk).
     * Answers of NFS4ERR_GRACE or NFS4ERR_DELAY are retried up to {@link #RETRIES} times.
     * The result is not checked: see {@link CompoundResult#check()}.
     */
    public CompoundResult compound(Compound c, MemorySegment receptacle, int maxReplyBytes)
            throws InterruptedException {
        for (int attempt = 0; ; attempt++) {
            SlotTable.Slot s = slots.acquire(60, TimeUnit.SECONDS);
            var seq = SessionOps.sequence(sessionId, s.sequenceId(), s.id(), s.highestSlotId(), false);
            Compound full = c.prepend(seq);
            CompoundResult r;
            try {
                r = nfs.call(full.procedure(), full, receptacle, maxReplyBytes);
            } catch (RuntimeException e) {
                slots.release(s, sent(e) ? SlotTable.Outcome.UNKNOWN : SlotTable.Outcome.NOT_SEQUENCED);
                throw e;
            } catch (InterruptedException e) {
                slots.release(s, SlotTable.Outcome.UNKNOWN);
                throw e;
            }
            int seqStatus = r.count() > 0 ? r.status(0) : r.status();
            SlotTable.Outcome outcome = switch (seqStatus) {
                case Nfs4.NFS4_OK -> SlotTable.Outcome.SEQUENCED;
                case Nfs4.NFS4ERR_SEQ_MISORDERED -> SlotTable.Outcome.MISORDERED;
                case Nfs4.NFS4ERR_RETRY_UNCACHED_REP, Nfs4.NFS4ERR_SEQ_FALSE_RETRY -> SlotTable.Outcome.REPLAYED;
                default -> SlotTable.Outcome.NOT_SEQUENCED;
            };
            if (outcome == SlotTable.Outcome.SEQUENCED) {
                SessionOps.SequenceResult sr = r.get(seq);
                slots.target(sr.targetHighestSlotId());
                lastSequenceFlags = sr.statusFlags();
                binder.sequenceFlags(sr.statusFlags());
            }
            if (slots.release(s, outcome) && attempt < RETRIES) {
                // the server's answer corrected the slot's sequence ID; nothing was executed
                LOG.log(Level.DEBUG, "{0} on slot {1} seq {2}: nfsstat4 {3}, slot corrected, sending again", c.ops(),
                        s.id(), s.sequenceId(), seqStatus);
                continue;
            }
            LOG.log(Level.DEBUG, "{0} on slot {1} seq {2}: status {3}", c.ops(), s.id(), s.sequenceId(), r.status());
            if ((r.status() == Nfs4.NFS4ERR_GRACE || r.status() == Nfs4.NFS4ERR_DELAY) && attempt < RETRIES) {
                LOG.log(Level.DEBUG, "{0}: nfsstat4 {1}, retrying", c.ops(), r.status());
                Thread.sleep(RETRY_MILLIS);
                continue;
            }
            return r;
        }
    }

    /**
     * Whether a call that failed with {@code e} may have reached the server. Refusals before
     * sending (argument checks, encode errors, {@link ChunksUnavailableException},
     * {@link BackchannelNotEnabledException}) and answers below NFS ({@link RdmaErrorException},
     * an RPC-level {@link RpcReplyException}) leave the slot as it was; a timeout, a lost
     * connection or a reply we could not read may follow an executed request.
     */
    static boolean sent(RuntimeException e) {
        if (!(e instanceof RpcRdmaException)) {
            return false;
        }
        return !(e instanceof ChunksUnavailableException || e instanceof BackchannelNotEnabledException
                || e instanceof RdmaErrorException || e instanceof RpcReplyException);
    }

    /**
     * BIND_CONN_TO_SESSION on the current connection for both channels (RFC 8881 §18.34;
     * RFC 8167 §3.2: a back channel on a connection is announced by CREATE_SESSION or this),
     * without SEQUENCE, alone in its COMPOUND.
     */
    private SessionOps.BindResult bind() throws InterruptedException {
        var b = SessionOps.bindConnToSession(sessionId, Nfs4.CDFC4_FORE_OR_BOTH);
        return plain(Compound.of(b)).get(b);
    }

    /** Opens {@code name} in the export's root with {@code shareAccess} (OPEN4_SHARE_ACCESS_* and WANT bits). */
    public OpenFile open(String name, int shareAccess) throws InterruptedException {
        var open = FileOps.open(shareAccess, Nfs4.OPEN4_SHARE_DENY_NONE, clientId, owner, name);
        var fh = FileOps.getFh();
        CompoundResult r = compound(Compound.of(FileOps.putRootFh(), open, fh)).check();
        FileOps.OpenResult o = r.get(open);
        OpenFile f = new OpenFile(r.get(fh), o.stateid(), o.delegation());
        if (o.delegation().stateid() != null) {
            delegations.put(key(o.delegation().stateid()), f);
        }
        return f;
    }

    /** READ of up to {@code receptacle.byteSize()} bytes at {@code offset}; the data lands in the receptacle. */
    public FileOps.ReadResult read(OpenFile f, long offset, MemorySegment receptacle) throws InterruptedException {
        var read = FileOps.read(f.stateid(), offset, (int) Math.min(FileOps.MAX_IO, receptacle.byteSize()), receptacle);
        return compound(Compound.of(FileOps.putFh(f.fh()), read), receptacle, 0).check().get(read);
    }

    /** WRITE of {@code data} at {@code offset}, FILE_SYNC4 (the data in a read chunk when it does not fit inline). */
    public FileOps.WriteResult write(OpenFile f, long offset, MemorySegment data) throws InterruptedException {
        var write = FileOps.write(f.stateid(), offset, Nfs4.FILE_SYNC4, data);
        return compound(Compound.of(FileOps.putFh(f.fh()), write)).check().get(write);
    }

    /** The file's size (GETATTR FATTR4_SIZE). */
    public long size(byte[] fh) throws Exception {
        var ga = FileOps.getattr(Nfs4.FATTR4_SIZE);
        return compound(Compound.of(FileOps.putFh(fh), ga)).check().get(ga).size();
    }

    /** READDIR of the export's root from the start, allowing a reply of {@code maxReplyBytes} (a Reply chunk). */
    public FileOps.ReaddirResult readRootDir(int maxReplyBytes) throws InterruptedException {
        var rd = FileOps.readdir(0, new byte[Nfs4.NFS4_VERIFIER_SIZE], maxReplyBytes, maxReplyBytes);
        return compound(Compound.of(FileOps.putRootFh(), rd), null, maxReplyBytes).check().get(rd);
    }

    /** CLOSE of the open (its delegation, if any, stays until returned or recalled). */
    public void close(OpenFile f) throws InterruptedException {
        compound(Compound.of(FileOps.putFh(f.fh()), FileOps.close(f.stateid()))).check();
    }

    /** DELEGRETURN of {@code f}'s delegation. */
    public void returnDelegation(OpenFile f) throws InterruptedException {
        Stateid d = f.delegation().stateid();
        compound(Compound.of(FileOps.putFh(f.fh()), FileOps.delegReturn(d))).check();
        delegations.remove(key(d));
    }

    /** CB_RECALL (on the transport's thread): answered at once, DELEGRETURN on our own thread. */
    private int recall(CbCompound.RecallArgs a, int xid) {
        OpenFile f = delegations.get(key(a.stateid()));
        if (f == null) {
            return Nfs4.NFS4ERR_BAD_STATEID;
        }
        Recall r = new Recall(xid, a.stateid(), a.fh(), new CompletableFuture<>());
        recalls.add(r);
        returner.execute(() -> {
            try {
                returnDelegation(f);
                r.returned().complete(null);
            } catch (Throwable t) {
                LOG.log(Level.WARNING, "DELEGRETURN after CB_RECALL 0x" + Integer.toHexString(xid) + " failed", t);
                r.returned().completeExceptionally(t);
            }
        });
        return Nfs4.NFS4_OK;
    }

    /** The recalls answered so far, in order (taken from the queue by the caller). */
    public BlockingQueue<Recall> recalls() {
        return recalls;
    }

    public CallbackService callbacks() {
        return callbacks;
    }

    /** The connection (after a reconnect of the endpoint, the current one). */
    public Connection connection() {
        return caller.connection();
    }

    public byte[] sessionId() {
        return sessionId.clone();
    }

    public long clientId() {
        return clientId;
    }

    /** CREATE_SESSION's answer: the negotiated channel attributes. */
    public SessionOps.SessionResult session() {
        return session;
    }

    /** BIND_CONN_TO_SESSIONs that bound a connection's back channel to the session, after the first connection. */
    public long backChannelBinds() {
        return binder.binds();
    }

    /** The sr_status_flags of the last SEQUENCE (SEQ4_STATUS_CB_PATH_DOWN and the rest). */
    public int lastSequenceFlags() {
        return lastSequenceFlags;
    }

    private static String key(Stateid s) {
        return HexFormat.of().formatHex(s.other());
    }

    /** DESTROY_SESSION, DESTROY_CLIENTID (best effort), then the connection. */
    @Override
    public void close() {
        binder.close();
        returner.shutdown();
        try {
            returner.awaitTermination(10, TimeUnit.SECONDS);
            plain(Compound.of(SessionOps.destroySession(sessionId)));
            plain(Compound.of(SessionOps.destroyClientId(clientId)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "ending the session: {0}", e.toString());
        } finally {
            closeOwned();
        }
    }

    private void closeOwned() {
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                LOG.log(Level.DEBUG, "closing the connection: {0}", e.toString());
            }
        }
    }
}
