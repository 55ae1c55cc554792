package org.rpcrdma.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class DeviceTest extends VerbsTestBase {

    @Test
    void listsAndOpensTheDevice() {
        assertTrue(Device.list().contains(deviceName()), () -> "devices: " + Device.list());
        try (Device dev = Device.open(deviceName())) {
            assertEquals(deviceName(), dev.name());
            assertNotEquals(MemorySegment.NULL, dev.handle());
        }
        assertThrows(IllegalArgumentException.class, () -> Device.open("no-such-device"));
    }

    @Test
    void queriesPortAndGid() {
        try (Device dev = Device.open(deviceName())) {
            Device.PortAttributes port = dev.queryPort(1);
            assertTrue(port.active(), () -> "port state " + port.state());
            assertTrue(port.activeMtuBytes() >= 256 && port.activeMtuBytes() <= 4096, port::toString);
            assertTrue(port.gidTableLength() > 0);
            byte[] gid = dev.queryGid(1, 0);
            assertEquals(16, gid.length);
            // RoCE GID 0 is the link-local IPv6 address fe80::/64 of the netdev
            assertEquals((byte) 0xfe, gid[0]);
            assertEquals((byte) 0x80, gid[1]);
        }
    }

    @Test
    void registersMemoryWithEachAccessFlag() {
        int[] flags = {0, Access.LOCAL_WRITE, Access.LOCAL_WRITE | Access.REMOTE_WRITE, Access.REMOTE_READ,
                Access.LOCAL_WRITE | Access.REMOTE_ATOMIC, Access.MW_BIND,
                Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ | Access.MW_BIND};
        try (Device dev = Device.open(deviceName());
             ProtectionDomain pd = dev.allocateProtectionDomain();
             Arena arena = Arena.ofConfined()) {
            MemorySegment mem = arena.allocate(8192, 4096);
            for (int access : flags) {
                try (MemoryRegion mr = pd.register(mem, access)) {
                    assertEquals(mem.address(), mr.address());
                    assertEquals(8192, mr.length());
                    assertEquals(access, mr.access());
                    assertNotEquals(0, mr.lkey());
                }
            }
        }
    }

    @Test
    void allocatesWindowsAndRotatesRkeys() {
        try (Device dev = Device.open(deviceName());
             ProtectionDomain pd = dev.allocateProtectionDomain();
             MemoryWindow mw = pd.allocateWindow()) {
            int rkey = mw.rkey();
            int next = mw.nextRkey();
            assertEquals(rkey & ~0xff, next & ~0xff, "ibv_inc_rkey keeps the index");
            assertEquals((rkey + 1) & 0xff, next & 0xff, "and increments the tag");
        }
    }

    @Test
    void createsCompletionQueueWithChannelAndSrq() {
        try (Device dev = Device.open(deviceName());
             CompletionChannel ch = dev.createCompletionChannel();
             CompletionQueue cq = dev.createCompletionQueue(32, ch);
             ProtectionDomain pd = dev.allocateProtectionDomain();
             SharedReceiveQueue srq = pd.createSharedReceiveQueue(16, 1);
             WorkCompletions wc = new WorkCompletions(4)) {
            assertTrue(cq.capacity() >= 32);
            assertTrue(ch.fd() >= 0);
            assertEquals(0, cq.poll(wc));
            cq.requestNotify(false);
            assertNull(ch.await(20), "no event without a completion");
            assertNotEquals(MemorySegment.NULL, srq.handle());
        }
    }

    @Test
    void useAfterClose() {
        Device dev = Device.open(deviceName());
        ProtectionDomain pd = dev.allocateProtectionDomain();
        CompletionChannel ch = dev.createCompletionChannel();
        CompletionQueue cq = dev.createCompletionQueue(8, ch);
        WorkCompletions wc = new WorkCompletions(2);
        MemoryWindow mw = pd.allocateWindow();
        try (Arena arena = Arena.ofConfined()) {
            MemoryRegion mr = pd.register(arena.allocate(4096), Access.LOCAL_WRITE);
            mr.close();
            mr.close();
            assertTrue(mr.isClosed());
            assertThrows(IllegalStateException.class, mr::lkey);
            assertThrows(IllegalStateException.class, mr::handle);
        }
        mw.close();
        assertThrows(IllegalStateException.class, mw::rkey);
        cq.close();
        assertThrows(IllegalStateException.class, () -> cq.poll(wc));
        assertThrows(IllegalStateException.class, () -> cq.requestNotify(false));
        ch.close();
        assertNull(ch.await(10), "a closed channel has no events");
        assertThrows(IllegalStateException.class, ch::fd);
        wc.close();
        pd.close();
        assertThrows(IllegalStateException.class, () -> pd.register(MemorySegment.NULL, 0));
        assertThrows(IllegalStateException.class, pd::allocateWindow);
        dev.close();
        dev.close();
        assertThrows(IllegalStateException.class, () -> dev.queryPort(1));
        assertThrows(IllegalStateException.class, dev::allocateProtectionDomain);
        EventChannel ec = new EventChannel();
        CmId id = ec.createId();
        id.close();
        assertThrows(IllegalStateException.class, () -> id.listen(1));
        ec.close();
        assertThrows(IllegalStateException.class, ec::createId);
        assertFalse(LiveResources.total() != 0, () -> "left open: " + LiveResources.snapshot());
    }

    @Test
    void closeWakesAWaiterPromptly() throws Exception {
        Device dev = Device.open(deviceName());
        CompletionChannel ch = dev.createCompletionChannel();
        EventChannel ec = new EventChannel();
        Object[] results = new Object[2];
        Thread t1 = Thread.ofPlatform().start(() -> results[0] = ch.await(60_000));
        Thread t2 = Thread.ofPlatform().start(() -> results[1] = ec.poll(60_000));
        // close while both are waiting (a close before they wait is the easier case)
        assertTrue(waitingIn(t1, CompletionChannel.class, "await") && waitingIn(t2, EventChannel.class, "poll"),
                "the waiters never started waiting");
        long start = System.nanoTime();
        ch.close();
        ec.close();
        t1.join(5_000);
        t2.join(5_000);
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertFalse(t1.isAlive() || t2.isAlive(), "waiters still blocked after close");
        assertTrue(ms < 5_000, "close took " + ms + " ms");
        assertNull(results[0]);
        assertNull(results[1]);
        dev.close();
    }

    /** Waits up to 10 s until {@code t} is inside {@code type.method} (there it polls in slices). */
    private static boolean waitingIn(Thread t, Class<?> type, String method) throws InterruptedException {
        for (long deadline = System.nanoTime() + 10_000_000_000L; System.nanoTime() - deadline < 0; Thread.sleep(5)) {
            for (StackTraceElement e : t.getStackTrace()) {
                if (e.getClassName().equals(type.getName()) && e.getMethodName().equals(method)) {
                    return true;
                }
            }
        }
        return false;
    }
}
