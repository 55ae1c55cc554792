package org.rpcrdma.transport.chunk;

import java.util.ArrayDeque;
import org.rpcrdma.transport.link.Link;
import org.rpcrdma.transport.rpc.StatsCounters;

/**
 * The RDMA Reads and Writes of one connection (≈ Linux {@code svc_rdma_rw.c}'s chunk
 * contexts and its {@code sc_sq_avail} accounting): jobs of one or more operations, posted
 * in order while fewer than the link's {@link Link#rdmaDepth()} are outstanding (RFC 8166
 * §3.4: the responder's RDMA Reads never exceed the initiator depth agreed at connect, and
 * the send queue keeps room for them), the rest waiting here. Every operation is signalled,
 * so each completion frees exactly its own room.
 *
 * <p>A job says what happens once all its operations are posted ({@code posted}: the Send
 * that must follow RDMA Writes on the same queue, RFC 8166 §3.5.4) and once all have
 * completed ({@code done}: a pulled call goes to its handler; written memory goes back).
 * Both run with no lock held. A lost connection drops every job: {@code done} never runs,
 * {@code abandoned} does (buffers go back).
 */
public final class RdmaQueue {
    /** One job: operations on one chunk buffer. Reused: see {@link #job}. */
    static final class Job {
        ChunkBuffer local;
        boolean write;
        private long[] localOffsets;
        private int[] lengths;
        private int[] rkeys;
        private long[] remoteOffsets;
        private int count;
        private int nextToPost;
        private int completed;
        Runnable posted;
        Runnable done;
        Runnable abandoned;
        /** {@code done} runs once both have happened: {@code posted} ran, and every operation completed. */
        private final java.util.concurrent.atomic.AtomicInteger gates = new java.util.concurrent.atomic.AtomicInteger(2);

        Job(ChunkBuffer local, boolean write, int capacity) {
            this.localOffsets = new long[capacity];
            this.lengths = new int[capacity];
            this.rkeys = new int[capacity];
            this.remoteOffsets = new long[capacity];
            reset(local, write, capacity);
        }

        private void reset(ChunkBuffer local, boolean write, int capacity) {
            if (capacity > lengths.length) {
                localOffsets = new long[capacity];
                lengths = new int[capacity];
                rkeys = new int[capacity];
                remoteOffsets = new long[capacity];
            }
            this.local = local;
            this.write = write;
            count = 0;
            nextToPost = 0;
            completed = 0;
            posted = null;
            done = null;
            abandoned = null;
            gates.set(2);
        }

        /** Adds one operation: {@code local[localOffset, +length)} to or from the peer's (rkey, remoteOffset). */
        void add(long localOffset, int length, int rkey, long remoteOffset) {
            localOffsets[count] = localOffset;
            lengths[count] = length;
            rkeys[count] = rkey;
            remoteOffsets[count] = remoteOffset;
            count++;
        }

        int size() {
            return count;
        }

        /**
         * One operation per segment of {@code segs[first, first + n)} with a non-zero
         * length, the local side laid out consecutively from {@code at}.
         */
        void addSegments(org.rpcrdma.transport.wire.SegmentList segs, int first, int n, long at) {
            for (int i = first; i < first + n; i++) {
                long len = segs.length(i);
                if (len > 0) {
                    add(at, (int) len, segs.handle(i), segs.offset(i));
                    at += len;
                }
            }
        }
    }

    private final Link link;
    private final StatsCounters stats;
    private final Job[] inFlight;
    private final int[] freeTokens;
    private int freeCount;
    private final ArrayDeque<Job> waiting = new ArrayDeque<>();
    /** Jobs whose operations are all posted, waiting for their {@code posted} callback (guarded by this). */
    private final ArrayDeque<Job> fullyPosted = new ArrayDeque<>();
    /** Finished jobs kept for reuse (guarded by itself): a chunked call allocates none on the hot path. */
    private final ArrayDeque<Job> spare = new ArrayDeque<>();
    private static final int SPARE_JOBS = 8;
    private boolean shut;
    public RdmaQueue(Link link, StatsCounters stats) {
        this.link = link;
        this.stats = stats;
        int depth = Math.max(1, link.rdmaDepth());
        this.inFlight = new Job[depth];
        this.freeTokens = new int[depth];
        for (int i = 0; i < depth; i++) {
            freeTokens[i] = depth - 1 - i;
        }
        this.freeCount = depth;
    }

