package org.rpcrdma.transport.wire;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** RFC 8797 private data. */
class ConnectPrivateTest {

    @Test
    void goldenEncoding() {
        // Linux's default: 4 KiB each way, remote invalidation OK.
        byte[] b = new ConnectPrivate(true, 4096, 4096).toBytes();
        assertEquals("f6ab0e1801010303", Wire.hex(b));
        assertEquals("f6ab0e180100ff00", Wire.hex(new ConnectPrivate(false, 262144, 1024).toBytes()));
    }

    @Test
    void sizeCodec() {
        assertEquals(0, ConnectPrivate.encodeBufferSize(1024));
        assertEquals(3, ConnectPrivate.encodeBufferSize(4096));
        assertEquals(255, ConnectPrivate.encodeBufferSize(262144));
        for (int octet = 0; octet < 256; octet++) {
            int bytes = ConnectPrivate.decodeBufferSize(octet);
            assertEquals(octet, ConnectPrivate.encodeBufferSize(bytes));
        }
        assertEquals(262144, ConnectPrivate.decodeBufferSize(-1), "octet read as signed byte");
    }

    @Test
    void encodeRejectsUnrepresentableSizes() {
        for (int bad : new int[] {0, 512, 1023, 1025, 1536, 4000, 263168, 1 << 20, -1024}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new ConnectPrivate(false, bad, 1024));
            assertTrue(e.getMessage().contains(Integer.toString(bad)), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new ConnectPrivate(false, 1024, bad));
        }
    }

    @Test
    void decodeFindsTheIdentifierAtAnyOffset() {
        byte[] pd = new ConnectPrivate(true, 8192, 65536).toBytes();
        for (int lead = 0; lead < 40; lead++) {
            for (int tail = 0; tail < 5; tail++) {
                byte[] buf = new byte[lead + pd.length + tail];
                java.util.Arrays.fill(buf, (byte) 0x5a);
                System.arraycopy(pd, 0, buf, lead, pd.length);
                assertEquals(new ConnectPrivate(true, 8192, 65536), ConnectPrivate.decode(buf), "lead " + lead);
            }
        }
    }

    @Test
    void reservedBitsAreIgnored() {
        byte[] pd = new ConnectPrivate(false, 2048, 2048).toBytes();
        pd[5] = (byte) 0xfe; // all reserved bits set, R clear
        assertEquals(new ConnectPrivate(false, 2048, 2048), ConnectPrivate.decode(pd));
        pd[5] = (byte) 0xff;
        assertTrue(ConnectPrivate.decode(pd).remoteInvalidation());
    }

    @Test
    void absentOrInvalidMeansDefaults() {
        assertEquals(ConnectPrivate.DEFAULT, ConnectPrivate.decode((byte[]) null));
        assertEquals(ConnectPrivate.DEFAULT, ConnectPrivate.decode(new byte[0]));
        assertEquals(ConnectPrivate.DEFAULT, ConnectPrivate.decode(new byte[56]));
        byte[] pd = new ConnectPrivate(true, 4096, 4096).toBytes();
        // Wrong version.
        byte[] v2 = pd.clone();
        v2[4] = 2;
        assertEquals(ConnectPrivate.DEFAULT, ConnectPrivate.decode(v2));
        // Identifier but cut short: fewer than 8 octets from it.
        assertEquals(ConnectPrivate.DEFAULT, ConnectPrivate.decode(java.util.Arrays.copyOf(pd, 7)));
        // Cut short by the given length even though the bytes exist beyond it.
        assertTrue(ConnectPrivate.find(MemorySegment.ofArray(pd), 0, 7).isEmpty());
        // A bad version first, a good message later: the good one is found.
        byte[] both = Wire.cat(v2, pd);
        assertEquals(new ConnectPrivate(true, 4096, 4096), ConnectPrivate.decode(both));
        assertEquals(1024, ConnectPrivate.DEFAULT.sendSize());
        assertFalse(ConnectPrivate.DEFAULT.remoteInvalidation());
    }

    @Test
    void negotiation() {
        ConnectPrivate client = new ConnectPrivate(true, 4096, 8192);
        ConnectPrivate server = new ConnectPrivate(true, 16384, 2048);
        ConnectSettings s = ConnectSettings.negotiate(client, server);
        assertEquals(2048, s.clientToServer(), "min(client send, server receive)");
        assertEquals(8192, s.serverToClient(), "min(server send, client receive)");
        assertTrue(s.remoteInvalidation());

        assertFalse(ConnectSettings.negotiate(client, new ConnectPrivate(false, 4096, 4096)).remoteInvalidation());
        assertFalse(ConnectSettings.negotiate(new ConnectPrivate(false, 4096, 4096), server).remoteInvalidation());

        // A server that sent nothing: defaults apply.
        ConnectSettings none = ConnectSettings.negotiate(client, ConnectPrivate.decode((byte[]) null));
        assertEquals(new ConnectSettings(1024, 1024, false), none);
    }
}
