package org.rpcrdma.transport.chunk;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;
import org.rpcrdma.transport.DdpArgument;
import org.rpcrdma.transport.ReceivedMessage;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.ApiBridge;
import org.rpcrdma.transport.wire.RpcRdma;
import org.rpcrdma.transport.wire.RpcRdmaHeader;
import org.rpcrdma.xdr.RpcReplyHeader;

/**
 * The memory one call of ours exposes to the responder on one connection (≈ the MRs of a
 * Linux {@code rpcrdma_req}): the call itself in a Position-Zero Read chunk (a long call)
 * or its DDP argument in a read chunk, a write chunk for a DDP result, and a Reply chunk
 * for a reply too large to come inline. Each has an rkey of its own, made for this call on
 * this connection (a long call in chunk memory and its Reply chunk share one:
 * {@link ChunkMarshal}), withdrawn before the caller's future completes, however the call
 * ends (RFC 8166 §4.4: the responder can no longer reach the memory once the requester sees
 * the result): by the link's LOCAL_INV, whose completion the reply waits for, or by the
 * peer's Send with Invalidate that brought it; the memory goes back only after that. (One
 * exception, {@link #abandon}: an abandoned call whose rkeys the peer may still
 * invalidate keeps them until the late reply or the connection's end.) A
 * buffer that is the caller's registered memory ({@link ChunkBuffer#callerMemory()}) is
 * exposed in place: nothing is copied into it or out of it.
 * Thread-safe: the reply arrives on the completion thread while the caller may cancel.
 */
public final class CallExposure {
    /** Roles of the exposed buffers. */
    static final int CALL = 0;
    static final int REPLY = 1;
    static final int RECEPTACLE = 2;

    private final Link link;
    private final RpcRdmaHeader header;
    /** Replaced only by a heap copy, under the requester's lock, before any other thread reads it. */
    private MemorySegment inline;
    /** A DDP argument of its own copied into the Send behind {@link #inline}'s first part, or null. */
    private final DdpArgument gathered;
    private final MemorySegment receptacle;
    private final ChunkBuffer[] buffers = new ChunkBuffer[3];
    private final int[] rkeys = new int[3];
    /** Bit {@code 1 << role}: that role's rkey is exposed (a mask, not an array: nothing more per call). */
    private int exposed;
    /** The rkeys of the one withdrawal (written once, when {@code released} is set). */
    private final int[] withdrawn = new int[3];
    private boolean released;
    /**
     * The caller gave up on the call: a reply from now copies nothing into its memory. If
     * the responder may still answer with Send with Invalidate of one of our rkeys, they
     * stay exposed, and their memory held, until that reply or the connection's end
     * ({@link #abandon}).
     */
    private boolean abandoned;
    /**
     * A responder may answer with Send with Invalidate of any one of our rkeys (RFC 8797
     * §4.1): R negotiated, or set by us (Linux's nfsd clears R yet does it then).
     */
    private final boolean peerMayInvalidate;

    /**
     * @param inline     what follows the header in the Send (null for RDMA_NOMSG)
     * @param gathered   a DDP argument of its own that the Send carries inside {@code inline}'s
     *                   bytes (see {@link DdpArgument#assemble}), or null
     * @param receptacle the caller's memory for a DDP result, or null
     */
    CallExposure(Link link, RpcRdmaHeader header, MemorySegment inline, DdpArgument gathered,
            MemorySegment receptacle, boolean peerMayInvalidate) {
        this.link = link;
        this.peerMayInvalidate = peerMayInvalidate;
        this.header = header;
        this.inline = inline;
        this.gathered = gathered;
        this.receptacle = receptacle;
    }

    /** Records a buffer the call owns (and, once {@code rkey} is set, exposes). */
    synchronized void buffer(int role, ChunkBuffer b) {
        buffers[role] = b;
    }

    synchronized void exposed(int role, int rkey) {
        rkeys[role] = rkey;
        exposed |= 1 << role;
    }

    synchronized int rkey(int role) {
        return rkeys[role];
    }

