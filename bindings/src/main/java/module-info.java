/**
 * jextract-generated bindings to libibverbs and librdmacm, plus the hand-written data
 * path that C callers get from static inlines in {@code verbs.h}. Internal to
 * panama-rpcrdma: exported only to the transport (and the benchmarks).
 */
module org.rpcrdma.bindings {
    exports org.rpcrdma.bindings to org.rpcrdma.transport;
}
