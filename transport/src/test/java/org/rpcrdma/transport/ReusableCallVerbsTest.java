package org.rpcrdma.transport;

import org.junit.jupiter.api.Tag;

/** {@link ReusableCallBehaviour} over real verbs (Soft-RoCE guest), in both completion modes. */
@Tag("verbs")
class ReusableCallVerbsTest extends ReusableCallBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.VERBS;
    }
}
