#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the satlink tests (test_satlink_chain.sh, demo.sh,
tests/bench/satlink_goodput.py): satgw's satlink counters, and a sniffer of
the satellite segment.

The counters come from the "satlink" object of satgw's --stats-json (or of a
telemetry reply). Its layout (per-session objects, a crypto sub-object, ...)
is the dataplane's; these commands do not depend on it. A counter NAME is
looked up by name among every numeric leaf under "satlink": a leaf matches
when its path ends with NAME's dot-separated components (`tx_retx`,
`rx_refused.dup`, `bad_tag`), and the matches are summed (a hub has one
session per terminal). When some matches sit under an aggregate (a path step
named total, totals or sum) only those count, so totals are not added to the
sessions they sum. `a|b` takes the first alternative that exists, `a+b` adds.

  satlink.py dump JSON
      every numeric leaf under "satlink", one "path value" line each
  satlink.py get JSON NAME [NAME...]
      the value of each NAME, space separated (missing: -1)
  satlink.py check JSON [--label L] --expect 'NAME OP NUMBER' ...
      OP one of == != >= <= > <; a NAME that matches nothing fails, with the
      names there are. Exit 1 when one fails.
  satlink.py summary JSON [--label L]
      a readable line or two of the counters (demo.sh)
  satlink.py keyfile PATH ID [ID...]
      write a key file (one random AES-256 key per terminal id), mode 0600
  satlink.py sniff IFACE OUT [--seconds S] [--needles FILE] [--needle-every N] [--ready F]
      capture the frames IFACE receives (not those it sends) until SIGTERM or
      S seconds (then what the socket holds is read too, so every frame that
      reached IFACE before the signal counts); --ready: write F once the
      capture socket is bound; write to OUT a JSON summary: frames by EtherType, satlink
      frames by type and by the ENCRYPTED flag, and how many of the needles
      (32-byte pieces of FILE, one every N bytes) appeared anywhere in the
      captured bytes (the file crossed in clear).
