package org.rpcrdma.nfs4.server;

import java.net.InetSocketAddress;
import org.rpcrdma.nfs4.Nfs4;
import org.rpcrdma.nfs4.Nfs4Client;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.xdr.AuthSys;

/**
 * A second NFSv4.1 client (ours) for {@code scripts/nfs-client-test}: opens NAME in the
 * export's root for writing while the kernel's client holds a read delegation of it, so
 * the server recalls the delegation; {@link Nfs4Client} retries the OPEN answered
 * NFS4ERR_DELAY until the holder returned it. Prints how long the OPEN took.
 *
 * <p>{@code ConflictingOpen IP PORT NAME}
 */
final class ConflictingOpen {
    private ConflictingOpen() {}

    public static void main(String[] args) throws Exception {
        InetSocketAddress addr = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        AuthSys root = new AuthSys(0, "conflicting-open", 0, 0, new int[0]);
        // a cold JVM connecting under emulation takes longer than the default 5 s
        RpcRdmaOptions o = RpcRdmaOptions.builder().backwardCredits(2).connectTimeoutMillis(120_000).build();
        try (Nfs4Client c = Nfs4Client.connect(addr, o, root)) {
            long t0 = System.nanoTime();
            Nfs4Client.OpenFile f = c.open(args[2], Nfs4.OPEN4_SHARE_ACCESS_WRITE);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            c.close(f);
            System.out.println("conflicting-open: OPEN for write of " + args[2] + " completed in " + ms + " ms");
        }
    }
}
