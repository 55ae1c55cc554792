package org.rpcrdma.oncrpc;

import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * How one XDR type (RFC 4506) is written and read: the typed layer's counterpart of
 * oncrpc4j's {@code XdrAble}, but kept apart from the value, so records and JDK types need
 * no base class. {@link Codecs} has the RFC 4506 types and combinators; a struct is a
 * codec that encodes its fields in order:
 *
 * <pre>{@code
 * record Point(int x, int y) {}
 * XdrCodec<Point> POINT = XdrCodec.of(
 *         (w, p) -> w.writeInt(p.x()).writeInt(p.y()),
 *         r -> new Point(r.readInt(), r.readInt()));
 * }</pre>
 *
 * <p>Decoding reads received bytes: a codec must use the reader's bounded reads (a length
 * field checked with {@code readOpaqueLength} / {@code readArrayLength} before anything is
 * allocated) and throw {@link XdrException} for a value its type does not allow, which a
 * server answers GARBAGE_ARGS (RFC 5531 §9). Encoding never sizes the buffer itself: the
 * layer encodes again into a larger one when the writer runs out.
 *
 * @param <T> the Java type
 */
public interface XdrCodec<T> {

    /** Writes {@code value}. */
    void encode(XdrWriter w, T value);

    /** Reads a value; {@link XdrException} if the bytes are not one. */
    T decode(XdrReader r) throws XdrException;

    /**
     * Whether this item is DDP-eligible (RFC 8166 §6: its Upper-Layer Binding lets it move
     * by direct data placement, e.g. an NFS WRITE payload or READ data, RFC 8267 §3).
     * A call made with {@link OncRpcClient#callAsync(RpcProcedure, Object,
     * java.lang.foreign.MemorySegment, int)} sends such an item in a read chunk when the
     * call does not fit inline; a result decoded into a receptacle comes through the write
     * chunk. See {@link Codecs#payload(int)} and {@link Codecs#payloadInto}.
     */
    default boolean ddpEligible() {
        return false;
    }

    /**
     * The most bytes a value of this type takes in XDR, or -1 if it has no bound (the
     * default). A typed call sizes the Reply chunk it offers from its result codec's bound
     * (RFC 8166 §3.5.4): a result that always fits inline needs none, and one without a
     * bound gets the client's default ({@link OncRpcClient#withMaxReplyBytes}). The
     * codecs of {@link Codecs} know theirs; give a struct's with {@link #withMaxEncodedSize}.
     */
    default long maxEncodedSize() {
        return -1;
    }

    /** This codec with {@code max} as its {@link #maxEncodedSize()} (a value larger is the caller's bug). */
    default XdrCodec<T> withMaxEncodedSize(long max) {
        if (max < 0) {
            throw new IllegalArgumentException("negative size " + max);
        }
        XdrCodec<T> self = this;
        return new XdrCodec<>() {
            @Override
            public void encode(XdrWriter w, T value) {
                self.encode(w, value);
            }

            @Override
            public T decode(XdrReader r) throws XdrException {
                return self.decode(r);
            }

            @Override
            public boolean ddpEligible() {
                return self.ddpEligible();
            }

            @Override
            public long maxEncodedSize() {
                return max;
            }
        };
    }

    /** Decoding half of a codec (may throw {@link XdrException}). */
    @FunctionalInterface
    interface Decoder<T> {
        T decode(XdrReader r) throws XdrException;
    }

    /** Encoding half of a codec. */
    @FunctionalInterface
    interface Encoder<T> {
        void encode(XdrWriter w, T value);
    }

    /** A codec from its two halves. */
    static <T> XdrCodec<T> of(Encoder<T> encoder, Decoder<T> decoder) {
        return new XdrCodec<>() {
            @Override
            public void encode(XdrWriter w, T value) {
                encoder.encode(w, value);
            }

            @Override
            public T decode(XdrReader r) throws XdrException {
                return decoder.decode(r);
            }
        };
    }
}
