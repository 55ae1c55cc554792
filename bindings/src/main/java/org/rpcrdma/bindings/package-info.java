/**
 * The one native layer: every method handle panama-rpcrdma calls through is made here.
 * A facade in Netty's {@code Native} style, one class per library, each native call a
 * static method named after the C function that returns the C result as is:
 * {@link org.rpcrdma.bindings.IbvCalls} (libibverbs control path),
 * {@link org.rpcrdma.bindings.VerbsInline} (libibverbs data path, the {@code static inline}s
 * of {@code verbs.h}), {@link org.rpcrdma.bindings.RdmaCmCalls} (librdmacm) and
 * {@link org.rpcrdma.bindings.LibcCalls}. Calls that fail through errno capture it, and
 * {@link org.rpcrdma.bindings.NativeErrors} turns any of the libraries' failure conventions
 * into one errno; the transport makes its own exceptions from it. The jextract-generated
 * packages under {@code ffi} give the layouts, constants and the calls that cannot fail.
 */
package org.rpcrdma.bindings;