"""
import argparse
import json
import os
import re
import signal
import socket
import struct
import sys
import time

AGGREGATE = {"total", "totals", "sum"}
OPS = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, "<": lambda a, b: a < b,
}
EXPR = re.compile(r"^\s*([^\s=!<>]+)\s*(==|!=|>=|<=|>|<)\s*(-?[0-9.e+]+)\s*$")
ETH_P_ALL = 0x0003
ETH_SATLINK = 0x88B5
PACKET_OUTGOING = 4
SL_TYPES = {0: "data", 1: "status", 2: "hello", 3: "hello_ack"}
SL_F_RETX = 0x04
SL_F_DATAGRAM = 0x08
SL_F_ENCRYPTED = 0x80


def satlink_of(doc):
    """The "satlink" object of a stats JSON or telemetry reply (or the doc itself)."""
    if isinstance(doc, dict):
        if "satlink" in doc:
            return doc["satlink"]
        for k in ("/satgw/stats", "/satgw/satlink"):
            if k in doc and isinstance(doc[k], dict):
                return satlink_of(doc[k])
    return None


def leaves(obj, path=()):
    """(path tuple, number) for every numeric leaf under obj."""
    if isinstance(obj, bool):
        return
    if isinstance(obj, (int, float)):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, path + (str(k),))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            step = str(i)
            if isinstance(v, dict):
                for key in ("name", "terminal", "terminal_id", "id"):
                    if key in v and not isinstance(v[key], (dict, list)):
                        step = "%s" % v[key]
                        break
            yield from leaves(v, path + (step,))


def lookup_one(lv, name):
    want = tuple(name.split("."))
    hits = [(p, v) for p, v in lv if len(p) >= len(want) and p[-len(want):] == want]
    if not hits:
        return None
    agg = [(p, v) for p, v in hits if AGGREGATE & set(s.lower() for s in p[:-len(want)])]
    return sum(v for _, v in (agg or hits))


def lookup(lv, expr):
    """expr: alternatives a|b, each a sum x+y of names. None when nothing matches."""
    for alt in expr.split("|"):
        vals = [lookup_one(lv, n) for n in alt.split("+")]
        if all(v is not None for v in vals):
            return sum(vals)
    return None


def load_leaves(path):
    with open(path) as f:
        doc = json.load(f)
    sl = satlink_of(doc)
    if sl is None:
        sys.exit("satlink.py: %s has no \"satlink\" object (keys: %s)" % (
            path, ", ".join(doc) if isinstance(doc, dict) else type(doc).__name__))
    return list(leaves(sl))


def names_of(lv):
    return sorted(set(p[-1] for p, _ in lv))


def cmd_dump(a):
    for p, v in load_leaves(a.json):
        print("%s %s" % (".".join(p), v))
    return 0


def cmd_get(a):
    lv = load_leaves(a.json)
    out = []
    for n in a.names:
        v = lookup(lv, n)
        out.append("-1" if v is None else ("%d" % v if float(v).is_integer() else "%g" % v))
    print(" ".join(out))
    return 0


def cmd_check(a):
    lv = load_leaves(a.json)
    bad = 0
    tag = "%s: " % a.label if a.label else ""
    for e in a.expect or []:
        m = EXPR.match(e)
        if not m:
            print("  FAIL %scannot parse check '%s'" % (tag, e))
            bad += 1
            continue
        name, op, num = m.groups()
        v = lookup(lv, name)
        if v is None:
            print("  FAIL %ssatlink has no counter '%s' (names: %s)" % (
                tag, name, ", ".join(names_of(lv))))
            bad += 1
            continue
        ok = OPS[op](v, float(num))
        print("  %s %ssatlink %s %s %s (is %s)" % ("ok  " if ok else "FAIL", tag, name, op, num,
                                                   "%d" % v if float(v).is_integer() else v))
        bad += not ok
    return 1 if bad else 0


def fmt(v):
    if v is None:
        return "-"
    return "%d" % v if float(v).is_integer() else "%.3g" % v


def cmd_summary(a):
    lv = load_leaves(a.json)

    def g(n):
        return fmt(lookup(lv, n))
    tag = "%-10s" % (a.label + ":") if a.label else ""
    print("%ssent %s DATA frames + %s retransmitted copies (losses found: %s by status, %s by "
          "timer); received %s DATA frames, delivered %s packets (%s bytes); statuses %s sent / %s "
          "received; link up %s, down %s" % (
              tag, g("tx_frames"), g("tx_retx"), g("loss_status"), g("loss_timeout"),
              g("rx_frames"), g("pkts_delivered"), g("bytes_delivered"), g("status_tx"),
              g("status_rx"), g("link_ups"), g("link_downs")))
    crypto = [(p, v) for p, v in lv if any("crypt" in s or s in ("sealed", "opened") for s in p)]
    if any(v for _, v in crypto):   # frames not protected: no crypto line
        drops = {}
        for p, v in crypto:
            m = re.match(r"^crypto_drop_(\w+)$", p[-1])
            if v and (m or any(s in ("rx_dropped", "crypto_drops") for s in p)):
                k = m.group(1) if m else p[-1]
                drops[k] = drops.get(k, 0) + v
        print("%scrypto (AES-GCM): sealed %s, opened %s, dropped %s" % (
            " " * len(tag), g("crypto_sealed|sealed"), g("crypto_opened|opened"),
            ", ".join("%s %s" % (k, fmt(v)) for k, v in sorted(drops.items())) or "none"))
    return 0


def cmd_keyfile(a):
    lines = ["# satgw test keys, generated %s; <terminal id> <64 hex digits = AES-256>" %
             time.strftime("%Y-%m-%d %H:%M:%S")]
    for tid in a.ids:
        lines.append("%d %s" % (int(tid), os.urandom(32).hex()))
    fd = os.open(a.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(a.path, 0o600)
    return 0


def cmd_sniff(a):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.bind((a.iface, 0))
    s.settimeout(0.1)
    if a.ready:
        with open(a.ready, "w") as f:
            f.write("ready\n")
    res = {"iface": a.iface, "frames": 0, "bytes": 0, "by_ethertype": {},
           "satlink": {"frames": 0, "encrypted": 0, "clear": 0, "retx": 0, "datagram": 0,
                       "by_type": {}, "terminal_ids": []}}
    blob = []
    tids = set()
    t_end = time.monotonic() + a.seconds if a.seconds else None
    draining = False
    while True:
        if not draining and (stop or (t_end is not None and time.monotonic() >= t_end)):
            # Stopped: read what the socket already holds, then finish.
            draining = True
            s.setblocking(False)
        try:
            frame, addr = s.recvfrom(65536)
        except (socket.timeout, InterruptedError):
            continue
        except BlockingIOError:
            if draining:
                break
            continue
        if addr[2] == PACKET_OUTGOING or len(frame) < 14:
            continue
        res["frames"] += 1
        res["bytes"] += len(frame)
        et = struct.unpack("!H", frame[12:14])[0]
        key = "0x%04x" % et
        res["by_ethertype"][key] = res["by_ethertype"].get(key, 0) + 1
        if et == ETH_SATLINK and len(frame) >= 14 + 22:
            sl = res["satlink"]
            sl["frames"] += 1
            typ = frame[14] & 0x0F
            flags = frame[15]
            tname = SL_TYPES.get(typ, "type%d" % typ)
            sl["by_type"][tname] = sl["by_type"].get(tname, 0) + 1
            sl["encrypted" if flags & SL_F_ENCRYPTED else "clear"] += 1
            sl["retx"] += bool(flags & SL_F_RETX)
            sl["datagram"] += bool(flags & SL_F_DATAGRAM)
            tids.add(struct.unpack("!I", frame[18:22])[0])
        if a.needles:
            blob.append(frame[14:])
    res["satlink"]["terminal_ids"] = sorted(tids)
    if a.needles:
        data = open(a.needles, "rb").read()
        needles = [data[o:o + 32] for o in range(0, max(0, len(data) - 32), a.needle_every)]
        hay = b"\x00\xff\x00\xff".join(blob)
        found = sum(1 for n in needles if n in hay)
        res["needles"] = {"file": a.needles, "count": len(needles), "found": found,
                          "captured_bytes": len(hay)}
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("dump")
    s.add_argument("json")
    s = sub.add_parser("get")
    s.add_argument("json")
    s.add_argument("names", nargs="+")
    s = sub.add_parser("check")
    s.add_argument("json")
    s.add_argument("--label")
    s.add_argument("--expect", action="append")
    s = sub.add_parser("summary")
    s.add_argument("json")
    s.add_argument("--label")
    s = sub.add_parser("keyfile")
    s.add_argument("path")
    s.add_argument("ids", nargs="+")
    s = sub.add_parser("sniff")
    s.add_argument("iface")
    s.add_argument("out")
    s.add_argument("--seconds", type=float, default=0)
    s.add_argument("--needles")
    s.add_argument("--needle-every", type=int, default=16384)
    s.add_argument("--ready", help="write this file once the capture socket is bound")
    a = ap.parse_args()
    return {"dump": cmd_dump, "get": cmd_get, "check": cmd_check, "summary": cmd_summary,
            "keyfile": cmd_keyfile, "sniff": cmd_sniff}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
