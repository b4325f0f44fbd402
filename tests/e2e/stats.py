#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check or print satgw's counters (its --stats-json file, or telemetry JSON).

  stats.py check FILE [--conserve] [--dev] [--expect EXPR]...
      FILE is an exit report (--stats-json). Always checked: the accounting
      identity (docs/operations.md, "Exit report"), exactly:
          sum(ports.rx_packets) + accounting.originated.*
          == sum(ports.tx_packets) + drops.* + link drops (emulator)
             + accounting.consumed.* + accounting.held.*,
      nothing held at exit, the accounting object's totals equal the report's
      own sections, and with satlink every drops.satlink_<reason> equals the
      stage counter satlink.counters.<reason>, the control frames made equal
      the sessions' frames_tx_ctrl, and the DATA frames made equal the
      sessions' frames_tx_data + pacer_held (freed at exit) + pacer_full.
      EXPR is PATH OP NUMBER with OP one of == != >= <= > <. PATH walks the
      JSON with dots; in a list, a step picks the element whose "name" is
      that step (ports.terr.rx_packets, rules.to-site-a.packets); a final
      ".*" sums every number below (drops.* == 0).
      --conserve: what entered the two ports left them or was dropped:
          rx(terr) + rx(sat) == tx(terr) + tx(sat) + drops.*, tx(sat) <= rx(terr),
          tx(terr) <= rx(sat), and with no drops tx(sat) == rx(terr) and
          tx(terr) == rx(sat).
      --dev: satgw's port counters agree with the device's
          (dev_ipackets == rx_packets, dev_opackets == tx_packets, no errors).
      Exit 0 when every check holds; each failed check is printed.
  stats.py get FILE PATH            print one value
  stats.py summary FILE             a readable summary (used by demo.sh)