    /** The address the peer uses with {@link #rkey} (the memory's own, as verbs' virtual addressing). */
    synchronized long address(int role) {
        return buffers[role].segment().address();
    }

    /** The transport header to send the call with (its chunk lists name our rkeys). */
    public RpcRdmaHeader header() {
        return header;
    }

    /** What follows the header in the Send: the call or its reduced form; null for RDMA_NOMSG. */
    public MemorySegment inline() {
        return inline;
    }

    /** The DDP argument the Send copies in with {@link #inline} (RFC 8166 §3.4.5: no chunk, it fits), or null. */
    public DdpArgument gathered() {
        return gathered;
    }

    /** Whether the memory the Send reads is still there (the caller may have closed its arena). */
    public boolean sendable() {
        MemorySegment m = inline;
        return m == null || m.scope().isAlive() && (gathered == null || gathered.payload().scope().isAlive());
    }

    /** The call's bytes moved (a private copy): what follows the header, if it was them. */
    public void moved(MemorySegment from, MemorySegment to) {
        if (inline == from) {
            inline = to;
        }
    }

    /** Whether the call goes as RDMA_NOMSG (the whole call in the Position-Zero Read chunk). */
    public boolean longCall() {
        return header.proc() == RpcRdma.RDMA_NOMSG;
    }

    boolean offersReplyChunk() {
        return header.hasReplyChunk();
    }

    public boolean offersWriteChunk() {
        return !header.writeList().isEmpty();
    }

    /**
     * The reply arrived and was checked: withdraws every rkey and, once none reaches our
     * memory any more (RFC 8166 §4.4: at once, or when our LOCAL_INV completed), copies the
     * {@code placed} bytes of a DDP result into the caller's receptacle and hands
     * {@code then} the reply's bytes from the Reply chunk ({@code replyLength} bytes, handed
     * on with their memory) or, when {@code replyLength} is negative, an empty marker; or
     * null if the call was released meanwhile (abandoned: nothing may be read any more).
     * If the copy into the receptacle fails, or memory exposed in place was freed (the
     * caller closed its arena while the call was out), everything is released and
     * {@code failed} gets an {@link IllegalStateException} instead: the call must fail,
     * not hang, nor complete as if its bytes were there. Either may run before this returns, or later on the completion thread.
     */
    public void finish(long replyLength, long placed, Consumer<ReceivedMessage> then, Consumer<RuntimeException> failed) {
        int[] keys = withdrawn;
        int n;
        boolean callerGone;
        synchronized (this) {
            callerGone = abandoned;
            if (released) {
                n = -1;
            } else {
                released = true; // ORDER: from here only the withdrawal's continuation touches the buffers
                n = exposedKeys(keys);
            }
        }
        if (n < 0) {
            then.accept(null);
            return;
        }
        if (callerGone) { // the late reply of an abandoned call: withdrawn (by it, or by us now), nothing copied
            withdraw(keys, n, () -> {
                freeBuffers();
                then.accept(null);
            });
            return;
        }
        withdraw(keys, n, () -> {
            ReceivedMessage m;
            try {
                m = afterWithdrawal(replyLength, placed);
            } catch (RuntimeException e) {
                failed.accept(e);
                return;
            }
            then.accept(m);
        });
    }

    /** Runs once the rkeys are dead: the receptacle filled, the reply handed on, the rest freed. */
    private ReceivedMessage afterWithdrawal(long replyLength, long placed) {
        ChunkBuffer reply = replyLength >= 0 ? buffers[REPLY] : null;
        if (reply != null) {
            buffers[REPLY] = null;
            if (placed > 0 && !RpcReplyHeader.mayCarryResults(reply.segment().asSlice(0, replyLength))) {
                placed = 0; // lengths returned with no results at all (an echoed chunk): no result was placed
            }
        }
        try {
            if (callerMemoryFreed()) {
                throw new IllegalStateException("memory the call exposed in place was freed (its arena closed) before"
                        + " the call completed: its result is lost, and the peer may have read other bytes");
            }
            if (placed > 0 && !buffers[RECEPTACLE].callerMemory()) { // in place: the bytes are there
                MemorySegment.copy(buffers[RECEPTACLE].segment(), 0, receptacle, 0, placed);
            }
        } catch (RuntimeException e) { // the caller closed the receptacle's arena meanwhile
            freeBuffers();
            if (reply != null) {
                reply.release();
            }
            throw e;
        }
        freeBuffers();
        long reported = offersWriteChunk() ? placed : -1;
        if (reply == null) {
            return ApiBridge.access().message(MemorySegment.NULL, () -> { }, reported);
        }
        return ApiBridge.access().message(reply.segment().asSlice(0, replyLength), reply::release, reported);
    }

