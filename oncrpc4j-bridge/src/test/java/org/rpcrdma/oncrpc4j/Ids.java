package org.rpcrdma.oncrpc4j;

import java.io.IOException;
import org.dcache.oncrpc4j.xdr.XdrAble;
import org.dcache.oncrpc4j.xdr.XdrDecodingStream;
import org.dcache.oncrpc4j.xdr.XdrEncodingStream;

/** uid, gid and machine name as the server saw them in the caller's AUTH_SYS credential. */
public final class Ids implements XdrAble {
    public int uid;
    public int gid;
    public int[] gids = new int[0];

    @Override
    public void xdrEncode(XdrEncodingStream xdr) throws IOException {
        xdr.xdrEncodeInt(uid);
        xdr.xdrEncodeInt(gid);
        xdr.xdrEncodeIntVector(gids);
    }

    @Override
    public void xdrDecode(XdrDecodingStream xdr) throws IOException {
        uid = xdr.xdrDecodeInt();
        gid = xdr.xdrDecodeInt();
        gids = xdr.xdrDecodeIntVector();
    }

    @Override
    public String toString() {
        return uid + "/" + gid + "/" + java.util.Arrays.toString(gids);
    }
}
