package org.rpcrdma.transport.verbs;

/**
 * {@code struct rdma_conn_param} for connect/accept. {@code privateData} is at most 56 bytes
 * on connect and 196 on accept (InfiniBand CM limits less rdma_cm's header).
 * retryCount ~7 matters under Soft-RoCE emulation (packets are dropped and retransmitted);
 * rnrRetryCount 0 makes a Send without a posted receive fail with RNR_RETRY_EXC_ERR
 * instead of stalling, as the Linux client does.
 */
public record ConnectionParameters(byte[] privateData, int responderResources, int initiatorDepth,
                                   int retryCount, int rnrRetryCount) {
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

    /** Defaults: no private data, 1 outstanding RDMA Read each way, retry 7, RNR retry 0. */
    public static ConnectionParameters defaults() {
        return new ConnectionParameters(new byte[0], 1, 1, 7, 0);
    }

    public ConnectionParameters withPrivateData(byte[] data) {
        return new ConnectionParameters(data, responderResources, initiatorDepth, retryCount, rnrRetryCount);
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }
}
