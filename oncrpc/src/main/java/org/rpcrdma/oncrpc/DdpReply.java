package org.rpcrdma.oncrpc;

import java.util.List;
import org.rpcrdma.transport.IncomingCall;

/**
 * Sends an encoded reply with its DDP-eligible results where the requester asked for them.
 * A responder MUST place a DDP-eligible result in the write chunk the requester offered
 * for it (RFC 8166 §3.4.6): result k (in XDR order, {@link XdrCodec#ddpEligible()}, e.g.
 * {@link Codecs#payload}) goes into write chunk k, the first result to the first chunk
 * (implementation-experience draft §3.8). The reply is encoded reduced by the placed
 * results ({@link MessageEncoder#encodeLeavingOut} with one per chunk offered: each one's
 * length word stays, its data and pad go), and their segments go to the transport as the
 * handler gave them; results beyond the chunks offered stay inline, and a reply still too
 * large for the inline threshold goes through the call's Reply chunk as well ("too few
 * write chunks"), which the transport decides.
 */
final class DdpReply {
    private DdpReply() {}

    /** How many DDP results of a reply to {@code in} to leave out of its message: one per write chunk. */
    static int placeable(IncomingCall in) {
        return in.writeChunkCount();
    }

    /** Answers {@code in} with {@code reply}, encoded leaving out {@link #placeable} results. */
    static void send(IncomingCall in, MessageEncoder.Encoded reply) {
        if (reply.leftOut().length == 0) {
            in.reply(reply.message());
            return;
        }
        in.replyDdp(reply.message(), List.of(reply.leftOut()));
    }
}
