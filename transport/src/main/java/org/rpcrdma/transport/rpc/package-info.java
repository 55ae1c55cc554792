/** A small ONC RPC (RFC 5531) client layer on top of the RPC-over-RDMA transport. */
package org.rpcrdma.transport.rpc;
