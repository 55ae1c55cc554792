package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.rpcrdma.xdr.XdrException;
import org.rpcrdma.xdr.XdrReader;
import org.rpcrdma.xdr.XdrWriter;

/**
 * Codecs for the XDR types of RFC 4506 and the combinators that build a program's types
 * from them. Every length a decoder reads from the wire is checked against the type's
 * declared maximum and against the bytes left before anything is allocated, in
 * {@code long} arithmetic (a length near 2^32 can't wrap into a small one), so a peer's
 * claim can neither make us read past its message nor allocate what it claimed.
 */
public final class Codecs {
    private Codecs() {}

    /** XDR void (§4.16): nothing on the wire; encodes and decodes {@code null}. */
    public static final XdrCodec<Void> VOID = XdrCodec.<Void>of((w, v) -> { }, r -> null).withMaxEncodedSize(0);
    /** int (§4.1). */
    public static final XdrCodec<Integer> INT = XdrCodec.of(XdrWriter::writeInt, XdrReader::readInt).withMaxEncodedSize(4);
    /** unsigned int (§4.2) as a long in [0, 2^32); encoding anything else is a caller bug. */
    public static final XdrCodec<Long> UNSIGNED_INT = XdrCodec.of((w, v) -> {
        if (v < 0 || v > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("unsigned int out of range: " + v);
        }
        w.writeInt((int) (long) v);
    }, XdrReader::readUnsignedInt).withMaxEncodedSize(4);
    /** hyper (§4.5). */
    public static final XdrCodec<Long> HYPER = XdrCodec.of(XdrWriter::writeLong, XdrReader::readLong).withMaxEncodedSize(8);
    /** unsigned hyper (§4.5): the 64 bits in a long (use {@link Long#toUnsignedString}). */
    public static final XdrCodec<Long> UNSIGNED_HYPER = XdrCodec.of(XdrWriter::writeLong, XdrReader::readUnsignedLong).withMaxEncodedSize(8);
    /** float (§4.6), bit for bit (NaN payloads and -0.0 survive). */
    public static final XdrCodec<Float> FLOAT = XdrCodec.of(XdrWriter::writeFloat, XdrReader::readFloat).withMaxEncodedSize(4);
    /** double (§4.7), bit for bit. */
    public static final XdrCodec<Double> DOUBLE = XdrCodec.of(XdrWriter::writeDouble, XdrReader::readDouble).withMaxEncodedSize(8);
    /** bool (§4.4): only 0 and 1 decode. */
    public static final XdrCodec<Boolean> BOOL = XdrCodec.of(XdrWriter::writeBoolean, XdrReader::readBoolean).withMaxEncodedSize(4);
    /** string&lt;&gt; (§4.11) with no declared maximum (still bounded by the message). */
    public static final XdrCodec<String> STRING = string(Integer.MAX_VALUE);
    /** opaque&lt;&gt; (§4.10) with no declared maximum (still bounded by the message). */
    public static final XdrCodec<byte[]> OPAQUE = opaque(Integer.MAX_VALUE);

    /** string&lt;max&gt; (§4.11), UTF-8; longer on the wire is a decode error, longer to send a caller bug. */
    public static XdrCodec<String> string(int max) {
        checkMax(max);
        return XdrCodec.of((w, s) -> {
            byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            checkLength(b.length, max, "string");
            w.writeOpaque(b);
        }, r -> r.readString(max)).withMaxEncodedSize(4 + roundUp(max));
    }

    /** opaque&lt;max&gt; (§4.10). */
    public static XdrCodec<byte[]> opaque(int max) {
        checkMax(max);
        return XdrCodec.of((w, b) -> {
            checkLength(b.length, max, "opaque");
            w.writeOpaque(b);
        }, r -> r.readOpaque(max)).withMaxEncodedSize(4 + roundUp(max));
    }