    /**
     * Whether memory of the caller's that this call exposed in place (a registration cache
     * entry's) lost its scope while the call was out: the pages stayed pinned, but the
     * caller's allocator may have reused them (see {@link RegistrationCache}).
     */
    private boolean callerMemoryFreed() {
        for (ChunkBuffer b : buffers) {
            if (b != null && b.callerMemory() && !b.segment().scope().isAlive()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The caller gave up on the call (cancel, timeout); {@code replyMayCome}: it was sent
     * and its reply may still arrive. If that reply may invalidate one of our rkeys by Send
     * with Invalidate (we set R, RFC 8797 §4.1, §7; which one is the responder's choice),
     * our LOCAL_INV of any of them must not come first: a peer's
     * invalidation of an rkey already invalid is an error (a remote invalid request that
     * fails both QPs; Debian 6.1's rxe even dereferenced NULL on it, a kernel panic seen in
     * ExposureVerbsTest), and nothing on the wire lets us withdraw a key in a way the peer
     * hears of before it answers. So the exposure is held: its rkeys stay valid and their
     * memory stays ours (chunk memory not reused, a caller's registered buffer still in
     * use) until the reply withdraws it ({@link #finish}, which then copies nothing) or the
     * connection ends ({@link #release}); the connection and its other calls go on. Any
     * other abandoned call is withdrawn at once.
     */
    public void abandon(boolean replyMayCome) {
        synchronized (this) {
            abandoned = true;
            if (replyMayCome && peerMayInvalidate && exposed != 0 && !released) {
                return; // held
            }
        }
        release();
    }

    /**
     * The caller is giving up on the call ({@link #abandon} follows once the requester has
     * said whether its reply may still come): a reply arriving meanwhile copies nothing
     * into the caller's memory.
     */
    public synchronized void callerGone() {
        abandoned = true;
    }

    /** Withdraws every rkey, then frees the memory (once the peer can no longer reach it); idempotent. */
    public void release() {
        int[] keys = withdrawn;
        int n;
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
            n = exposedKeys(keys);
        }
        withdraw(keys, n, this::freeBuffers);
    }

    /**
     * The rkeys still exposed, each once (a call and its Reply chunk may share one), into
     * {@code keys}; marks them withdrawn. Caller holds the lock.
     */
    private int exposedKeys(int[] keys) {
        int n = 0;
        for (int i = 0; i < rkeys.length; i++) {
            if ((exposed & 1 << i) != 0 && !contains(keys, n, rkeys[i])) {
                keys[n++] = rkeys[i];
            }
        }
        exposed = 0;
        return n;
    }

    private static boolean contains(int[] keys, int n, int key) {
        for (int i = 0; i < n; i++) {
            if (keys[i] == key) {
                return true;
            }
        }
        return false;
    }

    private void withdraw(int[] keys, int n, Runnable then) {
        if (n == 0) {
            then.run();
            return;
        }
        try {
            link.withdraw(keys, n, then);
        } catch (RuntimeException e) {
            then.run(); // the link is gone, and with it every rkey it made
        }
    }

    private void freeBuffers() {
        for (int i = 0; i < buffers.length; i++) {
            ChunkBuffer b = buffers[i];
            buffers[i] = null;
            if (b != null) {
                b.release();
            }
        }
    }
}
