/**
 * Endpoints' internals: connecting and reconnecting a client
 * ({@link org.rpcrdma.transport.endpoint.ClientAttachment},
 * {@link org.rpcrdma.transport.endpoint.ClientReconnector},
 * {@link org.rpcrdma.transport.endpoint.ReconnectBackoff}), accepting a server's
 * ({@link org.rpcrdma.transport.endpoint.ServerAcceptor}) and assembling one connection over
 * a link ({@link org.rpcrdma.transport.endpoint.ConnectionAssembly}), with the CM private
 * data of RFC 8797 §4 and the credits and receives of RFC 8166 §3.3.1 and RFC 8167 §4.
 * Internal.
 */
package org.rpcrdma.transport.endpoint;
