package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.rpcrdma.bindings.ffi.ibverbs.IbVerbs;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_mw_bind_info;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_send_wr;
import org.rpcrdma.bindings.ffi.ibverbs.ibv_sge;

/**
 * A preallocated chain of {@code ibv_send_wr} (each with room for a fixed number of SGEs),
 * filled by the adder methods and posted by {@link QueuePair#postSend(SendBatch)}. Reuse it:
 * {@link #clear()}, add, post. Nothing is allocated after construction. Not thread-safe;
 * one batch per posting thread. Each adder returns the index of the new work request, and
 * {@link #addSge} appends a further scatter/gather element to the latest one.
 *
 * <p>Each request's {@code sg_list} points at its own SGEs for good (written once), and a
 * request whose last use set only the common fields is refilled with those alone, two
 * pairs of 32-bit fields as one 64-bit store each: under C1 every store into a segment is a
 * chain of checks, so a one-SGE Send costs six stores instead of a 128-byte copy, eight
 * stores and a load. A request that used a union (immediate data, an rkey, a remote
 * address, a window bind) starts from a zeroed copy again on its next use.
 */
public final class SendBatch implements AutoCloseable {
    private static final long WR_SIZE = ibv_send_wr.layout().byteSize();
    private static final long SGE_SIZE = ibv_sge.layout().byteSize();
    private static final long WR_ID = ibv_send_wr.wr_id$offset();
    private static final long NEXT = ibv_send_wr.next$offset();
    private static final long SG_LIST = ibv_send_wr.sg_list$offset();
    private static final long NUM_SGE = ibv_send_wr.num_sge$offset();
    private static final long OPCODE = ibv_send_wr.opcode$offset();
    private static final long SEND_FLAGS = ibv_send_wr.send_flags$offset();
    private static final long IMM = ibv_send_wr.imm_data$offset();
    private static final long REMOTE_ADDR = ibv_send_wr.wr$offset() + ibv_send_wr.wr.rdma$offset()
            + ibv_send_wr.wr.rdma.remote_addr$offset();
    private static final long RKEY = ibv_send_wr.wr$offset() + ibv_send_wr.wr.rdma$offset()
            + ibv_send_wr.wr.rdma.rkey$offset();
    private static final long BIND_MW = ibv_send_wr.bind_mw$offset();
    private static final long BIND_MW_MW = BIND_MW + ibv_send_wr.bind_mw.mw$offset();
    private static final long BIND_MW_RKEY = BIND_MW + ibv_send_wr.bind_mw.rkey$offset();
    private static final long BIND_INFO = BIND_MW + ibv_send_wr.bind_mw.bind_info$offset();
    private static final long BIND_INFO_MR = BIND_INFO + ibv_mw_bind_info.mr$offset();
    private static final long BIND_INFO_ADDR = BIND_INFO + ibv_mw_bind_info.addr$offset();
    private static final long BIND_INFO_LENGTH = BIND_INFO + ibv_mw_bind_info.length$offset();
    private static final long BIND_INFO_ACCESS = BIND_INFO + ibv_mw_bind_info.mw_access_flags$offset();
    private static final long SGE_ADDR = ibv_sge.addr$offset();
    private static final long SGE_LENGTH = ibv_sge.length$offset();
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    static {
        // verbs.h fixes these: num_sge and opcode share a 64-bit word, as do an SGE's length and lkey
        if (NUM_SGE % 8 != 0 || OPCODE != NUM_SGE + 4 || SGE_LENGTH % 8 != 0
                || ibv_sge.lkey$offset() != SGE_LENGTH + 4) {
            throw new ExceptionInInitializerError("unexpected ibv_send_wr / ibv_sge layout");
        }
    }

