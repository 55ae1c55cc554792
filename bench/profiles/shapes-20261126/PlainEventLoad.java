import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The control of the guest's C2 crash study: an event-mode server's shape of work with no
 * RDMA and none of our code. A "poller" thread waits in poll(2) through an FFM downcall
 * (as a completion-channel wait does, 1 ms slices) and wakes a "caller" thread by unpark for
 * every message; the caller answers by unpark; both allocate a little per message (a reply
 * object each) and a third thread churns the heap, so G1 scans the roots of threads parked
 * and in native code often. Runs for the seconds given (default 60); prints messages and GCs.
 */
public final class PlainEventLoad {
    static volatile long served;

    public static void main(String[] args) throws Throwable {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 60;
        Linker linker = Linker.nativeLinker();
        MethodHandle poll = linker.downcallHandle(linker.defaultLookup().find("poll").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_INT));
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        Thread[] caller = new Thread[1];
        Thread poller = Thread.ofPlatform().name("poller").start(() -> {
            try (Arena a = Arena.ofShared()) {
                MemorySegment none = a.allocate(8, 4);
                List<byte[]> replies = new ArrayList<>();
                while (System.nanoTime() < end) {
                    int unused = (int) poll.invokeExact(none, 0L, 1); // a 1 ms wait in native code
                    replies.add(new byte[64]);
                    if (replies.size() > 1000) {
                        replies.clear();
                    }
                    served++;
                    LockSupport.unpark(caller[0]);
                    LockSupport.parkNanos(2_000_000L);
                }
            } catch (Throwable t) {
                throw new RuntimeException(t);
            }
        });
        caller[0] = Thread.ofPlatform().name("caller").start(() -> {
            long seen = 0;
            while (System.nanoTime() < end) {
                LockSupport.parkNanos(5_000_000L);
                if (served != seen) {
                    seen = served;
                    LockSupport.unpark(poller);
                }
            }
        });
        Thread churn = Thread.ofPlatform().name("churn").start(() -> {
            List<Object> keep = new ArrayList<>();
            while (System.nanoTime() < end) {
                keep.add(new long[256]);
                if (keep.size() > 2000) {
                    keep.subList(0, 1000).clear();
                }
            }
        });
        poller.join();
        caller[0].join();
        churn.join();
        long gcs = 0;
        for (var g : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            gcs += g.getCollectionCount();
        }
        System.out.println("plain: " + served + " messages, " + gcs + " GCs in " + seconds + " s");
    }
}
