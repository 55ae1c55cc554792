package org.rpcrdma.transport.chunk;

import org.rpcrdma.transport.link.VerbsLink;
import org.rpcrdma.transport.link.WrId;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.verbs.MemoryRegion;
import org.rpcrdma.transport.verbs.MemoryWindow;
import org.rpcrdma.transport.verbs.ProtectionDomain;
import org.rpcrdma.transport.verbs.QueuePair;
import org.rpcrdma.transport.verbs.SendBatch;

/**
 * The type-2 memory windows of one {@link VerbsLink} (≈ the FRWR MRs of a Linux
 * {@code rpcrdma_ep}, frwr_ops.c): userspace verbs has no fast-registration work request,
 * so a window bound per RPC over chunk memory registered once is our FRWR. Each bind
 * (IBV_WR_BIND_MW) takes a new rkey for the window (its 8-bit tag drawn at random,
 * {@link RkeyTags}, where {@code frwr_map} bumps the MR key), so no rkey outlives its RPC
 * and none can be guessed (RFC 8166 §4.4, §8.1).
 *
 * <p>Windows are allocated on first need, up to {@code capacity}, and reused: a withdrawn
 * window goes back on the free list once its rkey is invalid. Withdrawal is a chain of
 * IBV_WR_LOCAL_INV (the last one signalled; an RC send queue completes in order, so its
 * completion covers the chain, as {@code frwr_unmap_sync} waits for the last), or nothing
 * for a window the peer's Send with Invalidate already withdrew (RFC 8797 §7,
 * {@link #remotelyInvalidated}): never twice. What runs next ({@code then}) runs once the
 * rkeys are invalid, so chunk memory is read or reused only after the peer lost it.
 *
 * <p>Send queue room: a window has at most one bind (unsignalled) and one LOCAL_INV
 * outstanding, so the link sizes its send queue {@code 2 * capacity} larger and its CQ
 * {@code capacity} larger. Bind and LOCAL_INV posts hold this object's lock; the link
 * calls everything here under the read side of its gate, and {@link #closeAll} under the
 * write side, after the QP.
 */
public final class WindowPool {
    /**
     * Where a bind may wait to go out ahead of the next Send, in one post with it (the link's
     * send chain): a chunked call's bind and Send are then one system call, not two.
     */
    public interface BindChain {
        /** Stages the bind when this thread has the chain open and it has room; false: post it now. */
        boolean stageBind(long wrId, MemoryWindow mw, MemoryRegion mr, long address, long length, int access, int rkey);

        /** Posts what is staged now; the caller is inside the link's gate. */
        void postStaged();
    }

    /** {@link #bind} found no window: the caller registers the memory itself. */
    static final int NO_WINDOW = 0;
    /** Most rkeys one RPC withdraws at once (its call, reply and receptacle chunks). */
    public static final int MAX_PER_WITHDRAWAL = 4;

    private final ProtectionDomain pd;
    private final QueuePair qp;
    private final int generation;
    private final MemoryWindow[] windows;
    private int allocated;
    /** The device refused a window: no more tries. */
    private boolean unavailable;
    private final int[] free;
    private int freeCount;
    /** Bound windows by rkey: rkey -> window index. */
    private final BoundRkeys bound;
    private final boolean[] invalidatedByPeer;
    private final SendBatch batch = new SendBatch(MAX_PER_WITHDRAWAL, 1);
    private final RkeyTags tags = new RkeyTags();
    /** Withdrawals waiting for their LOCAL_INV: token -> windows and what runs next. */
    private final int[][] pendingWindows;
    private final int[] pendingCount;
    private final Runnable[] pendingThen;
    private final int[] freeTokens;
    private int freeTokenCount;
    private volatile StatsCounters stats;
    private volatile BindChain chain;