    /** ibv_send_flags IBV_SEND_SIGNALED: this request produces a completion. */
    public static final int SIGNALED = IbVerbs.IBV_SEND_SIGNALED();
    /** ibv_send_flags IBV_SEND_FENCE: wait for earlier RDMA Reads/atomics first. */
    public static final int FENCE = IbVerbs.IBV_SEND_FENCE();
    /** ibv_send_flags IBV_SEND_SOLICITED. */
    public static final int SOLICITED = IbVerbs.IBV_SEND_SOLICITED();

    /** Its memory's arena; null if that is its owner's, who closes it. */
    private final Arena own;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    /** A zeroed request: each new one starts as a copy of it (one bulk copy, not a store per field). */
    private final MemorySegment blank;
    private final long wrsAddress;
    private final long sgesAddress;
    private final int maxWr;
    private final int maxSge;
    private final MemoryWindow[] windows;
    private final int[] windowRkeys;
    /** SGEs of each request so far (what its num_sge holds). */
    private final int[] sgeCount;
    /** Whether request i's memory holds more than the common fields (a union was set): zero it first. */
    private final boolean[] dirty;
    private int count;

    /** Room for {@code maxWr} chained requests with up to {@code maxSge} SGEs each. */
    public SendBatch(int maxWr, int maxSge) {
        this(maxWr, maxSge, Arena.ofShared(), true);
    }

    /**
     * As above, in {@code arena}, which its owner closes after this batch's last use
     * ({@link #close} leaves it): closing a shared arena is a handshake with every thread
     * of the JVM, so an owner of several batches closes one.
     */
    public SendBatch(int maxWr, int maxSge, Arena arena) {
        this(maxWr, maxSge, arena, false);
    }

    private SendBatch(int maxWr, int maxSge, Arena arena, boolean owned) {
        if (maxWr <= 0 || maxSge <= 0) {
            if (owned) {
                arena.close();
            }
            throw new IllegalArgumentException("maxWr " + maxWr + ", maxSge " + maxSge);
        }
        this.own = owned ? arena : null;
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        this.wrs = arena.allocate(WR_SIZE * maxWr, 8);
        this.sges = arena.allocate(SGE_SIZE * maxWr * maxSge, 8);
        this.blank = arena.allocate(WR_SIZE, 8);
        this.wrsAddress = wrs.address();
        this.sgesAddress = sges.address();
        this.windows = new MemoryWindow[maxWr];
        this.windowRkeys = new int[maxWr];
        this.sgeCount = new int[maxWr];
        this.dirty = new boolean[maxWr];
        for (int i = 0; i < maxWr; i++) {
            wrs.set(ValueLayout.JAVA_LONG, WR_SIZE * i + SG_LIST, sgList(i)); // the rest is zero (allocate zeroes)
        }
    }

    private long sgList(int i) {
        return sgesAddress + SGE_SIZE * maxSge * i;
    }

    /** The 64-bit word whose lower-addressed 32 bits hold {@code first} and the higher {@code second}. */
    private static long pair(int first, int second) {
        return LITTLE_ENDIAN ? (long) second << 32 | first & 0xffff_ffffL : (long) first << 32 | second & 0xffff_ffffL;
    }

    /** Empties the batch. */
    public void clear() {
        for (int i = 0; i < count; i++) {
            windows[i] = null;
        }
        count = 0;
    }

    /** Number of requests in the batch. */
    public int size() {
        return count;
    }

    MemorySegment first() {
        return wrs;
    }

    /** The native address of the first request (the chain ibv_post_send takes). */
    long firstAddress() {
        return wrsAddress;
    }

    /** The index of the request at native address {@code bad}, or -1. */
    int indexOf(long bad) {
        long off = bad - wrsAddress;
        return off < 0 || off >= WR_SIZE * count ? -1 : (int) (off / WR_SIZE);
    }

    /** After a successful post of requests [0, posted): windows take their new rkeys. */
    void posted(int posted) {
        for (int i = 0; i < posted; i++) {
            if (windows[i] != null) {
                windows[i].rkeyPosted(windowRkeys[i]);
            }
        }
    }

