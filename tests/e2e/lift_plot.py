#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seed 000's Fig. 6-8 from lift_experiment.sh's JSON (docs/experiments.md, LIFT).

Usage: lift_plot.py OUT.png RUN.json [RUN.json ...]

Also writes OUT.json (OUT.png with .json): every run's record with the ss
figures added (cwnd_collapses, frozen_samples, ss_samples), so the table can be
made again without the runs' ss logs.

One column per (sender, hub timer) found in the runs; rows: mean page download
time, fixed-host TCP timeouts per page (TcpExtTCPTimeouts) with the loss-recovery
counters beside them in the table, uplink bytes per page. x is T_good, one colour
per T_bad, solid with LIFT, dashed without (the seed's figures). Prints the
table docs/experiments.md carries (markdown), and the LIFT/no-LIFT ratios.
"""
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


CWND = re.compile(r"\bcwnd:(\d+)")
PEER = re.compile(r"^\S+\s+\d+\s+\d+\s+(\S+)\s+(\S+)")


def ss_stats(ss_log):
    """From the sender's ss -tin samples: (cwnd collapses, frozen samples,
    samples). A collapse is a connection's cwnd falling to 2 or less from above
    4: what an RTO does to a Linux sender, counted or not (an RTO while the
    peer's window is zero enters loss without TcpExtTCPTimeouts). A frozen
    sample is one whose send window is zero: ss prints no snd_wnd field then
    (iproute2 omits the zero), so it is a sample without one."""
    last, n, frozen, samples, conn = {}, 0, 0, 0, None
    with open(ss_log) as f:
        for line in f:
            m = PEER.match(line)
            if m and not line.startswith("State"):
                conn = (m.group(1), m.group(2))
                continue
            c = CWND.search(line)
            if c and conn is not None:
                samples += 1
                if "snd_wnd:" not in line:
                    frozen += 1
                w = int(c.group(1))
                if w <= 2 and last.get(conn, 0) > 4:
                    n += 1
                last[conn] = w
                conn = None
    return n, frozen, samples


def load(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            got = json.load(f)
        for r in got:
            tag = "tg%g-tb%g-%s-%s" % (r["t_good_s"], r["t_bad_s"], r["sender"], r["lift"])
            ss = os.path.join(p + ".d", "ss-%s.log" % tag)
            if os.path.exists(ss):
                r["cwnd_collapses"], r["frozen_samples"], r["ss_samples"] = ss_stats(ss)
            else:
                r["cwnd_collapses"] = r["frozen_samples"] = r["ss_samples"] = None
        recs.extend(got)
    return recs


def per_page(r, key):
    return r["fh_nstat"].get(key, 0) / max(r["pages"], 1)


def main():
    out, paths = sys.argv[1], sys.argv[2:]
    recs = load(paths)
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(recs, f, indent=1)
    cols = sorted({(r["sender"], r.get("timer", "fixed")) for r in recs})
    tbads = sorted({r["t_bad_s"] for r in recs})
    rows = [("mean page download time (s)", lambda r: r["mean_page_s"]),
            ("fixed host TCP timeouts per page", lambda r: per_page(r, "TcpExtTCPTimeouts")),
            ("uplink bytes per page", lambda r: r["mean_uplink_bytes"]),
            ("sender cwnd collapses per page (ss -ti)",
             lambda r: (r["cwnd_collapses"] or 0) / max(r["pages"], 1))]
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(5.5 * len(cols), 13), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ci, (snd, timer) in enumerate(cols):
        for ri, (label, fn) in enumerate(rows):
            ax = axes[ri][ci]
            for ti, tb in enumerate(tbads):
                for lift, style in (("on", "-"), ("off", "--")):
                    pts = sorted((r["t_good_s"], fn(r)) for r in recs
                                 if (r["sender"], r.get("timer", "fixed")) == (snd, timer) and
                                 r["t_bad_s"] == tb and r["lift"] == lift)
                    if not pts:
                        continue
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                            color=colours[ti % len(colours)],
                            label="T_bad %g s, LIFT %s" % (tb, lift))
            if ri == 0:
                ax.set_yscale("log")   # one urban point (T_good 1, T_bad 2) takes minutes
            ax.set_xlabel("T_good (s)")
            ax.set_ylabel(label)
            if ri == 0:
                ax.set_title("%s sender, hub timer %s" % (snd, timer))
            ax.grid(True, alpha=0.3)
            if ri == 0 and ci == 0:
                ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=90)

    print("| sender, timer | T_good/T_bad (s) | page s off / on | on/off | "
          "timeouts/page off / on | cwnd collapses/page off / on | "
          "sender frozen (share of ss samples) on | "
          "retransmitted segs/page off / on | loss-undo+spurious/page off / on | "
          "uplink B/page off / on |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = {}
    for snd, timer in cols:
        pts = sorted({(r["t_good_s"], r["t_bad_s"]) for r in recs
                      if (r["sender"], r.get("timer", "fixed")) == (snd, timer)}, key=lambda p: (p[1], p[0]))
        for tg, tb in pts:
            by = {r["lift"]: r for r in recs if (r["sender"], r.get("timer", "fixed")) == (snd, timer) and
                  (r["t_good_s"], r["t_bad_s"]) == (tg, tb)}
            if "on" not in by or "off" not in by:
                continue
            off, on = by["off"], by["on"]
            ratio = on["mean_page_s"] / off["mean_page_s"]
            ratios.setdefault((snd, timer, tb), []).append(ratio)

            def undo(r):
                return per_page(r, "TcpExtTCPLossUndo") + per_page(r, "TcpExtTCPSpuriousRTOs")

            def coll(r):
                c = r["cwnd_collapses"]
                return "-" if c is None else "%.2f" % (c / max(r["pages"], 1))

            def frz(r):
                if not r.get("ss_samples"):
                    return "-"
                return "%.2f" % (r["frozen_samples"] / r["ss_samples"])

            print("| %s, %s | %g/%g | %.2f / %.2f | %.2f | %.2f / %.2f | %s / %s | %s | %.1f / %.1f "
                  "| %.2f / %.2f | %d / %d |" % (
                      snd, timer, tg, tb, off["mean_page_s"], on["mean_page_s"], ratio,
                      per_page(off, "TcpExtTCPTimeouts"), per_page(on, "TcpExtTCPTimeouts"),
                      coll(off), coll(on), frz(on),
                      per_page(off, "TcpRetransSegs"), per_page(on, "TcpRetransSegs"),
                      undo(off), undo(on), off["mean_uplink_bytes"], on["mean_uplink_bytes"]))
    print()
    for (snd, timer, tb), rs in sorted(ratios.items()):
        print("%s, %s, T_bad %g: page time with/without LIFT, mean of %d points: %.2f" % (
            snd, timer, tb, len(rs), sum(rs) / len(rs)))


if __name__ == "__main__":
    main()
