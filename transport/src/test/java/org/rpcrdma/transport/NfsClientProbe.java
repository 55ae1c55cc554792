package org.rpcrdma.transport;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.rpcrdma.xdr.OpaqueAuth;
import org.rpcrdma.xdr.RpcCallHeader;
import org.rpcrdma.xdr.RpcReplyHeader;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * A server of ours for the Linux kernel's NFS client to mount against (interoperability
 * with code we did not write; run by {@code scripts/nfs-client-probe} in the guest):
 * answers NFS NULL with success and every COMPOUND with NFS4ERR_SERVERFAULT for its first
 * operation, and logs each call, with the Reply chunk it offered. The kernel's NFSv4.1
 * EXCHANGE_ID always offers one (before chunks, we answered it ERR_CHUNK and the mount
 * failed with EIO in the transport). Exit 0 if a NULL and an EXCHANGE_ID were served and
 * answered and no RDMA_ERROR was sent.
 *
 * <p>{@code NfsClientProbe IP PORT SECONDS READY_FILE}
 */
final class NfsClientProbe {
    private static final int NFS_PROGRAM = 100003;
    private static final int OP_EXCHANGE_ID = 42;
    private static final int NFS4ERR_SERVERFAULT = 10006;

    private NfsClientProbe() {}

    public static void main(String[] args) throws Exception {
        AtomicInteger nulls = new AtomicInteger();
        AtomicInteger exchangeIds = new AtomicInteger();
        CallHandler h = call -> {
            MemorySegment m = call.message().bytes();
            RpcCallHeader c;
            int op = -1;
            try {
                XdrReader r = new XdrReader(m, 0, m.byteSize());
                c = new RpcCallHeader().decode(r);
                if (c.proc() == 1) {
                    r.readOpaque(1024); // tag
                    r.readInt(); // minorversion
                    if (r.readInt() > 0) {
                        op = r.readInt();
                    }
                }
            } catch (Exception e) {
                System.out.println("probe: undecodable call: " + e);
                return;
            }
            System.out.printf("probe: call xid=0x%x prog=%d vers=%d proc=%d op=%d, %d bytes, Reply chunk %d bytes%n",
                    c.xid(), c.prog(), c.vers(), c.proc(), op, m.byteSize(), call.replyChunkCapacity());
            MemorySegment reply = MemorySegment.ofArray(new byte[64]);
            XdrWriter w = new XdrWriter(reply, 0, 64);
            RpcReplyHeader.encodeAccepted(w, c.xid(), OpaqueAuth.NONE, 0);
            if (c.prog() == NFS_PROGRAM && c.proc() == 1) {
                // COMPOUND4res: status, tag (empty), resarray<1> = { op, status }
                w.writeInt(NFS4ERR_SERVERFAULT).writeInt(0).writeInt(1).writeInt(op).writeInt(NFS4ERR_SERVERFAULT);
            }
            call.reply(reply.asSlice(0, w.written()));
            if (c.proc() == 0) {
                nulls.incrementAndGet();
            } else if (op == OP_EXCHANGE_ID) {
                exchangeIds.incrementAndGet();
            }
        };
        InetSocketAddress addr = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        try (RpcRdmaServer s = RpcRdmaServer.listen(addr, RpcRdmaOptions.defaults(), h, null)) {
            Files.writeString(Path.of(args[3]), "listening\n");
            System.out.println("probe: listening on " + addr);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[2]));
            while (System.nanoTime() < end && exchangeIds.get() == 0) {
                Thread.sleep(100);
            }
            Thread.sleep(500);
            System.out.println("probe: " + nulls.get() + " NULL, " + exchangeIds.get() + " EXCHANGE_ID answered; "
                    + s.stats());
            boolean ok = nulls.get() > 0 && exchangeIds.get() > 0 && s.stats().errChunkSent() == 0
                    && s.stats().errVersSent() == 0;
            System.out.println("probe: " + (ok ? "PASS" : "FAIL"));
            System.exit(ok ? 0 : 1);
        }
    }
}