    private long add(long wrId, int opcode, int flags, int sges) {
        if (count == maxWr) {
            throw new IllegalStateException("batch full (" + maxWr + " requests)");
        }
        long base = WR_SIZE * count;
        if (dirty[count]) {
            // a union of its last use may still hold an rkey or immediate data: every field
            // the opcode does not use must read as zero
            MemorySegment.copy(blank, 0, wrs, base, WR_SIZE);
            wrs.set(ValueLayout.JAVA_LONG, base + SG_LIST, sgList(count));
            dirty[count] = false;
        }
        wrs.set(ValueLayout.JAVA_LONG, base + WR_ID, wrId);
        wrs.set(ValueLayout.JAVA_LONG, base + NEXT, 0L);
        wrs.set(ValueLayout.JAVA_LONG, base + NUM_SGE, pair(sges, opcode));
        wrs.set(ValueLayout.JAVA_INT, base + SEND_FLAGS, flags);
        if (count > 0) {
            wrs.set(ValueLayout.JAVA_LONG, base - WR_SIZE + NEXT, wrsAddress + base);
        }
        sgeCount[count] = sges;
        count++;
        return base;
    }

    /** A request that sets a union field: zeroed before its slot's next use. */
    private long addWithUnion(long wrId, int opcode, int flags) {
        long base = add(wrId, opcode, flags, 0);
        dirty[count - 1] = true;
        return base;
    }

    /** Appends one SGE (lkey, address, length) to the latest request. */
    public void addSge(int lkey, long address, int length) {
        if (count == 0) {
            throw new IllegalStateException("no request to add an SGE to");
        }
        int i = count - 1;
        int n = sgeCount[i];
        if (n == maxSge) {
            throw new IllegalStateException("request already has " + maxSge + " SGEs");
        }
        putSge(i, n, lkey, address, length);
        sgeCount[i] = n + 1;
        wrs.set(ValueLayout.JAVA_INT, WR_SIZE * i + NUM_SGE, n + 1);
    }

    private void putSge(int wr, int n, int lkey, long address, int length) {
        long sge = SGE_SIZE * ((long) maxSge * wr + n);
        sges.set(ValueLayout.JAVA_LONG, sge + SGE_ADDR, address);
        sges.set(ValueLayout.JAVA_LONG, sge + SGE_LENGTH, pair(length, lkey));
    }

    private int withSge(int lkey, long address, int length) {
        if (length > 0) {
            addSge(lkey, address, length);
        }
        return count - 1;
    }

    /** IBV_WR_SEND of [address, address+length) registered under {@code lkey}. */
    public int send(long wrId, int lkey, long address, int length, int flags) {
        if (length <= 0) {
            add(wrId, IbVerbs.IBV_WR_SEND(), flags, 0);
            return count - 1;
        }
        add(wrId, IbVerbs.IBV_WR_SEND(), flags, 1); // the common case: its one SGE with it
        putSge(count - 1, 0, lkey, address, length);
        return count - 1;
    }

    /** IBV_WR_SEND_WITH_IMM; {@code imm} is put on the wire as given (network order is the caller's). */
    public int sendWithImm(long wrId, int lkey, long address, int length, int imm, int flags) {
        long base = addWithUnion(wrId, IbVerbs.IBV_WR_SEND_WITH_IMM(), flags);
        wrs.set(ValueLayout.JAVA_INT, base + IMM, imm);
        return withSge(lkey, address, length);
    }

    /** IBV_WR_SEND_WITH_INV: the receiver's {@code invalidateRkey} becomes invalid (RFC 8797 section 7). */
    public int sendWithInvalidate(long wrId, int lkey, long address, int length, int invalidateRkey, int flags) {
        long base = addWithUnion(wrId, IbVerbs.IBV_WR_SEND_WITH_INV(), flags);
        wrs.set(ValueLayout.JAVA_INT, base + IMM, invalidateRkey);
        return withSge(lkey, address, length);
    }

