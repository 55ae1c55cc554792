package org.rpcrdma.transport;

/** {@link ZeroCopyBehaviour} over the in-memory pair. */
class ZeroCopyTest extends ZeroCopyBehaviour {
    @Override
    LinkFixture link() {
        return LinkFixture.IN_MEMORY;
    }
}
