#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Timed bulk TCP flows for the XCP chain test and experiments.

  xcp_flows.py recv --bind A --port P --t0 T --until S --bin B --result F
      accept connections; each starts with 4 bytes: the flow id; count the
      bytes of each flow in bins of B s from T (CLOCK_MONOTONIC, shared by
      every network namespace) until T + S; write
      {"bin_s", "flows": {id: [bytes per bin]}, "cc": {id: name}}.
  xcp_flows.py send --host A --port P --t0 T --flow ID:START:STOP:CC[:SRC:DST] ...
      one thread per flow: connect (from SRC, to DST, default --host) at
      T + START with TCP_CONGESTION CC, send until T + STOP, close. Flows share nothing but the path.
"""
import argparse
import json
import socket
import struct
import sys
import threading
import time


def recv_main(a):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.bind, a.port))
    ls.listen(64)
    ls.settimeout(0.2)
    nbins = int(a.until / a.bin) + 1
    flows = {}
    lock = threading.Lock()
    end = a.t0 + a.until

    def serve(c):
        c.settimeout(0.5)
        hdr = b""
        try:
            while len(hdr) < 4 and time.monotonic() < end:
                try:
                    b = c.recv(4 - len(hdr))
                except socket.timeout:
                    continue
                if not b:
                    return
                hdr += b
            if len(hdr) < 4:
                return
            fid = str(struct.unpack("!I", hdr)[0])
            with lock:
                bins = flows.setdefault(fid, [0] * nbins)
            while True:
                now = time.monotonic()
                if now >= end:
                    return
                try:
                    b = c.recv(1 << 16)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not b:
                    return
                i = int((time.monotonic() - a.t0) / a.bin)
                if 0 <= i < nbins:
                    bins[i] += len(b)
        finally:
            c.close()

    threads = []
    while time.monotonic() < end:
        try:
            c, _ = ls.accept()
        except socket.timeout:
            continue
        t = threading.Thread(target=serve, args=(c,), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join(2)
    with open(a.result + ".tmp", "w") as f:
        json.dump({"bin_s": a.bin, "flows": flows}, f)
    import os
    os.rename(a.result + ".tmp", a.result)


def send_main(a):
    buf = bytes(range(256)) * 256
    errs = []

    def flow(spec):
        parts = spec.split(":")
        fid, start, stop, cc = parts[:4]
        src = parts[4] if len(parts) > 4 and parts[4] else None
        dst = parts[5] if len(parts) > 5 and parts[5] else a.host
        start, stop = float(start), float(stop)
        d = a.t0 + start - time.monotonic()
        if d > 0:
            time.sleep(d)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        s.settimeout(5)
        try:
            if src:
                s.bind((src, 0))
            s.connect((dst, a.port))
            s.sendall(struct.pack("!I", int(fid)))
            s.settimeout(0.5)
            while time.monotonic() < a.t0 + stop:
                try:
                    s.send(buf)
                except socket.timeout:
                    continue
        except OSError as e:
            errs.append("flow %s: %s" % (fid, e))
        finally:
            s.close()

    ts = [threading.Thread(target=flow, args=(f,)) for f in a.flow]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for e in errs:
        print(e, file=sys.stderr)
    sys.exit(1 if errs else 0)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = p.add_subparsers(dest="cmd", required=True)
    r = sp.add_parser("recv")
    r.add_argument("--bind", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--t0", type=float, required=True)
    r.add_argument("--until", type=float, required=True)
    r.add_argument("--bin", type=float, default=0.5)
    r.add_argument("--result", required=True)
    s = sp.add_parser("send")
    s.add_argument("--host", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--t0", type=float, required=True)
    s.add_argument("--flow", action="append", required=True)
    a = p.parse_args()
    (recv_main if a.cmd == "recv" else send_main)(a)


if __name__ == "__main__":
    main()
