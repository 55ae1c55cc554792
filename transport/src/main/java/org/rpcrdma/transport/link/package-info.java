/**
 * The link below a connection, internal: an RC queue pair
 * ({@link org.rpcrdma.transport.link.VerbsLink} over {@link org.rpcrdma.transport.link.LinkHardware})
 * or its in-memory twin ({@link org.rpcrdma.transport.link.InMemoryLink} over
 * {@link org.rpcrdma.transport.link.InMemoryWire}), both behind
 * {@link org.rpcrdma.transport.link.Link}: Sends, receives, RDMA Reads and Writes as work
 * requests ({@link org.rpcrdma.transport.link.WorkRequests}, {@link org.rpcrdma.transport.link.WrId}),
 * completions polled and dispatched ({@link org.rpcrdma.transport.link.CompletionDriver},
 * {@code CompletionPoller} by qp_num, {@link org.rpcrdma.transport.link.LinkCompletions}; on a
 * server optionally from a {@link org.rpcrdma.transport.link.CompletionGroup}'s shared CQs) to the connection's
 * {@link org.rpcrdma.transport.link.CompletionSink}, teardown that waits for the poller
 * ({@link org.rpcrdma.transport.link.LinkGate}) and the one owner of a connection's failure
 * ({@link org.rpcrdma.transport.link.LinkFailure}). RFC 8166 §3.3 (receives posted before
 * credits are granted), §3.4 (RDMA operations within the agreed depth).
 */
package org.rpcrdma.transport.link;
