#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The LIFT e2e test's wire tools (tests/e2e/test_lift_chain.sh).

  lift_wire.py capture IFACE OUT.json --ready FILE
      Count every IPv4/IPv6 packet IFACE receives (not what it sends), by IP
      protocol and source address, until SIGTERM; then write
      {"frames": N, "drops": D, "by_proto": {"50": n, ...}, "by_src_proto": {"10.20.1.1/50": n},
       "not_esp": [the first 16 non-ESP packets not from a link-local address:
                   "+T.TTTs SRC > DST proto P len L" and TCP flags or ICMP type/code]}.
  lift_wire.py inject IFACE SRC_MAC DST_MAC SRC DST PROTO COUNT OUT.json
      Send COUNT LIFT packets (IP protocol PROTO) at layer 2 from IFACE: the
      first half Setups (flow 1, SPI 0x1e5a0002, ESP), the rest TCP-ACK headers
      followed by 24 bytes of would-be ESP. Writes {"sent": COUNT}.
"""
import json
import signal
import socket
import struct
import sys
import time


def capture(iface, out, ready):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    open(ready, "w").close()
    frames, by_proto, by_src, not_esp = 0, {}, {}, []
    t0 = time.monotonic()
    s.settimeout(0.2)
    while not stop:
        try:
            pkt, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        frames += 1
        et = struct.unpack("!H", pkt[12:14])[0]
        if et == 0x0800 and len(pkt) >= 34:
            proto, src = pkt[23], socket.inet_ntop(socket.AF_INET, pkt[26:30])
            dst, l4 = socket.inet_ntop(socket.AF_INET, pkt[30:34]), 14 + (pkt[14] & 15) * 4
        elif et == 0x86DD and len(pkt) >= 54:
            proto, src = pkt[20], socket.inet_ntop(socket.AF_INET6, pkt[22:38])
            dst, l4 = socket.inet_ntop(socket.AF_INET6, pkt[38:54]), 54
        else:
            continue
        by_proto[str(proto)] = by_proto.get(str(proto), 0) + 1
        k = "%s/%d" % (src, proto)
        by_src[k] = by_src.get(k, 0) + 1
        # what a failed "only ESP" check needs to say (the IPv6 header is
        # taken as 40 bytes: an extension header shows as its own protocol)
        if proto != 50 and not src.startswith("fe80:") and len(not_esp) < 16:
            d = "+%.3fs %s > %s proto %d len %d" % (time.monotonic() - t0, src, dst, proto,
                                                     len(pkt))
            if proto == 6 and len(pkt) >= l4 + 14:
                d += " tcp flags 0x%02x" % pkt[l4 + 13]
            elif proto in (1, 58) and len(pkt) >= l4 + 2:
                d += " icmp type %d code %d" % (pkt[l4], pkt[l4 + 1])
            not_esp.append(d)
    # struct tpacket_stats {tp_packets, tp_drops}: what the socket lost
    drops = struct.unpack("II", s.getsockopt(263, 6, 8))[1]  # SOL_PACKET, PACKET_STATISTICS
    json.dump({"frames": frames, "drops": drops, "by_proto": by_proto, "by_src_proto": by_src,
               "not_esp": not_esp}, open(out, "w"))


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def inject(iface, smac, dmac, src, dst, proto, count, out):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    mac = lambda m: bytes(int(x, 16) for x in m.split(":"))
    for i in range(count):
        if i < count // 2:
            # Setup: byte 0 flags, bytes 1-2 flow id, 3-6 SPI, 7 protocol
            lift = struct.pack("!BHIB", 0x00, 1, 0x1E5A0002, 50)
        else:
            lift = struct.pack("!BHIB", 0x80, 1, 1000 + i, 50) + \
                struct.pack("!II", 0x1E5A0001, 5000 + i) + bytes(16)
        if ":" in src:
            ip = struct.pack("!IHBB16s16s", 6 << 28, len(lift), proto, 64,
                             socket.inet_pton(socket.AF_INET6, src),
                             socket.inet_pton(socket.AF_INET6, dst))
            s.send(mac(dmac) + mac(smac) + b"\x86\xdd" + ip + lift)
            continue
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(lift), 0x4C00 + i, 0, 64, proto,
                         0, socket.inet_aton(src), socket.inet_aton(dst))
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        s.send(mac(dmac) + mac(smac) + b"\x08\x00" + ip + lift)
    json.dump({"sent": count}, open(out, "w"))


def main():
    if sys.argv[1] == "capture":
        capture(sys.argv[2], sys.argv[3], sys.argv[5])
    elif sys.argv[1] == "inject":
        a = sys.argv[2:]
        inject(a[0], a[1], a[2], a[3], a[4], int(a[5]), int(a[6]), a[7])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
