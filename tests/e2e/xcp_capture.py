#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Watch one interface and summarise the XCP traffic on it (test_xcp_agent.sh).

  xcp_capture.py --iface IF --proto N --result FILE --ready FILE [--seconds S]

Reads every frame on IF (AF_PACKET, Ethernet + IPv4/IPv6) until SIGINT/SIGTERM
or S seconds, and writes a JSON summary to FILE:
  xcp_data      XCP packets carrying TCP with payload from others (the sender's data)
  xcp_data_rtt  of those, with H_rtt > 0 (the agent had an RTT estimate)
  rcv_pkts      TCP or XCP packets from a --receiver address (the receiver's ACKs)
  rcv_other_proto_N  other packets from the receiver (ICMP: not the agent's)
  rcv_xcp       of those, with an XCP header carrying TCP
  xcp_reverse   of those, with the reverse-feedback flag (the receiver's echo)
  plain_tcp     TCP without an XCP header (traffic that bypassed the agents)
  xcp_bad       XCP packets whose header does not parse as version 2
  first_data    the header fields of the first data packet seen with H_rtt > 0
  cwnd_max, rtt_us_max, feedback_pos, reverse_pos, reverse_neg
--ready is created once the socket is bound (the test waits on it).
"""
import argparse
import json
import signal
import socket
import struct
import time

ETH_P_ALL = 0x0003
stop = False


def on_sig(_s, _f):
    global stop
    stop = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--proto", type=int, default=254)
    ap.add_argument("--result", required=True)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--receiver", action="append", default=[],
                    help="address of the receiver host (repeat for IPv4 and IPv6)")
    a = ap.parse_args()
    rcv = set()
    for x in a.receiver:
        fam = socket.AF_INET6 if ":" in x else socket.AF_INET
        rcv.add(socket.inet_pton(fam, x))
    signal.signal(signal.SIGINT, on_sig)
    signal.signal(signal.SIGTERM, on_sig)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((a.iface, 0))
    s.settimeout(0.2)
    open(a.ready, "w").close()
    r = {k: 0 for k in ("frames", "xcp_data", "xcp_data_rtt", "rcv_pkts", "rcv_xcp",
                        "xcp_reverse",
                        "plain_tcp", "xcp_bad", "cwnd_max", "rtt_us_max", "feedback_pos",
                        "reverse_pos", "reverse_neg")}
    r["first_data"] = None
    end = time.monotonic() + a.seconds
    while not stop and time.monotonic() < end:
        try:
            f = s.recv(65600)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        r["frames"] += 1
        if len(f) < 14:
            continue
        et = struct.unpack("!H", f[12:14])[0]
        p = f[14:]
        if et == 0x0800 and len(p) >= 20:
            ihl = (p[0] & 15) * 4
            tot = struct.unpack("!H", p[2:4])[0]
            proto, off, end_ip = p[9], ihl, min(tot, len(p))
            src = bytes(p[12:16])
        elif et == 0x86DD and len(p) >= 40:
            proto, off = p[6], 40
            end_ip = min(40 + struct.unpack("!H", p[4:6])[0], len(p))
            src = bytes(p[8:24])
        else:
            continue
        from_rcv = src in rcv
        if from_rcv and proto in (6, a.proto):
            r["rcv_pkts"] += 1
        elif from_rcv:
            k = "rcv_other_proto_%d" % proto
            if proto in (1, 58) and off < len(p):
                k += "_type_%d_code_%d" % (p[off], p[off + 1])
                if proto == 1 and len(p) >= off + 8 + 20:
                    k += "_about_proto_%d" % p[off + 8 + 9]
            r[k] = r.get(k, 0) + 1
        if proto == 6:
            r["plain_tcp"] += 1
            continue
        if proto != a.proto:
            continue
        x = p[off:end_ip]
        if len(x) < 20 or x[1] >> 4 != 2 or x[2] * 4 < 20 or x[2] * 4 > len(x):
            r["xcp_bad"] += 1
            continue
        nxt, flags, hl = x[0], x[1] & 15, x[2] * 4
        rtt, cwnd, fb, rev = struct.unpack("!IIii", x[4:20])
        if nxt != 6 or len(x) < hl + 20:
            continue
        t = x[hl:]
        doff = (t[12] >> 4) * 4
        pay = len(t) - doff
        if from_rcv:
            r["rcv_xcp"] += 1
            if flags & 1:
                r["xcp_reverse"] += 1
                if rev > 0:
                    r["reverse_pos"] += 1
                elif rev < 0:
                    r["reverse_neg"] += 1
        elif pay > 0:
            r["xcp_data"] += 1
            r["cwnd_max"] = max(r["cwnd_max"], cwnd)
            r["rtt_us_max"] = max(r["rtt_us_max"], rtt)
            if fb > 0:
                r["feedback_pos"] += 1
            if rtt > 0:
                r["xcp_data_rtt"] += 1
                if r["first_data"] is None:
                    r["first_data"] = {"rtt_us": rtt, "cwnd": cwnd, "feedback": fb,
                                       "flags": flags, "payload": pay}
    with open(a.result, "w") as out:
        json.dump(r, out, sort_keys=True)
        out.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
