package org.rpcrdma.oncrpc4j;

import java.io.IOException;
import org.dcache.oncrpc4j.xdr.XdrAble;
import org.dcache.oncrpc4j.xdr.XdrDecodingStream;
import org.dcache.oncrpc4j.xdr.XdrEncodingStream;

/** An XDR variable-length opaque, written as an oncrpc4j program writes its types. */
public final class Blob implements XdrAble {
    public byte[] bytes = new byte[0];

    public Blob() {
    }

    public Blob(byte[] bytes) {
        this.bytes = bytes;
    }

    @Override
    public void xdrEncode(XdrEncodingStream xdr) throws IOException {
        xdr.xdrEncodeDynamicOpaque(bytes);
    }

    @Override
    public void xdrDecode(XdrDecodingStream xdr) throws IOException {
        bytes = xdr.xdrDecodeDynamicOpaque();
    }
}
