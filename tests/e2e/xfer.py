#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Send a file over one TCP connection and hash it at both ends.

  xfer.py recv --bind ADDR --port P [--result FILE] [--timeout S]
      accept one connection, read to EOF, write {"bytes","sha256","seconds"}
  xfer.py send --host ADDR --port P --file F [--result FILE] [--timeout S]
      [--source ADDR] connect (retrying until the receiver listens), send F, half-close,
      wait for the receiver to close; write {"bytes","sha256","seconds"}
"""
import argparse
import hashlib
import json
import socket
import sys
import time

CHUNK = 256 * 1024


def write_result(path, res):
    text = json.dumps(res, sort_keys=True)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    print(text)


def recv(a):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((a.bind, a.port))
    srv.listen(1)
    srv.settimeout(a.timeout)
    conn, peer = srv.accept()
    conn.settimeout(a.timeout)
    h = hashlib.sha256()
    n = 0
    t0 = time.monotonic()
    while True:
        b = conn.recv(CHUNK)
        if not b:
            break
        h.update(b)
        n += len(b)
    secs = time.monotonic() - t0
    conn.close()
    srv.close()
    write_result(a.result, {"bytes": n, "sha256": h.hexdigest(), "seconds": secs,
                            "peer": peer[0]})
    return 0


def send(a):
    deadline = time.monotonic() + a.timeout
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
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
    secs = time.monotonic() - t0
    s.close()
    write_result(a.result, {"bytes": n, "sha256": h.hexdigest(), "seconds": secs})
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
    s = sub.add_parser("send")
    s.add_argument("--host", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--file", required=True)
    s.add_argument("--source", help="local address to send from")
    s.add_argument("--result")
    s.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    return recv(a) if a.mode == "recv" else send(a)


if __name__ == "__main__":
    sys.exit(main())
