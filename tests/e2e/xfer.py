#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Send a file over one TCP connection and hash it at both ends.

  xfer.py recv --bind ADDR --port P [--result FILE] [--timeout S] [--max-seconds S]
      accept one connection, read to EOF, write {"bytes","sha256","seconds"}.
      --max-seconds: stop reading S seconds after the connection was accepted
      even if the sender is not done (the connection is then reset): a
      download of fixed duration. "complete" says whether EOF was reached;
      "sha256" is that of the bytes received (a prefix of the file), and
      "progress" holds [seconds, bytes] every 0.5 s.
  xfer.py send --host ADDR --port P --file F [--result FILE] [--timeout S]
      [--source ADDR] [--allow-reset] connect (retrying until the receiver
      listens), send F, half-close, wait for the receiver to close; write
      {"bytes","sha256","seconds"}. --allow-reset: a reset by the receiver
      (recv --max-seconds) ends the transfer without an error ("reset": true,
      "bytes" = what was handed to the kernel).

Both ends use TCP congestion control --cc (default: $TB_TCP_CC, else cubic),
set on the socket (TCP_CONGESTION): a network namespace inherits the host's
default (bbr on some machines), and only root may pick one the host does not
allow, which these tests are.
"""
import argparse
import hashlib
import json
import os
import socket
import struct
import sys
import time

CHUNK = 256 * 1024


def write_result(path, res):
    text = json.dumps(res, sort_keys=True)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    print(text)


def set_cc(sock, cc):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def recv(a):
    srv = socket.socket(socket.AF_INET6 if ":" in a.bind else socket.AF_INET, socket.SOCK_STREAM)
    set_cc(srv, a.cc)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((a.bind, a.port))
    srv.listen(1)
    srv.settimeout(a.timeout)
    conn, peer = srv.accept()
    conn.settimeout(a.timeout)
    h = hashlib.sha256()
    n = 0
    t0 = time.monotonic()
    end = t0 + a.max_seconds if a.max_seconds else None
    progress = [[0.0, 0]]
    complete = False
    while True:
        now = time.monotonic()
        if end is not None:
            if now >= end:
                break
            conn.settimeout(max(0.01, min(a.timeout, end - now, 0.5)))
        if now - t0 >= progress[-1][0] + 0.5:
            progress.append([round(now - t0, 3), n])
        try:
            b = conn.recv(CHUNK)
        except socket.timeout:
            if end is None:
                raise
            continue
        if not b:
            complete = True
            break
        h.update(b)
        n += len(b)
    secs = time.monotonic() - t0
    progress.append([round(secs, 3), n])
    if not complete:
        # Reset rather than wait for the sender's queued bytes to cross the link.
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()
    srv.close()
    res = {"bytes": n, "sha256": h.hexdigest(), "seconds": secs, "peer": peer[0],
           "complete": complete}
    if a.max_seconds:
        res["progress"] = progress
    write_result(a.result, res)
    return 0


def send(a):
    deadline = time.monotonic() + a.timeout
    while True:
        s = socket.socket(socket.AF_INET6 if ":" in a.host else socket.AF_INET,
                          socket.SOCK_STREAM)
        set_cc(s, a.cc)
        s.settimeout(min(5.0, a.timeout))
        if a.source:
            s.bind((a.source, 0))
        try:
            s.connect((a.host, a.port))
            break
        except OSError:
            s.close()
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)
    s.settimeout(a.timeout)
    h = hashlib.sha256()
    n = 0
    t0 = time.monotonic()
    reset = False
    try:
        with open(a.file, "rb") as f:
            while True:
                b = f.read(CHUNK)
                if not b:
                    break
                s.sendall(b)
                h.update(b)
                n += len(b)
        s.shutdown(socket.SHUT_WR)
        # Wait for the receiver's close: every byte has then been read.
        while s.recv(4096):
            pass
    except (ConnectionResetError, BrokenPipeError):
        if not a.allow_reset:
            raise
        reset = True
    secs = time.monotonic() - t0
    s.close()
    res = {"bytes": n, "sha256": h.hexdigest(), "seconds": secs}
    if a.allow_reset:
        res["reset"] = reset
    write_result(a.result, res)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--bind", default="0.0.0.0")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--result")
    r.add_argument("--timeout", type=float, default=60)
    r.add_argument("--max-seconds", type=float, default=0,
                   help="stop reading this long after accepting (0: read to EOF)")
    s = sub.add_parser("send")
    s.add_argument("--host", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--file", required=True)
    s.add_argument("--source", help="local address to send from")
    s.add_argument("--result")
    s.add_argument("--timeout", type=float, default=60)
    s.add_argument("--allow-reset", action="store_true",
                   help="a reset by the receiver ends the transfer, not an error")
    for p in (r, s):
        p.add_argument("--cc", default=os.environ.get("TB_TCP_CC") or "cubic",
                       help="TCP congestion control (TCP_CONGESTION); default $TB_TCP_CC or cubic")
    a = ap.parse_args()
    return recv(a) if a.mode == "recv" else send(a)


if __name__ == "__main__":
    sys.exit(main())
