/** JMH benchmarks for panama-rpcrdma. */
package org.rpcrdma.bench;
