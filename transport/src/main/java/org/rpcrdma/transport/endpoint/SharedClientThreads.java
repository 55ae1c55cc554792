package org.rpcrdma.transport.endpoint;

import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rpcrdma.transport.RpcRdmaOptions;
import org.rpcrdma.transport.link.CompletionGroup;
import org.rpcrdma.transport.rpc.StatsCounters;
import org.rpcrdma.transport.verbs.CmEvent;
import org.rpcrdma.transport.verbs.CmId;
import org.rpcrdma.transport.verbs.Device;
import org.rpcrdma.transport.verbs.EventChannel;

/**
 * The threads that clients of one JVM share when they set
 * {@link RpcRdmaOptions.Builder#shareClientThreads}: per device (and group size and
 * completion mode), one {@link CompletionGroup} their QPs complete on, and one rdma_cm
 * event channel their ids are migrated to once connected, read by one thread that hands
 * each id's DISCONNECTED or DEVICE_REMOVAL to its client. So a JVM's threads do not grow
 * with its clients. Counted: made by the first client that needs it, closed when the last
 * one {@link Lease#release releases} it (after its QP and id are destroyed).
 */
final class SharedClientThreads {
    private static final System.Logger LOG = System.getLogger(SharedClientThreads.class.getName());
    /** The event thread's wait: a backstop only, the last release wakes it. */
    private static final long EVENT_WAIT_MILLIS = 60_000;
    /** At most this many entries in each CQ of a group (the group's own cap applies too). */
    private static final int CQ_ENTRIES = 1 << 16;
    /** Guarded by the class. */
    private static final Map<String, SharedClientThreads> BY_KEY = new HashMap<>();

    private final String key;
    final CompletionGroup group;
    private final EventChannel events;
    private final Map<Long, Consumer<CmEvent>> watchers = new ConcurrentHashMap<>();
    private final Thread eventThread;
    /** Guarded by the class. */
    private int users;
    private volatile boolean stop;

    private SharedClientThreads(String key, Device dev, RpcRdmaOptions o) {
        this.key = key;
        this.group = new CompletionGroup(dev, Math.max(1, o.completionThreads()), o.busyPoll(),
                TimeUnit.MICROSECONDS.toNanos(o.pollSpinMicros()), null, 0, new StatsCounters(), "rpcrdma-client-cq",
                CQ_ENTRIES);
        EventChannel ec = null;
        try {
            ec = new EventChannel();
        } finally {
            if (ec == null) {
                group.close();
            }
        }
        this.events = ec;
        this.eventThread = Thread.ofPlatform().daemon().name("rpcrdma-client-cm-shared").start(this::watch);
    }

    /** A client's use of the shared threads on {@code dev}; release it once. */
    static Lease acquire(Device dev, RpcRdmaOptions o) {
        String key = dev.name() + "/" + Math.max(1, o.completionThreads()) + (o.busyPoll() ? "/busy" : "/events");
        synchronized (SharedClientThreads.class) {
            SharedClientThreads s = BY_KEY.computeIfAbsent(key, k -> new SharedClientThreads(k, dev, o));
            s.users++;
            return s.new Lease();
        }
    }

    /** One client's use: its connection's group, and its id's events once connected. */
    final class Lease {
        private Long watched;
        private boolean released;

        CompletionGroup group() {
            return group;
        }

        /**
         * The id's events come to {@code onEvent} on the shared thread from now on (its own
         * channel, which no thread may be waiting on, may then be closed).
         */
        void watch(CmId id, Consumer<CmEvent> onEvent) {
            long address = id.handle().address();
            watchers.put(address, onEvent);
            watched = address;
            id.migrate(events);
        }

        /** After the client's QP and id are destroyed. Idempotent. */
        void release() {
            if (watched != null) {
                watchers.remove(watched);
            }
            synchronized (SharedClientThreads.class) {
                if (released) {
                    return;
                }
                released = true;
                if (--users > 0) {
                    return;
                }
                BY_KEY.remove(key);
            }
            close();
        }
    }

    private void watch() {
        while (!stop) {
            CmEvent ev = events.poll(EVENT_WAIT_MILLIS);
            if (ev == null || ev.id() == null) {
                continue; // an id destroyed meanwhile has no owner to tell
            }
            try {
                Consumer<CmEvent> w = watchers.get(ev.id().handle().address());
                if (w != null) {
                    w.accept(ev);
                }
            } catch (RuntimeException e) { // one client's failure must not stop the others' events
                LOG.log(Level.WARNING, "rdma_cm event " + ev.type() + " of a client: " + e);
            }
        }
    }

    /** Every client is gone (their ids destroyed): the thread, the channel, then the group. */
    private void close() {
        stop = true;
        events.stopWaiting();
        if (Thread.currentThread() != eventThread) {
            try {
                eventThread.join(3000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        events.close();
        group.close();
    }
}