    /** IBV_WR_RDMA_WRITE from local memory to the peer's (remoteAddress, rkey). */
    public int rdmaWrite(long wrId, int lkey, long address, int length, long remoteAddress, int rkey, int flags) {
        long base = addWithUnion(wrId, IbVerbs.IBV_WR_RDMA_WRITE(), flags);
        wrs.set(ValueLayout.JAVA_LONG, base + REMOTE_ADDR, remoteAddress);
        wrs.set(ValueLayout.JAVA_INT, base + RKEY, rkey);
        return withSge(lkey, address, length);
    }

    /** IBV_WR_RDMA_READ from the peer's (remoteAddress, rkey) into local memory. */
    public int rdmaRead(long wrId, int lkey, long address, int length, long remoteAddress, int rkey, int flags) {
        long base = addWithUnion(wrId, IbVerbs.IBV_WR_RDMA_READ(), flags);
        wrs.set(ValueLayout.JAVA_LONG, base + REMOTE_ADDR, remoteAddress);
        wrs.set(ValueLayout.JAVA_INT, base + RKEY, rkey);
        return withSge(lkey, address, length);
    }

    /** Makes the latest request signalled (a chain whose last completion covers the rest). */
    public void signalLast() {
        if (count == 0) {
            throw new IllegalStateException("no request to signal");
        }
        long at = WR_SIZE * (count - 1) + SEND_FLAGS;
        wrs.set(ValueLayout.JAVA_INT, at, wrs.get(ValueLayout.JAVA_INT, at) | SIGNALED);
    }

    /** IBV_WR_LOCAL_INV of {@code rkey} (a window's or an MR's). */
    public int localInvalidate(long wrId, int rkey, int flags) {
        long base = addWithUnion(wrId, IbVerbs.IBV_WR_LOCAL_INV(), flags);
        wrs.set(ValueLayout.JAVA_INT, base + IMM, rkey);
        return count - 1;
    }

    /**
     * IBV_WR_BIND_MW: binds type-2 window {@code mw} to [address, address+length) of
     * {@code mr} with {@code access} (Access.REMOTE_*), under {@link MemoryWindow#nextRkey()}.
     * The window reports that rkey once the batch is posted.
     */
    public int bindWindow(long wrId, MemoryWindow mw, MemoryRegion mr, long address, long length, int access, int flags) {
        return bindWindow(wrId, mw, mr, address, length, access, flags, mw.nextRkey());
    }

    /**
     * As {@link #bindWindow(long, MemoryWindow, MemoryRegion, long, long, int, int)}, under
     * {@code rkey}: the window's own with another 8-bit tag (a type-2 bind keeps the index).
     */
    public int bindWindow(long wrId, MemoryWindow mw, MemoryRegion mr, long address, long length, int access, int flags,
            int rkey) {
        if ((rkey & ~0xff) != (mw.rkey() & ~0xff)) {
            throw new IllegalArgumentException("rkey 0x" + Integer.toHexString(rkey) + " is not window 0x"
                    + Integer.toHexString(mw.rkey()) + "'s index with another tag");
        }
        long base = addWithUnion(wrId, IbVerbs.IBV_WR_BIND_MW(), flags);
        wrs.set(ValueLayout.ADDRESS, base + BIND_MW_MW, mw.handle());
        wrs.set(ValueLayout.JAVA_INT, base + BIND_MW_RKEY, rkey);
        wrs.set(ValueLayout.ADDRESS, base + BIND_INFO_MR, mr.handle());
        wrs.set(ValueLayout.JAVA_LONG, base + BIND_INFO_ADDR, address);
        wrs.set(ValueLayout.JAVA_LONG, base + BIND_INFO_LENGTH, length);
        wrs.set(ValueLayout.JAVA_INT, base + BIND_INFO_ACCESS, access);
        windows[count - 1] = mw;
        windowRkeys[count - 1] = rkey;
        return count - 1;
    }

    /** Frees the native structures (unless they are in an owner's arena). */
    @Override
    public void close() {
        if (own != null) {
            own.close();
        }
    }
}