    /**
     * A job for {@code capacity} operations on {@code local}: a finished one reused, or new.
     * Submit it, or drop it; it comes back here only after its {@code done} ran (a dropped
     * or abandoned job is left to the GC: someone may still hold it).
     */
    Job job(ChunkBuffer local, boolean write, int capacity) {
        Job j;
        synchronized (spare) {
            j = spare.pollFirst();
        }
        if (j == null) {
            return new Job(local, write, capacity);
        }
        j.reset(local, write, capacity);
        return j;
    }

    /** Queues {@code job} and posts what the depth allows; its callbacks may run before this returns. */
    void submit(Job job) {
        boolean noOperations = job.count == 0; // ORDER: read now; once done ran, the job may be reused
        boolean refused;
        synchronized (this) {
            refused = shut;
            if (!shut) {
                if (!waiting.isEmpty() || freeCount == 0) {
                    stats.rdmaDepthWaits.increment();
                }
                waiting.addLast(job);
                pumpLocked();
            }
        }
        if (refused) {
            run(job.abandoned);
            return;
        }
        runPosted();
        if (noOperations) {
            gate(job);
        }
    }

    /** A signalled operation completed. */
    public void completed(int token) {
        Job j;
        boolean finished;
        synchronized (this) {
            if (shut || token < 0 || token >= inFlight.length || inFlight[token] == null) {
                return; // the connection was lost meanwhile: its jobs were dropped
            }
            j = inFlight[token];
            inFlight[token] = null;
            freeTokens[freeCount++] = token;
            finished = ++j.completed == j.count;
            pumpLocked();
        }
        runPosted();
        if (finished) {
            gate(j);
        }
    }

    /** Runs the {@code posted} callbacks of jobs now fully posted (no lock held), in order. */
    private void runPosted() {
        while (true) {
            Job j;
            synchronized (this) {
                j = fullyPosted.pollFirst();
            }
            if (j == null) {
                return;
            }
            run(j.posted);
            gate(j);
        }
    }

    /** One of a job's two gates passed; the last runs {@code done}, then the job is free for reuse. */
    private void gate(Job j) {
        if (j.gates.decrementAndGet() == 0) {
            try {
                run(j.done);
            } finally {
                j.reset(null, false, 0); // nothing of the call stays reachable from the spare
                synchronized (spare) {
                    if (spare.size() < SPARE_JOBS) {
                        spare.addFirst(j);
                    }
                }
            }
        }
    }

    /**
     * Posts waiting operations in order while there is room. Jobs now fully posted go to
     * {@code fullyPosted}: their {@code posted} callbacks run once the lock is released.
     */
    private void pumpLocked() {
        while (!waiting.isEmpty() && (freeCount > 0 || waiting.peekFirst().nextToPost == waiting.peekFirst().count)) {
            Job j = waiting.peekFirst();
            if (j.nextToPost == j.count) {
                waiting.pollFirst();
                fullyPosted.addLast(j);
                continue;
            }
            int token = freeTokens[--freeCount];
            inFlight[token] = j;
            int i = j.nextToPost++;
            if (j.write) {
                link.postWrite(token, j.local, j.localOffsets[i], j.lengths[i], j.rkeys[i], j.remoteOffsets[i]);
                stats.rdmaWrites.increment();
                stats.rdmaBytesWritten.add(j.lengths[i]);
            } else {
                link.postRead(token, j.local, j.localOffsets[i], j.lengths[i], j.rkeys[i], j.remoteOffsets[i]);
                stats.rdmaReads.increment();
                stats.rdmaBytesRead.add(j.lengths[i]);
            }
        }
    }

    private static void run(Runnable r) {
        if (r != null) {
            r.run();
        }
    }

    /** The connection is gone: drops every job (their {@code abandoned} runs), refuses new ones. */
    public void shutdown() {
        java.util.ArrayList<Job> dropped = new java.util.ArrayList<>();
        synchronized (this) {
            if (shut) {
                return;
            }
            shut = true;
            for (int i = 0; i < inFlight.length; i++) {
                Job j = inFlight[i];
                if (j != null && !dropped.contains(j)) {
                    dropped.add(j);
                }
                inFlight[i] = null;
            }
            for (Job j : waiting) {
                if (!dropped.contains(j)) {
                    dropped.add(j);
                }
            }
            waiting.clear();
        }
        for (Job j : dropped) {
            run(j.abandoned);
        }
    }
}
