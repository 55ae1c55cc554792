package org.rpcrdma.transport;

import org.junit.jupiter.api.Tag;

/** {@link RpcRdmaConformanceBehaviour} over real verbs (Soft-RoCE guest). */
@Tag("verbs")
class RpcRdmaConformanceVerbsTest extends RpcRdmaConformanceBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.VERBS;
    }

    /** Memory windows off, so our client exposes a chunk by a registration (the other way to expose). */
    @Override
    RpcRdmaOptions clientSide() {
        return CLIENT_SIDE.toBuilder().memoryWindows(false).build();
    }
}
