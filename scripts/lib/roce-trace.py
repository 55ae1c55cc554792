#!/usr/bin/python3
"""roce-trace.py - one line per RoCEv2 frame crossing a netdev (no tcpdump needed).

usage (root, in the guest): roce-trace.py IFACE OUT.txt   (stops on SIGTERM/SIGINT)

An AF_PACKET socket on IFACE sees both directions after the egress qdisc, so on one end of
the lossy link it shows exactly what crossed it (netem's drops never appear). Each line:
  seconds dir src>dst opcode-name dqpn psn [A] [aeth=syndrome/msn | xid=XID cr=credits proc=N] len
dir is '>' for frames IFACE sent, '<' for frames it received.
"""
import signal
import socket
import struct
import sys
import time

OPS = {0: "SEND_FIRST", 1: "SEND_MIDDLE", 2: "SEND_LAST", 3: "SEND_LAST_IMM", 4: "SEND_ONLY",
       5: "SEND_ONLY_IMM", 6: "WRITE_FIRST", 7: "WRITE_MIDDLE", 8: "WRITE_LAST", 9: "WRITE_LAST_IMM",
       10: "WRITE_ONLY", 11: "WRITE_ONLY_IMM", 12: "READ_REQ", 13: "READ_RESP_FIRST",
       14: "READ_RESP_MIDDLE", 15: "READ_RESP_LAST", 16: "READ_RESP_ONLY", 17: "ACK",
       18: "ATOMIC_ACK", 22: "SEND_LAST_INV", 23: "SEND_ONLY_INV"}


def main():
    iface, out = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(3))
    s.bind((iface, 0))
    s.settimeout(0.5)
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    t0 = time.monotonic()
    with open(out, "w", buffering=1) as f:
        while not stop:
            try:
                data, addr = s.recvfrom(65535)
            except (socket.timeout, InterruptedError):
                continue
            except OSError as e:   # e.g. the device reconfigured under us: note it, keep tracing
                f.write("%.4f ! %s\n" % (time.monotonic() - t0, e))
                continue
            try:
                line = decode(data, addr)
            except (IndexError, struct.error):
                line = "? short or odd frame of %d bytes" % len(data)
            if line:
                f.write("%.4f %s\n" % (time.monotonic() - t0, line))


def decode(data, addr):
    """One frame as text, None if it is not RoCEv2."""
    if len(data) < 14 + 20 + 8 + 12 or data[12:14] != b"\x08\x00":
        return None
    ihl = (data[14] & 0x0F) * 4
    if data[23] != 17:
        return None
    ip = data[14:14 + ihl]
    udp = 14 + ihl
    if struct.unpack("!H", data[udp + 2:udp + 4])[0] != 4791:
        return None
    b = udp + 8
    op = data[b]
    dqp = int.from_bytes(data[b + 5:b + 8], "big")
    ackreq = "A" if data[b + 8] & 0x80 else "-"
    psn = int.from_bytes(data[b + 9:b + 12], "big")
    extra = ""
    if op in (13, 15, 16, 17, 18):   # AETH after the BTH
        syn = data[b + 12]
        msn = int.from_bytes(data[b + 13:b + 16], "big")
        extra = " aeth=%02x/%d" % (syn, msn)
    elif op in (0, 4, 5, 23):        # a message's first Send: its RPC-over-RDMA header (RFC 8166 §4.2)
        h = b + 12 + (4 if op in (5, 23) else 0)   # past the immediate data or IETH
        if len(data) >= h + 16:
            xid, vers, credits, proc = struct.unpack("!IIII", data[h:h + 16])
            extra = " xid=%08x cr=%d proc=%d" % (xid, credits, proc)
    direction = ">" if addr[2] == socket.PACKET_OUTGOING else "<"
    return "%s %s>%s %s qp%d psn%d %s%s len%d" % (
        direction, socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20]),
        OPS.get(op, str(op)), dqp, psn, ackreq, extra, len(data))


if __name__ == "__main__":
    main()
