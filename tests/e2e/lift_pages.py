#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Web page downloads with seed 000's HTTP model (Table I), for lift_experiment.sh.

  lift_pages.py serve --bind ADDR --port N [--cc reno]
      For each connection: read request lines "SIZE\\n", answer SIZE bytes each,
      until the client closes. Runs until killed.
  lift_pages.py fetch --host ADDR --port N --pages K --seed S --out FILE.jsonl
                      [--iface mh0] [--cap-kb 100] [--timeout 120] [--bulk BYTES]
      K pages, one after the other (no think time). A page: a new TCP connection,
      the main object, then its in-line objects one after the other on the
      same connection (HTTP/1.1-like, no pipelining), closed. Sizes from Table
      I as lognormals with the table's mean and standard deviation (main 10 /
      25 KB, in-line 7.7 / 126 KB, count 5.5 / 11.4 rounded), each object
      capped at --cap-kb (the in-line size's heavy tail would make a handful of
      pages dominate a small run), at most 20 in-line objects. The same seed
      gives the same pages. One JSON line per page: seconds, bytes, objects,
      and the uplink bytes the host's interface sent meanwhile (--iface).
      --bulk BYTES: each page is one object of BYTES instead (a bulk download
      per connection, the same records; the seed then only names the run).
  lift_pages.py bulk --host ADDR --port N --size BYTES --out FILE.jsonl
                     [--iface mh0] [--timeout 120] [--tag T]
      One download of BYTES on a new connection (lift_outage.sh): one JSON line
      with its seconds, the wall time it started, the uplink bytes, and its
      progress (seconds from the start, bytes received) every 50 ms.

A page or download that receives nothing for --timeout s is written as a
censored record ("censored": true, its seconds from its start to the timeout:
a lower bound; bytes, objects and uplink bytes 0, an empty trace) and the
program exits with status 3 (CENSORED); any other failure exits 1.
"""
import argparse
import json
import math
import random
import socket
import sys
import time

CENSORED = 3     # exit status: the last record is censored (receive timeout)


def lognormal(rng, mean, std):
    s2 = math.log(1.0 + (std * std) / (mean * mean))
    return rng.lognormvariate(math.log(mean) - s2 / 2.0, math.sqrt(s2))


def pages(seed, k, cap):
    rng = random.Random(seed)
    out = []
    for _ in range(k):
        main = min(cap, max(1, int(lognormal(rng, 10240, 25600))))
        n = min(20, int(round(lognormal(rng, 5.5, 11.4))))
        objs = [main] + [min(cap, max(1, int(lognormal(rng, 7885, 129024)))) for _ in range(n)]
        out.append(objs)
    return out


def serve(a):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((a.bind, a.port))
    srv.listen(16)
    blob = bytes(range(256)) * 4096
    while True:
        c, _ = srv.accept()
        if a.cc:
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a.cc.encode())
        f = c.makefile("rb")
        try:
            for line in f:
                n = int(line.strip() or 0)
                while n > 0:
                    k = c.send(blob[:min(n, len(blob))])
                    n -= k
        except (OSError, ValueError):
            pass
        f.close()
        c.close()


def txbytes(iface):
    with open("/sys/class/net/%s/statistics/tx_bytes" % iface) as f:
        return int(f.read())


def censored(out, rec, t0):
    """The receive timeout: rec, censored at the time since t0, ends the program."""
    rec.update({"seconds": round(time.monotonic() - t0, 3), "censored": True})
    out.write(json.dumps(rec) + "\n")
    out.close()
    print("timed out: %s" % json.dumps(rec), file=sys.stderr)
    sys.exit(CENSORED)


def get_page(s, objs):
    got = 0
    for size in objs:
        s.sendall(b"%d\n" % size)
        left = size
        while left > 0:
            b = s.recv(min(left, 65536))
            if not b:
                sys.exit("connection closed early")
            left -= len(b)
        got += size
    return got


def fetch(a):
    out = open(a.out, "w")
    plan = [[a.bulk]] * a.pages if a.bulk else pages(a.seed, a.pages, a.cap_kb * 1024)
    for i, objs in enumerate(plan):
        up0 = txbytes(a.iface)
        t0 = time.monotonic()
        try:
            s = socket.create_connection((a.host, a.port), timeout=a.timeout)
            got = get_page(s, objs)
        except socket.timeout:
            censored(out, {"page": i, "bytes": 0, "objects": 0, "uplink_bytes": 0}, t0)
        s.close()
        dt = time.monotonic() - t0
        rec = {"page": i, "seconds": round(dt, 4), "bytes": got, "objects": len(objs),
               "uplink_bytes": txbytes(a.iface) - up0}
        out.write(json.dumps(rec) + "\n")
        out.flush()
        print(json.dumps(rec), file=sys.stderr)


def bulk(a):
    up0 = txbytes(a.iface)
    wall0 = time.time()
    t0 = time.monotonic()
    left, got, trace, last = a.size, 0, [[0.0, 0]], 0.0
    try:
        s = socket.create_connection((a.host, a.port), timeout=a.timeout)
        s.sendall(b"%d\n" % a.size)
        while left > 0:
            b = s.recv(min(left, 65536))
            if not b:
                sys.exit("connection closed early")
            left -= len(b)
            got += len(b)
            t = time.monotonic() - t0
            if t - last >= 0.05 or left == 0:
                trace.append([round(t, 3), got])
                last = t
    except socket.timeout:
        censored(open(a.out, "a"), {"tag": a.tag, "start_wall": wall0, "bytes": 0,
                                    "uplink_bytes": 0, "trace": []}, t0)
    s.close()
    rec = {"tag": a.tag, "seconds": round(time.monotonic() - t0, 4), "start_wall": wall0,
           "bytes": got, "uplink_bytes": txbytes(a.iface) - up0, "trace": trace}
    with open(a.out, "a") as out:
        out.write(json.dumps(rec) + "\n")
    print("%s: %d B in %.2f s" % (a.tag, got, rec["seconds"]), file=sys.stderr)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--bind", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--cc", default="", help="TCP_CONGESTION of every accepted socket")
    f = sub.add_parser("fetch")
    f.add_argument("--host", required=True)
    f.add_argument("--port", type=int, required=True)
    f.add_argument("--pages", type=int, default=5)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--out", required=True)
    f.add_argument("--iface", default="mh0")
    f.add_argument("--cap-kb", type=int, default=100)
    f.add_argument("--timeout", type=float, default=120)
    f.add_argument("--bulk", type=int, default=0, help="each page one object of this size")
    b = sub.add_parser("bulk")
    b.add_argument("--host", required=True)
    b.add_argument("--port", type=int, required=True)
    b.add_argument("--size", type=int, required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--iface", default="mh0")
    b.add_argument("--timeout", type=float, default=120)
    b.add_argument("--tag", default="")
    a = p.parse_args()
    {"serve": serve, "fetch": fetch, "bulk": bulk}[a.cmd](a)


if __name__ == "__main__":
    main()
