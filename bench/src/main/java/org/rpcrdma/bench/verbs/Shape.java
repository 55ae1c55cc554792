package org.rpcrdma.bench.verbs;

/**
 * The call shapes a user can write ({@link org.rpcrdma.transport.RpcCaller}), as the goal
 * rounds measure them ({@link RpcPoints#measure(RpcPoints.Endpoints, java.lang.foreign.MemorySegment, int, long, long, Shape)}):
 * each one call at a time, the next issued once the reply was read.
 */
enum Shape {
    /** {@code callAndWait}: the blocking call a user writes first; the reply released after its size is read. */
    WAIT("wait"),
    /** {@code call(...).get()}: the future, waited for by the caller; the reply released. */
    FUTURE("future"),
    /** {@code callAndRead}: the reply read in place (the zero-allocation shape the curve uses). */
    READ("read"),
    /**
     * {@code call(..., callback)}: the next call is issued from the callback, on the thread
     * that took the completion (an asynchronous caller's loop: nobody waits).
     */
    CALLBACK("callback");

    final String label;

    Shape(String label) {
        this.label = label;
    }

    /**
     * The series of this shape in {@code mode}: {@code mode-<mode>} for {@link #READ} (the
     * series the goals have always read), {@code mode-<mode>-<shape>} for the others.
     */
    String series(Mode mode) {
        return this == READ ? mode.series() : mode.series() + "-" + label;
    }

    /** The shapes in the order round {@code round} measures them: rotated by one each round, so none is always first. */
    static Shape[] order(int round) {
        Shape[] all = values();
        Shape[] o = new Shape[all.length];
        for (int i = 0; i < all.length; i++) {
            o[i] = all[(i + round - 1) % all.length];
        }
        return o;
    }
}