    public WindowPool(ProtectionDomain pd, QueuePair qp, int generation, int capacity) {
        this.pd = pd;
        this.qp = qp;
        this.generation = generation;
        this.windows = new MemoryWindow[capacity];
        this.free = new int[capacity];
        this.invalidatedByPeer = new boolean[capacity];
        this.bound = new BoundRkeys(capacity);
        this.pendingWindows = new int[capacity][MAX_PER_WITHDRAWAL];
        this.pendingCount = new int[capacity];
        this.pendingThen = new Runnable[capacity];
        this.freeTokens = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            freeTokens[i] = capacity - 1 - i;
        }
        this.freeTokenCount = capacity;
    }

    int capacity() {
        return windows.length;
    }

    void stats(StatsCounters s) {
        this.stats = s;
    }

    void chain(BindChain c) {
        this.chain = c;
    }

    /**
     * Binds a window over {@code mr}'s {@code [address, +length)} with {@code access}
     * (Access.REMOTE_READ or REMOTE_WRITE) and returns its fresh rkey, or
     * {@link #NO_WINDOW} if none is free and no more can be had.
     */
    synchronized int bind(MemoryRegion mr, long address, long length, int access) {
        int w = take();
        if (w < 0) {
            return NO_WINDOW;
        }
        MemoryWindow mw = windows[w];
        // Unsignalled: a failed bind completes in error anyway and ends the link; the Send
        // that names the rkey follows on the same send queue, after the bind (staged: in the
        // same post, ahead of it).
        long wrId = WrId.pack(WrId.OP_BIND_MW, w, generation);
        int rkey = tags.renew(mw.rkey());
        BindChain c = chain;
        if (c == null || !c.stageBind(wrId, mw, mr, address, length, access, rkey)) {
            batch.clear();
            batch.bindWindow(wrId, mw, mr, address, length, access, 0, rkey);
            countPost();
            try {
                qp.postSend(batch);
            } catch (RuntimeException e) {
                free[freeCount++] = w;
                throw e;
            }
        }
        bound.put(rkey, w);
        invalidatedByPeer[w] = false;
        StatsCounters s = stats;
        if (s != null) {
            s.windowsBound.increment();
        }
        return rkey;
    }

    private void countPost() {
        StatsCounters s = stats;
        if (s != null) {
            s.sendQueuePosts.increment();
        }
    }

    /**
     * Allocates a first window now, so that the device's claim to have type-2 windows
     * (its max_mw) is checked before the connection's private data says what our rkeys are
     * ({@link InvalidationPromise}). False: it refused one; the link does without windows.
     */
    public synchronized boolean probe() {
        int w = take();
        if (w < 0) {
            return false;
        }
        free[freeCount++] = w;
        return true;
    }

    private int take() {
        if (freeCount > 0) {
            return free[--freeCount];
        }
        if (unavailable || allocated == windows.length) {
            return -1;
        }
        try {
            windows[allocated] = pd.allocateWindow();
        } catch (RuntimeException e) {
            unavailable = true; // the device has no type-2 windows (max_mw 0, or alloc refused)
            System.getLogger(WindowPool.class.getName()).log(System.Logger.Level.DEBUG,
                    "no memory windows; registering per RPC instead: {0}", e.toString());
            return -1;
        }
        return allocated++;
    }

    /** Windows bound now (tests: exposures back to none after every call). */
    synchronized int boundCount() {
        return bound.size();
    }

    /** Whether {@code rkey} is a window's we bound and have not withdrawn. */
    synchronized boolean isBound(int rkey) {
        return bound.get(rkey) >= 0;
    }

    /**
     * A Send with Invalidate arrived naming {@code rkey} (RFC 8797 §7; rxe flags it wrongly,
     * so the link recognises it by the rkey: verbs.RemoteInvalidation). If it is a bound
     * window of ours, the device has withdrawn it: {@link #withdraw} will post no LOCAL_INV.
     *
     * @return whether it was one of ours
     */
    synchronized boolean remotelyInvalidated(int rkey) {
        int w = bound.get(rkey);
        if (w < 0) {
            return false;
        }
        invalidatedByPeer[w] = true;
        return true;
    }

    /**
     * Withdraws the windows among {@code rkeys[0, n)} (others are left alone, the caller's).
     * Returns true if none needs a LOCAL_INV ({@code then} is the caller's to run now);
     * false if a LOCAL_INV chain is posted and {@code then} runs on its completion
     * ({@link #completed}).
     */
    synchronized boolean withdraw(int[] rkeys, int n, Runnable then) {
        if (n > MAX_PER_WITHDRAWAL) {
            throw new IllegalArgumentException(n + " rkeys in one withdrawal");
        }
        batch.clear();
        int token = -1;
        for (int i = 0; i < n; i++) {
            int w = bound.remove(rkeys[i]);
            if (w < 0) {
                continue;
            }
            StatsCounters s = stats;
            if (invalidatedByPeer[w]) {
                invalidatedByPeer[w] = false;
                free[freeCount++] = w; // ORDER: already invalid; never invalidated twice
                if (s != null) {
                    s.remoteInvalidations.increment();
                }
                continue;
            }
            if (token < 0) {
                token = freeTokens[--freeTokenCount]; // at most one withdrawal per bound window: never empty
                pendingCount[token] = 0;
            }
            pendingWindows[token][pendingCount[token]++] = w;
            batch.localInvalidate(WrId.pack(WrId.OP_LOCAL_INV, token, generation), rkeys[i], 0);
            if (s != null) {
                s.localInvalidations.increment();
            }
        }
        if (token < 0) {
            return true;
        }
        batch.signalLast();
        pendingThen[token] = then;
        try {
            // ORDER: a bind still staged (its call failed before its Send) goes out before the
            // LOCAL_INV that withdraws it
            BindChain c = chain;
            if (c != null) {
                c.postStaged();
            }
            countPost();
            qp.postSend(batch);
        } catch (RuntimeException e) {
            // the QP is failing: its windows stay out of use (closeAll frees them); go on
            pendingThen[token] = null;
            freeTokens[freeTokenCount++] = token;
            return true;
        }
        return false;
    }

    /**
     * The LOCAL_INV chain of {@code token} completed (or was flushed: the QP is in error,
     * so nothing reaches the windows either): they are free again if it succeeded. Returns
     * what runs next, for the caller to run outside every lock.
     */
    synchronized Runnable completed(int token, boolean ok) {
        if (token < 0 || token >= pendingThen.length || pendingThen[token] == null) {
            return null;
        }
        Runnable then = pendingThen[token];
        pendingThen[token] = null;
        if (ok) {
            for (int i = 0; i < pendingCount[token]; i++) {
                free[freeCount++] = pendingWindows[token][i];
            }
        }
        freeTokens[freeTokenCount++] = token;
        return then;
    }

    /**
     * The link is freeing everything (its QP is gone): deallocates every window (before
     * the memory they were bound to is deregistered) and returns the withdrawals still
     * waiting, for the caller to run once it holds no lock.
     */
    public synchronized Runnable[] closeAll() {
        java.util.ArrayList<Runnable> left = new java.util.ArrayList<>();
        for (int t = 0; t < pendingThen.length; t++) {
            if (pendingThen[t] != null) {
                left.add(pendingThen[t]);
                pendingThen[t] = null;
            }
        }
        for (int i = 0; i < allocated; i++) {
            try {
                windows[i].close();
            } catch (RuntimeException e) {
                System.getLogger(WindowPool.class.getName()).log(System.Logger.Level.DEBUG, "dealloc_mw: {0}",
                        e.toString());
            }
        }
        allocated = 0;
        freeCount = 0;
        bound.clear();
        batch.close();
        return left.toArray(new Runnable[0]);
    }
}
