/** Typed ONC RPC (RFC 5531) over RPC-over-RDMA: codecs, client, dispatcher. */
package org.rpcrdma.oncrpc;
