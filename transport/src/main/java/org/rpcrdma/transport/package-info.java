/** Endpoints, connections and the public API of panama-rpcrdma. */
package org.rpcrdma.transport;
