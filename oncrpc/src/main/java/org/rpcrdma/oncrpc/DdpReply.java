package org.rpcrdma.oncrpc;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rpcrdma.transport.IncomingCall;
import org.rpcrdma.transport.wire.StreamReduction;

/**
 * Sends an encoded reply with its DDP-eligible results where the requester asked for them.
 * A responder MUST place a DDP-eligible result in the write chunk the requester offered
 * for it (RFC 8166 §3.4.6): result k (in XDR order, {@link XdrCodec#ddpEligible()}, e.g.
 * {@link Codecs#payload}) goes into write chunk k, the first result to the first chunk
 * (implementation-experience draft §3.8). The reply is reduced by the placed results (each
 * one's length word stays, its data and pad go); results beyond the chunks offered stay
 * inline, and a reply still too large for the inline threshold goes through the call's
 * Reply chunk as well ("too few write chunks"), which the transport decides.
 */
final class DdpReply {
    private DdpReply() {}

    /** Answers {@code in} with {@code reply}, its first DDP results placed in the call's write chunks. */
    static void send(IncomingCall in, MessageEncoder.Encoded reply) {
        int placed = Math.min(in.writeChunkCount(), reply.ddpOffsets().length);
        if (placed == 0) {
            in.reply(reply.message());
            return;
        }
        MemorySegment m = reply.message();
        StreamReduction.Reduced r = StreamReduction.reduce(m.byteSize(), Arrays.copyOf(reply.ddpOffsets(), placed),
                Arrays.copyOf(reply.ddpLengths(), placed));
        MemorySegment reduced = MemorySegment.ofArray(new byte[Math.toIntExact(r.inlineLength())]);
        long at = 0;
        for (StreamReduction.Range i : r.inline()) {
            MemorySegment.copy(m, i.offset(), reduced, at, i.length());
            at += i.length();
        }
        List<MemorySegment> payloads = new ArrayList<>(placed);
        for (StreamReduction.Range c : r.chunks()) {
            payloads.add(m.asSlice(c.offset(), c.length()));
        }
        in.replyDdp(reduced, payloads);
    }
}
