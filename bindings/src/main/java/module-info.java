/**
 * jextract-generated bindings to libibverbs and librdmacm, plus the hand-written data
 * path that C callers get from static inlines in {@code verbs.h}. Internal to
 * panama-rpcrdma: exported only to the transport.
 */
module org.rpcrdma.bindings {
    exports org.rpcrdma.bindings to org.rpcrdma.transport;
    exports org.rpcrdma.bindings.ffi.ibverbs to org.rpcrdma.transport;
    exports org.rpcrdma.bindings.ffi.rdmacm to org.rpcrdma.transport;
}
