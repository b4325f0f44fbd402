#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""ICMP echo over a raw socket (the test machines have no ping(8)); ICMPv6 for an
IPv6 address (the kernel fills the ICMPv6 checksum of a raw ICMPv6 socket).

  ping.py [-c COUNT] [-i INTERVAL] [-W TIMEOUT] [-s SIZE] ADDR
Prints one line "sent N received M rtt_avg_ms X"; exits 0 when every echo was
answered, 1 otherwise.
"""
import argparse
import os
import select
import socket
import struct
import sys
import time


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-c", "--count", type=int, default=3)
    ap.add_argument("-i", "--interval", type=float, default=0.05)
    ap.add_argument("-W", "--timeout", type=float, default=2.0)
    ap.add_argument("-s", "--size", type=int, default=56)
    ap.add_argument("addr")
    a = ap.parse_args()

    v6 = ":" in a.addr
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6) if v6 else \
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    req = 128 if v6 else 8
    ident = os.getpid() & 0xFFFF
    payload = (b"satgw-e2e-ping!" * ((a.size // 15) + 1))[:a.size]
    sent_at = {}
    got = {}
    for seq in range(1, a.count + 1):
        hdr = struct.pack("!BBHHH", req, 0, 0, ident, seq)
        pkt = hdr + payload if v6 else \
            struct.pack("!BBHHH", req, 0, csum(hdr + payload), ident, seq) + payload
        sent_at[seq] = time.monotonic()
        s.sendto(pkt, (a.addr, 0))
        end = time.monotonic() + a.interval
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([s], [], [], left)
            if r:
                receive(s, ident, sent_at, got, v6)
    end = time.monotonic() + a.timeout
    while len(got) < a.count:
        left = end - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([s], [], [], left)
        if r:
            receive(s, ident, sent_at, got, v6)
    avg = sum(got.values()) / len(got) * 1000 if got else 0
    print("sent %d received %d rtt_avg_ms %.3f" % (a.count, len(got), avg))
    return 0 if len(got) == a.count else 1


def receive(s, ident, sent_at, got, v6=False):
    data, _ = s.recvfrom(65535)
    ihl = 0 if v6 else (data[0] & 0x0F) * 4  # a raw ICMPv6 socket gives no IP header
    if len(data) < ihl + 8:
        return
    typ, _, _, rid, seq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
    if typ == (129 if v6 else 0) and rid == ident and seq in sent_at and seq not in got:
        got[seq] = time.monotonic() - sent_at[seq]


if __name__ == "__main__":
    sys.exit(main())
