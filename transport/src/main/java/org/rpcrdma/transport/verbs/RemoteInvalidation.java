package org.rpcrdma.transport.verbs;

/**
 * Detects that a received Send with Invalidate invalidated the rkey an RPC exposed
 * (RFC 8797 section 7, remote invalidation). The standard flag is IBV_WC_WITH_INV (0x8),
 * but rxe in Debian's 6.1 kernel sets 0x4 instead while still filling invalidated_rkey
 * correctly, so the test is: a successful RECV without immediate data, either flag bit,
 * and invalidated_rkey equal to the rkey exposed for this RPC.
 */
public final class RemoteInvalidation {
    /** The bit Debian 6.1 rxe sets in place of IBV_WC_WITH_INV (it is IBV_WC_IP_CSUM_OK's value). */
    static final int RXE_61_WITH_INV = 0x4;

    private RemoteInvalidation() {
    }

    /** True when completion {@code i} of {@code wc} remotely invalidated {@code exposedRkey}. */
    public static boolean invalidated(WorkCompletions wc, int i, int exposedRkey) {
        return wc.status(i) == WorkCompletions.SUCCESS
                && wc.opcode(i) == WorkCompletions.OPCODE_RECV
                && (wc.wcFlags(i) & WorkCompletions.WITH_IMM) == 0
                && (wc.wcFlags(i) & (WorkCompletions.WITH_INV | RXE_61_WITH_INV)) != 0
                && wc.invalidatedRkey(i) == exposedRkey;
    }
}
