#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A small capture for test_split_chain.sh (this machine has no tcpdump): every
TCP frame seen on IFACE, both directions, first SNAP bytes, into a pcap file,
until SIGTERM.

  split_cap.py IFACE OUT.pcap [--snap 128] [--ready FILE]
"""
import argparse
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 3


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("iface")
    ap.add_argument("out")
    ap.add_argument("--snap", type=int, default=128)
    ap.add_argument("--ready")
    a = ap.parse_args()
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((a.iface, 0))
    f = open(a.out, "wb")
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, a.snap, 1))
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    s.settimeout(0.2)
    if a.ready:
        open(a.ready, "w").close()
    while not stop:
        try:
            b = s.recv(65536)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        # IPv4 or IPv6 TCP only.
        et = b[12:14]
        if not ((et == b"\x08\x00" and len(b) > 23 and b[23] == 6) or
                (et == b"\x86\xdd" and len(b) > 20 and b[20] == 6)):
            continue
        t = time.time()
        c = b[:a.snap]
        f.write(struct.pack("<IIII", int(t), int((t % 1) * 1e6), len(c), len(b)) + c)
    f.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
