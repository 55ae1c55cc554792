package org.rpcrdma.transport.link;

/**
 * Packs what a completion must identify into the 64-bit {@code wr_id} (like Netty's
 * io_uring {@code UserData}): the operation, the slot (send context or receive buffer
 * index) and a generation that changes whenever the connection's hardware is rebuilt, so
 * a completion from an old QP can never be taken for one of the new QP.
 *
 * <pre>
 *  63        32 31              8 7    0
 * +------------+-----------------+------+
 * | generation |      slot       |  op  |
 * +------------+-----------------+------+
 * </pre>
 */
public final class WrId {
    public static final int OP_BITS = 8;
    public static final int SLOT_BITS = 24;
    public static final int MAX_OP = (1 << OP_BITS) - 1;
    public static final int MAX_SLOT = (1 << SLOT_BITS) - 1;

    /** Operations a completion can belong to. */
    public static final int OP_SEND = 1;
    public static final int OP_RECV = 2;
    public static final int OP_READ = 3;
    public static final int OP_WRITE = 4;
    public static final int OP_LOCAL_INV = 5;
    public static final int OP_BIND_MW = 6;
    public static final int OP_DRAIN = 7;

    private WrId() {}

    public static long pack(int op, int slot, int generation) {
        if (op < 0 || op > MAX_OP) {
            throw new IllegalArgumentException("op out of range: " + op);
        }
        if (slot < 0 || slot > MAX_SLOT) {
            throw new IllegalArgumentException("slot out of range: " + slot);
        }
        return ((long) generation << 32) | ((long) slot << OP_BITS) | op;
    }

    public static int op(long wrId) {
        return (int) (wrId & MAX_OP);
    }

    public static int slot(long wrId) {
        return (int) ((wrId >>> OP_BITS) & MAX_SLOT);
    }

    public static int generation(long wrId) {
        return (int) (wrId >>> 32);
    }
}
