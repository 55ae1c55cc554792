package org.rpcrdma.transport.verbs;

/**
 * {@code struct rdma_conn_param} for connect/accept. {@code privateData} is at most 56 bytes
 * on connect and 196 on accept (InfiniBand CM limits less rdma_cm's header).
 * rnrRetryCount 0 makes a Send without a posted receive fail with RNR_RETRY_EXC_ERR
 * instead of stalling, as the Linux client does.
 */
public record ConnectionParameters(byte[] privateData, int responderResources, int initiatorDepth,
                                   int retryCount, int rnrRetryCount) {
    /**
     * Transport retries before a QP fails (RETRY_EXC_ERR) and the connection is lost, as
     * Linux's xprtrdma sets it: the RPC layer then reconnects and sends again. Not 7: Soft-RoCE
     * never decrements a retry count of 7 (it treats it like rnr_retry 7, "infinite"), so a
     * dead peer or a long outage would go undetected, and the connection would hang forever.
     */
    public static final int RETRY_COUNT = 6;

    public ConnectionParameters {
        privateData = privateData == null ? new byte[0] : privateData.clone();
        if (privateData.length > 255) {
            throw new IllegalArgumentException("private data too long: " + privateData.length);
        }
        check("responderResources", responderResources);
        check("initiatorDepth", initiatorDepth);
        if (retryCount < 0 || retryCount > 7 || rnrRetryCount < 0 || rnrRetryCount > 7) {
            throw new IllegalArgumentException("retry counts are 0..7");
        }
    }

    private static void check(String what, int v) {
        if (v < 0 || v > 255) {
            throw new IllegalArgumentException(what + " " + v);
        }
    }

    /** Defaults: no private data, 1 outstanding RDMA Read each way, {@link #RETRY_COUNT} retries, RNR retry 0. */
    public static ConnectionParameters defaults() {
        return new ConnectionParameters(new byte[0], 1, 1, RETRY_COUNT, 0);
    }

    public ConnectionParameters withPrivateData(byte[] data) {
        return new ConnectionParameters(data, responderResources, initiatorDepth, retryCount, rnrRetryCount);
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }
}
