package org.rpcrdma.transport;

import org.junit.jupiter.api.Tag;

/** {@link ReceiveDefectsBehaviour} over real verbs (Soft-RoCE guest). */
@Tag("verbs")
class ReceiveDefectsVerbsTest extends ReceiveDefectsBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.VERBS;
    }
}
