/** Hand-written pieces of the bindings: the verbs data path and native error decoding. */
package org.rpcrdma.bindings;
