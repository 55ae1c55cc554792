package org.rpcrdma.transport.verbs;

/** {@code struct ibv_qp_cap}: the requested depths of an RC queue pair. */
public record QueuePairCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {
    public QueuePairCapabilities {
        if (maxSendWr <= 0 || maxSendSge <= 0 || maxRecvWr < 0 || maxRecvSge < 0 || maxInlineData < 0) {
            throw new IllegalArgumentException(toString());
        }
    }
}
