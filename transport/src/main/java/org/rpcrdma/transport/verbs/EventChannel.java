package org.rpcrdma.transport.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.rpcrdma.bindings.NativeErrors;
import org.rpcrdma.bindings.RdmaCmCalls;
import org.rpcrdma.bindings.ffi.rdmacm.RdmaCm;
import org.rpcrdma.bindings.ffi.rdmacm.rdma_cm_event;
import org.rpcrdma.bindings.ffi.rdmacm.rdma_conn_param;
import org.rpcrdma.bindings.ffi.rdmacm.rdma_event_channel;

/**
 * An {@code rdma_event_channel}. Its fd is non-blocking and {@link #poll} sleeps in one
 * poll(2) on it and an eventfd ({@link WakeableWait}) for the whole timeout, never inside
 * rdma_get_cm_event; {@link #stopWaiting} and {@link #close()} write the eventfd, so a
 * waiter returns at once. Events are copied and acknowledged at once. One thread polls at
 * a time. Close it after every {@link CmId} created on it.
 */
public final class EventChannel extends Resource {
    private static final long CONN = rdma_cm_event.param$offset() + rdma_cm_event.param.conn$offset();

    private final MemorySegment channel;
    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final WakeableWait wait;
    private final MemorySegment eventOut;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<Long, CmId> ids = new ConcurrentHashMap<>();

    /** Creates a channel. */
    public EventChannel() {
        try {
            this.eventOut = arena.allocate(ValueLayout.ADDRESS);
            this.channel = NativeChecks.pointer("rdma_create_event_channel", RdmaCmCalls.rdmaCreateEventChannel(),
                    rdma_event_channel.layout().byteSize());
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.fd = rdma_event_channel.fd(channel);
        try {
            NativeChecks.setNonBlocking("rdma_event_channel", fd);
            this.wait = new WakeableWait(fd, arena); // ORDER: closed before the arena (release)
        } catch (RuntimeException e) {
            RdmaCm.rdma_destroy_event_channel(channel);
            arena.close();
            throw e;
        }
        opened();
    }

    /** The {@code struct rdma_event_channel *}. */
    public MemorySegment handle() {
        checkOpen();
        return channel;
    }

    /** The channel's (non-blocking) fd, for callers with their own poll loop. */
    public int fd() {
        checkOpen();
        return fd;
    }

    /** Creates an RC (RDMA_PS_TCP) id on this channel. */
    public CmId createId() {
        checkOpen();
        return new CmId(this);
    }

    void register(CmId id) {
        ids.put(id.rawHandle().address(), id);
    }

    void unregister(long address) {
        ids.remove(address);
    }

    /**
     * Waits up to {@code timeoutMillis} (0: just check) for the next event; null on timeout,
     * after {@link #stopWaiting}, or after close. Call from one thread at a time.
     */
    public CmEvent poll(long timeoutMillis) {
        long deadline = WakeableWait.deadline(timeoutMillis);
        lock.lock();
        try {
            while (!isClosed() && wait.await(deadline)) {
                int errno = NativeErrors.statusErrno(RdmaCmCalls.rdmaGetCmEvent(channel, eventOut));
                if (errno == 0) {
                    return copyAndAck(eventOut.get(ValueLayout.ADDRESS, 0).reinterpret(rdma_cm_event.layout().byteSize()));
                } else if (errno != NativeChecks.EAGAIN) {
                    throw NativeChecks.failure("rdma_get_cm_event", errno);
                }
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends the wait in progress and every later one at once (null), the channel staying
     * open: for an owner whose event thread is to stop. Idempotent; any thread.
     */
    public void stopWaiting() {
        wait.wake();
    }

    private CmEvent copyAndAck(MemorySegment ev) {
        try {
            CmEvent.Type type = CmEvent.Type.of(rdma_cm_event.event(ev));
            int status = rdma_cm_event.status(ev);
            MemorySegment idPtr = rdma_cm_event.id(ev);
            MemorySegment listenPtr = rdma_cm_event.listen_id(ev);
            MemorySegment conn = ev.asSlice(CONN, rdma_conn_param.layout().byteSize());
            int len = Byte.toUnsignedInt(rdma_conn_param.private_data_len(conn));
            MemorySegment pd = rdma_conn_param.private_data(conn);
            byte[] data = len == 0 || pd.equals(MemorySegment.NULL)
                    ? new byte[0] : pd.reinterpret(len).toArray(ValueLayout.JAVA_BYTE);
            int rr = Byte.toUnsignedInt(rdma_conn_param.responder_resources(conn));
            int id = Byte.toUnsignedInt(rdma_conn_param.initiator_depth(conn));
            CmId listen = listenPtr.equals(MemorySegment.NULL) ? null : ids.get(listenPtr.address());
            CmId target;
            if (type == CmEvent.Type.CONNECT_REQUEST) {
                target = new CmId(this, idPtr);
            } else {
                target = ids.get(idPtr.address());
            }
            return new CmEvent(type, status, target, listen, data, rr, id);
        } finally {
            NativeChecks.status("rdma_ack_cm_event", RdmaCmCalls.rdmaAckCmEvent(ev));
        }
    }

    @Override
    void release() {
        wait.wake(); // a waiter returns at once and lets go of the lock
        lock.lock();
        try {
            RdmaCm.rdma_destroy_event_channel(channel);
        } finally {
            lock.unlock();
            wait.close();
            arena.close();
        }
    }
}