    /** opaque[n] (§4.9): exactly {@code n} bytes and their pad. */
    public static XdrCodec<byte[]> fixedOpaque(int n) {
        checkMax(n);
        return XdrCodec.of((w, b) -> {
            if (b.length != n) {
                throw new IllegalArgumentException("fixed opaque of " + n + " bytes given " + b.length);
            }
            w.writeFixedOpaque(b);
        }, r -> r.readFixedOpaque(n)).withMaxEncodedSize(roundUp(n));
    }

    /**
     * T&lt;max&gt; (§4.13) as a list. The count is checked against {@code max} and against
     * the bytes left (every element of a non-void XDR type takes at least 4 bytes) before
     * the list is made, so arrays of void are not supported.
     */
    public static <T> XdrCodec<List<T>> array(XdrCodec<T> element, int max) {
        checkMax(max);
        XdrCodec<List<T>> c = XdrCodec.of((w, list) -> {
            checkLength(list.size(), max, "array");
            w.writeInt(list.size());
            for (T t : list) {
                element.encode(w, t);
            }
        }, r -> {
            int n = r.readArrayLength(max, 4);
            List<T> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(element.decode(r));
            }
            return Collections.unmodifiableList(out);
        });
        long e = element.maxEncodedSize();
        return e < 0 ? c : c.withMaxEncodedSize(e == 0 || max <= (Long.MAX_VALUE - 4) / e ? 4 + max * e : Long.MAX_VALUE);
    }

    /** int&lt;max&gt; (§4.13) as an int[] (no boxing). */
    public static XdrCodec<int[]> intArray(int max) {
        checkMax(max);
        return XdrCodec.of((w, a) -> {
            checkLength(a.length, max, "array");
            w.writeInt(a.length);
            for (int v : a) {
                w.writeInt(v);
            }
        }, r -> {
            int[] a = new int[r.readArrayLength(max, 4)];
            for (int i = 0; i < a.length; i++) {
                a[i] = r.readInt();
            }
            return a;
        }).withMaxEncodedSize(4 + 4L * max);
    }

    /** *T, optional-data (§4.19): a bool, then the value when it is 1. */
    public static <T> XdrCodec<Optional<T>> optional(XdrCodec<T> element) {
        XdrCodec<Optional<T>> c = XdrCodec.of((w, o) -> {
            w.writeBoolean(o.isPresent());
            o.ifPresent(v -> element.encode(w, v));
        }, r -> r.readBoolean() ? Optional.of(element.decode(r)) : Optional.empty());
        return element.maxEncodedSize() < 0 ? c : c.withMaxEncodedSize(4 + element.maxEncodedSize());
    }

    /** enum (§4.3) as a Java enum: only its constants' values decode. */
    public static <E extends Enum<E> & XdrEnum> XdrCodec<E> enumeration(Class<E> type) {
        Map<Integer, E> byValue = new HashMap<>();
        for (E e : type.getEnumConstants()) {
            if (byValue.put(e.value(), e) != null) {
                throw new IllegalArgumentException(type.getName() + ": value " + e.value() + " used twice");
            }
        }
        return XdrCodec.of((w, e) -> w.writeInt(e.value()), r -> {
            int v = r.readInt();
            E e = byValue.get(v);
            if (e == null) {
                throw new XdrException(type.getSimpleName() + " has no value " + v);
            }
            return e;
        }).withMaxEncodedSize(4);
    }

    /**
     * opaque&lt;max&gt; as a DDP-eligible payload (an NFS WRITE's data; RFC 8166 §6). The
     * item a read chunk carries when the call does not fit inline ({@link XdrCodec#ddpEligible()}).
     * The sender gives a {@link MemorySegment}: in a typed call's arguments it is not encoded
     * into the message but handed to the transport as it is, exposed in place as the read
     * chunk when it lies in registered memory (zero copy), else copied once, into chunk
     * memory or, when the call fits inline, into the Send; it must stay unchanged until the
     * call completes. A server handler ({@link RpcDispatcher}) gets, for data that came by
     * RDMA Read, a read-only view of the memory it was read into, valid until the call is
     * answered (copy what must outlive the answer); data that came inline it gets as a heap
     * segment of its own (so that the receive buffer goes back at once). As a result of a call made with a receptacle
     * ({@link OncRpcClient#callAsync(RpcProcedure, Object, MemorySegment)}) it decodes into
     * that receptacle, placed there through the write chunk or copied from inline: the
     * result is the slice filled, and more data than the receptacle holds is a decode error.
     */
    public static XdrCodec<MemorySegment> payload(int max) {
        checkMax(max);
        return new Payload(max, null);
    }

    /**
     * opaque&lt;max&gt; decoded into the caller's {@code receptacle} (an NFS READ's buffer):
     * the result is the slice of it that was filled. More data than the receptacle holds is
     * a decode error. Called with {@link OncRpcClient#callAsync(RpcProcedure, Object,
     * MemorySegment, int)} the receptacle is offered as a write chunk: data the responder
     * placed there is not in the reply (only its length word is) and is not copied again.
     */
    public static XdrCodec<MemorySegment> payloadInto(MemorySegment receptacle) {
        return new Payload((int) Math.min(Integer.MAX_VALUE, receptacle.byteSize()), receptacle);
    }

    /** A DDP-eligible opaque (see {@link #payload}). */
    private record Payload(int max, MemorySegment receptacle) implements XdrCodec<MemorySegment> {
        @Override
        public void encode(XdrWriter w, MemorySegment data) {
            checkLength(data.byteSize(), max, "payload");
            // the data follows the length word; its position is what a Read chunk will carry
            if (MessageEncoder.leaveOut(w.written() + 4, data)) {
                w.writeInt((int) data.byteSize()); // the data (and pad) go to the transport apart
            } else {
                w.writeOpaque(data, 0, (int) data.byteSize());
            }
        }

        @Override
        public MemorySegment decode(XdrReader r) throws XdrException {
            // the receptacle is this codec's own, else the one its call offered
            MemorySegment receptacle = Placement.take(this.receptacle);
            long placed = receptacle == null ? -1 : Placement.placedIn(receptacle);
            if (placed > 0) {
                // RFC 8166 §3.4.6: the data went to the write chunk; only its length word
                // is inline, and it must say what the write chunk carried
                long n = r.readUnsignedInt();
                if (n != placed) {
                    throw new XdrException("DDP result of " + n + " bytes, but " + placed
                            + " were placed in the write chunk");
                }
                return receptacle.asSlice(0, n);
            }
            int n = r.readOpaqueLength(receptacle == null ? max : (int) Math.min(max, receptacle.byteSize()));
            if (receptacle == null && ArgumentViews.give()) { // pulled call arguments: held until answered
                MemorySegment view = r.segment().asSlice(r.position(), n).asReadOnly();
                r.skip(org.rpcrdma.xdr.Xdr.roundUp((long) n));
                return view;
            }
            MemorySegment into = receptacle != null ? receptacle.asSlice(0, n) : MemorySegment.ofArray(new byte[n]);
            MemorySegment.copy(r.segment(), r.position(), into, 0, n);
            r.skip(org.rpcrdma.xdr.Xdr.roundUp((long) n));
            return into;
        }

        @Override
        public boolean ddpEligible() {
            return true;
        }

        @Override
        public long maxEncodedSize() {
            return 4 + roundUp(max);
        }
    }

    private static long roundUp(int n) {
        return (n + 3L) & ~3L;
    }

    private static void checkMax(int max) {
        if (max < 0) {
            throw new IllegalArgumentException("negative maximum " + max);
        }
    }

    private static void checkLength(long n, int max, String what) {
        if (n > max) {
            throw new IllegalArgumentException(what + " of " + n + " exceeds its maximum " + max);
        }
    }
}