"""
import argparse
import json
import re
import sys

OPS = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, "<": lambda a, b: a < b,
}
EXPR = re.compile(r"^\s*([^\s=!<>]+)\s*(==|!=|>=|<=|>|<)\s*(-?[0-9.]+)\s*$")


def total(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, dict):
        return sum(total(x) for x in v.values())
    if isinstance(v, list):
        return sum(total(x) for x in v)
    return 0


def resolve(doc, path):
    cur = doc
    for step in path.split("."):
        if step == "*":
            return total(cur)
        if isinstance(cur, list):
            hit = [e for e in cur if isinstance(e, dict) and e.get("name") == step]
            if not hit:
                raise KeyError("%s: no element named '%s'" % (path, step))
            cur = hit[0]
        elif isinstance(cur, dict):
            if step not in cur:
                raise KeyError("%s: no key '%s' (have: %s)" % (path, step, ", ".join(cur)))
            cur = cur[step]
        else:
            raise KeyError("%s: '%s' is not inside an object" % (path, step))
    return cur


def load(path):
    with open(path) as f:
        return json.load(f)


LINK_DROPS = ("dropped_queue", "dropped_loss", "dropped_outage")


def accounting(doc, expect):
    """The accounting identity of the exit report, exactly; see the docstring."""
    acc = doc.get("accounting")
    if not isinstance(acc, dict):
        expect("the report has an 'accounting' object (an exit report of this satgw)", False)
        return
    rx = sum(p["rx_packets"] for p in doc["ports"])
    tx = sum(p["tx_packets"] for p in doc["ports"])
    drops = total(doc["drops"])
    link = sum(d[k] for d in doc.get("link", {}).values() for k in LINK_DROPS)
    made = total(acc["originated"])
    consumed = total(acc["consumed"])
    held = total(acc["held"])
    expect("accounting.rx %d == ports' rx_packets %d" % (acc["rx"], rx), acc["rx"] == rx)
    expect("accounting.tx %d == ports' tx_packets %d" % (acc["tx"], tx), acc["tx"] == tx)
    expect("accounting.dropped.drops %d == drops.* %d" % (acc["dropped"]["drops"], drops),
           acc["dropped"]["drops"] == drops)
    expect("accounting.dropped.link %d == link.*.dropped_* %d" % (acc["dropped"]["link"], link),
           acc["dropped"]["link"] == link)
    expect("accounted: rx %d + originated %d (%s) == tx %d + drops %d + link drops %d + "
           "consumed %d (%s) + held %d" % (
               rx, made, fmt_terms(acc["originated"]), tx, drops, link, consumed,
               fmt_terms(acc["consumed"]), held),
           rx + made == tx + drops + link + consumed + held)
    expect("nothing held at exit: %s" % fmt_terms(acc["held"]), held == 0)
    sl = doc.get("satlink")
    if sl is None:
        expect("no satlink: nothing originated or consumed (%d, %d)" % (made, consumed),
               made == 0 and consumed == 0)
        return
    ctr = sl["counters"]
    for k, v in doc["drops"].items():
        if k.startswith("satlink_"):
            c = ctr.get(k[len("satlink_"):])
            expect("drops.%s %d == satlink.counters.%s %s" % (k, v, k[len("satlink_"):], c),
                   c == v)
    sess = sl["sessions"]
    ctrl = sum(s["frames_tx_ctrl"] for s in sess)
    expect("control frames made %d == sessions' frames_tx_ctrl %d" % (
        acc["originated"]["satlink_ctrl_frames"], ctrl),
        acc["originated"]["satlink_ctrl_frames"] == ctrl)
    data = sum(s["frames_tx_data"] + s["pacer_held"] for s in sess) + ctr["pacer_full"]
    expect("DATA frames made %d == sessions' frames_tx_data + pacer_held + pacer_full %d" % (
        acc["originated"]["satlink_data_frames"], data),
        acc["originated"]["satlink_data_frames"] == data)


def fmt_terms(d):
    return ", ".join("%s %d" % kv for kv in d.items()) or "-"


def check(a):
    doc = load(a.file)
    bad = []
    ok = []

    def expect(desc, cond):
        (ok if cond else bad).append(desc)

    accounting(doc, expect)

    for e in a.expect or []:
        m = EXPR.match(e)
        if not m:
            bad.append("cannot parse check '%s'" % e)
            continue
        path, op, num = m.groups()
        try:
            val = resolve(doc, path)
        except KeyError as err:
            bad.append(str(err))
            continue
        want = float(num)
        expect("%s %s %s (is %s)" % (path, op, num, val), OPS[op](total(val), want))

    if a.conserve:
        ports = doc["ports"]
        if len(ports) != 2:
            bad.append("--conserve needs two ports, have %d" % len(ports))
        else:
            p, q = ports
            drops = total(doc["drops"])
            rx = p["rx_packets"] + q["rx_packets"]
            tx = p["tx_packets"] + q["tx_packets"]
            expect("rx %d == tx %d + drops %d" % (rx, tx, drops), rx == tx + drops)
            expect("tx(%s) %d <= rx(%s) %d" % (q["name"], q["tx_packets"], p["name"],
                                               p["rx_packets"]),
                   q["tx_packets"] <= p["rx_packets"])
            expect("tx(%s) %d <= rx(%s) %d" % (p["name"], p["tx_packets"], q["name"],
                                               q["rx_packets"]),
                   p["tx_packets"] <= q["rx_packets"])
            if drops == 0:
                expect("tx(%s) %d == rx(%s) %d" % (q["name"], q["tx_packets"], p["name"],
                                                   p["rx_packets"]),
                       q["tx_packets"] == p["rx_packets"])
                expect("tx(%s) %d == rx(%s) %d" % (p["name"], p["tx_packets"], q["name"],
                                                   q["rx_packets"]),
                       p["tx_packets"] == q["rx_packets"])
    if a.dev:
        for p in doc["ports"]:
            expect("%s: dev_ipackets %d == rx_packets %d" % (p["name"], p["dev_ipackets"],
                                                            p["rx_packets"]),
                   p["dev_ipackets"] == p["rx_packets"])
            expect("%s: dev_opackets %d == tx_packets %d" % (p["name"], p["dev_opackets"],
                                                            p["tx_packets"]),
                   p["dev_opackets"] == p["tx_packets"])
            expect("%s: dev_ierrors %d + dev_oerrors %d == 0" % (p["name"], p["dev_ierrors"],
                                                                p["dev_oerrors"]),
                   p["dev_ierrors"] + p["dev_oerrors"] == 0)
    for d in ok:
        print("  ok   %s" % d)
    for d in bad:
        print("  FAIL %s" % d)
    return 1 if bad else 0


def human(v, unit):
    for pfx in ("", "k", "M", "G", "T"):
        if abs(v) < 1000 or pfx == "T":
            return "%.2f %s%s" % (v, pfx, unit)
        v /= 1000.0
    return str(v)


def summary(a):
    d = load(a.file)
    out = []
    out.append("satgw %s, %s, %d worker(s), %.1f s, policy generation %d" % (
        d.get("version", "?"), d.get("mode", "?"), d.get("workers", 0), d.get("elapsed_s", 0),
        d.get("policy_generation", 0)))
    out.append("")
    out.append("  %-6s %-15s %10s %14s %10s %14s %9s" % (
        "port", "device", "rx pkts", "rx bytes", "tx pkts", "tx bytes", "missed"))
    for p in d["ports"]:
        out.append("  %-6s %-15s %10d %14d %10d %14d %9d" % (
            p["name"], p["device"], p["rx_packets"], p["rx_bytes"], p["tx_packets"],
            p["tx_bytes"], p["dev_imissed"]))
    out.append("")
    out.append("  %-10s %10s %14s" % ("class", "packets", "bytes"))
    for name, c in d["classes"].items():
        if c["packets"]:
            out.append("  %-10s %10d %14d" % (name, c["packets"], c["bytes"]))
    mal = {k: v for k, v in d.get("malformed", {}).items() if v}
    if mal:
        out.append("  malformed: " + ", ".join("%s %d" % kv for kv in mal.items()))
    out.append("")
    out.append("  %-16s %-8s %10s %14s" % ("rule", "action", "packets", "bytes"))
    for r in d.get("rules", []):
        out.append("  %-16s %-8s %10d %14d" % (r["name"], r["action"], r["packets"], r["bytes"]))
    out.append("  %-16s %-8s %10d" % ("(no rule)", "default", d.get("unmatched", 0)))
    out.append("")
    acts = ", ".join("%s %d" % kv for kv in d.get("actions", {}).items() if kv[1])
    out.append("  actions: %s" % (acts or "none"))
    drops = {k: v for k, v in d.get("drops", {}).items() if v}
    out.append("  drops:   %s" % (", ".join("%s %d" % kv for kv in drops.items()) or "none"))
    f = d.get("flows", {})
    out.append("  flows:   %d created, %d active at exit, %d hits, %d bypassed (table full)" % (
        f.get("created", 0), f.get("active", 0), f.get("hits", 0),
        f.get("bypassed_table_full", 0)))
    h = d.get("handoff", {})
    if h.get("out") or h.get("in"):
        out.append("  handoff: %d out, %d in" % (h.get("out", 0), h.get("in", 0)))
    mp = d.get("mempool", {})
    out.append("  mbufs:   %d in use of %d at exit%s" % (
        mp.get("in_use", -1), mp.get("size", 0), "" if mp.get("in_use") == 0 else "  <-- LEAK"))
    print("\n".join(out))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("check")
    c.add_argument("file")
    c.add_argument("--expect", action="append")
    c.add_argument("--conserve", action="store_true")
    c.add_argument("--dev", action="store_true")
    g = sub.add_parser("get")
    g.add_argument("file")
    g.add_argument("path")
    s = sub.add_parser("summary")
    s.add_argument("file")
    a = ap.parse_args()
    if a.mode == "check":
        return check(a)
    if a.mode == "get":
        v = resolve(load(a.file), a.path)
        print(json.dumps(v) if isinstance(v, (dict, list)) else v)
        return 0
    return summary(a)


if __name__ == "__main__":
    sys.exit(main())
