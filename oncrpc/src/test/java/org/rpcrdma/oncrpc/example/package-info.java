/** Examples of the typed layer: a notification server that calls its clients back. */
package org.rpcrdma.oncrpc.example;
