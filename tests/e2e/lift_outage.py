#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Table and plot of lift_outage.sh (docs/experiments.md, "LIFT across one outage").

Usage: lift_outage.py OUT.png OUT.json RUN.json.d [RUN.json.d ...]
       lift_outage.py --tsg OUT.png RUN.json.d [RUN.json.d ...]

Per outage length D, sender and LIFT off/on, over the downloads (one per
outage window): the download's seconds (median, min-max), on/off of the
medians, fh's counters per download (nstat: RetransSegs, TCPTimeouts,
TCPLossUndo + TCPSpuriousRTOs), and from fh's `ss -tin` samples around the
outage (from its start to D + 6 s after): the sender's lowest cwnd and
ssthresh, its highest RTO backoff and the share of samples with a zero send window (ss
omits snd_wnd then: frozen). OUT.json keeps every download's record with
these figures (its progress trace too). The plot: bytes received against
time from the download's start, one panel per D and sender, every download
thin, without LIFT blue and with it orange, the outage shaded. A censored
download (no byte for LO_TIMEOUT s) counts with its seconds as a lower bound
and is named in the table.

--tsg: time-sequence graphs of the runs recorded with LO_PCAP=1 (the
sender's plain TCP on fh's TUN, read with tcpdump): one panel per pcap (its
run's first download), the sender's segments (dots; a segment sent again is
red), the ACK number reaching the sender (line) and the ACKs with a zero
window (the hub's FrACKs: black x), the outage shaded.
"""
import json
import os
import re
import statistics
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CONN = re.compile(r"^ESTAB\s+\d+\s+\d+\s+(\S+)\s+(\S+)")
FIELD = re.compile(r"\b(cwnd|ssthresh|backoff|snd_wnd):(\d+)")


def ss_samples(path):
    """[(wall time, local, peer, {cwnd, backoff, snd_wnd})] from an ss loop log
    (a `date +%s.%N` line before every `ss -tin`)."""
    out, t, conn = [], None, None
    with open(path) as f:
        for line in f:
            s = line.strip()
            if re.fullmatch(r"\d+\.\d+", s):
                t, conn = float(s), None
                continue
            m = CONN.match(s)
            if m:
                conn = (m.group(1), m.group(2))
                continue
            if conn is not None and t is not None and "cwnd:" in s:
                out.append((t, conn[0], conn[1], {k: int(v) for k, v in FIELD.findall(s)}))
                conn = None
    return out


def around_outage(d, samples):
    """The sender's figures from the outage's start to D + 6 s after, for the
    connection that was open at the outage (the download's)."""
    w0 = d["start_wall"] + d["window_at"] - d["clock_at_start"]
    w1 = w0 + d["outage_s"] + 6.0
    inwin = [s for s in samples if w0 - 0.5 <= s[0] <= w1]
    if not inwin:
        return None
    conn = inwin[0][1:3]
    mine = [s[3] for s in inwin if s[1:3] == conn]
    before = [s[3] for s in samples if s[1:3] == conn and s[0] < w0]
    return {"cwnd_before": before[-1].get("cwnd") if before else None,
            "cwnd_min": min(x.get("cwnd", 0) for x in mine),
            "ssthresh_min": min((x["ssthresh"] for x in mine if "ssthresh" in x), default=None),
            "backoff_max": max(x.get("backoff", 0) for x in mine),
            "frozen_share": round(sum(1 for x in mine if "snd_wnd" not in x) / len(mine), 3),
            "samples": len(mine)}


def load(dirs):
    downs, runs = [], []
    for d in dirs:
        ss = {}
        for n in os.listdir(d):
            if n.startswith("ss-") and n.endswith(".log"):
                ss[n[3:-4]] = ss_samples(os.path.join(d, n))
        for line in open(os.path.join(d, "downloads.jsonl")):
            r = json.loads(line)
            run = r["tag"].rsplit("-r", 1)[0]
            r["ss"] = around_outage(r, ss.get(run, []))
            downs.append(r)
        p = os.path.join(d, "runs.jsonl")
        if os.path.exists(p):
            runs += [json.loads(x) for x in open(p)]
    return downs, runs


def med(v):
    return statistics.median(v) if v else float("nan")


TCPDUMP = re.compile(r"^(\d+\.\d+) IP (\S+)\.(\d+) > (\S+)\.(\d+): Flags \[([^\]]*)\]"
                     r"(?:, seq (\d+)(?::(\d+))?)?(?:, ack (\d+))?, win (\d+)")


def pcap_events(path):
    """[(t, from_sender, seq_start, seq_end, ack, win)] from tcpdump -S, for
    the end that sent the most payload (the server) and the ACKs toward it."""
    out = subprocess.run(["tcpdump", "-r", path, "-n", "-tt", "-S"], capture_output=True,
                         text=True, check=True).stdout
    ev = []
    for line in out.splitlines():
        m = TCPDUMP.match(line)
        if m:
            t, src, sp = float(m.group(1)), m.group(2), m.group(3)
            s0 = int(m.group(7)) if m.group(7) else None
            s1 = int(m.group(8)) if m.group(8) else s0
            ev.append((t, (src, sp), s0, s1, int(m.group(9)) if m.group(9) else None,
                       int(m.group(10))))
    sent = {}
    for e in ev:
        if e[2] is not None:
            sent[e[1]] = sent.get(e[1], 0) + e[3] - e[2]
    snd = max(sent, key=sent.get)   # the download's server end (the client sends a line)
    return [(t, who == snd, s0, s1, a, w) for t, who, s0, s1, a, w in ev
            if who == snd or (a is not None and 0 <= (a - ev_base(ev, snd)) % 2**32 < 2**31)]


def ev_base(ev, snd):
    return next(e[2] for e in ev if e[1] == snd and e[2] is not None and e[3] > e[2])


def tsg(out, dirs):
    panels = []
    for d in dirs:
        downs = [json.loads(x) for x in open(os.path.join(d, "downloads.jsonl"))]
        for n in sorted(os.listdir(d)):
            if not (n.startswith("tcp-") and n.endswith(".pcap")):
                continue
            run = n[4:-5]
            first = [r for r in downs if r["tag"].rsplit("-r", 1)[0] == run]
            if first:
                panels.append((first[0], pcap_events(os.path.join(d, n))))
    panels.sort(key=lambda p: (p[0]["sender"], p[0]["outage_s"], p[0]["lift"]))
    cols = 2
    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, cols, figsize=(11, 3.6 * rows), squeeze=False)
    for i, (r, ev) in enumerate(panels):
        ax = axes[i // cols][i % cols]
        t0 = r["start_wall"]
        t1 = t0 + r["seconds"] + 0.5   # this download's connection only
        ev = [e for e in ev if t0 <= e[0] <= t1]
        data = [e for e in ev if e[1] and e[2] is not None and e[3] > e[2]]
        if not data:
            continue
        base = data[0][2]
        seen, x, y, rx, ry = set(), [], [], [], []
        for t, _, s0, s1, _, _ in data:
            (rx if s0 in seen else x).append(t - t0)
            (ry if s0 in seen else y).append((s0 - base) / 1024)
            seen.add(s0)
        acks = [(t - t0, (a - base) / 1024, w) for t, snd, _, _, a, w in ev
                if not snd and a is not None and t >= t0 and a >= base]
        ax.plot(x, y, ".", ms=2.5, color="tab:blue", label="segment")
        ax.plot(rx, ry, ".", ms=6, color="tab:red", label="segment sent again")
        ax.step([a[0] for a in acks], [a[1] for a in acks], where="post", lw=0.8,
                color="tab:green", label="ACK number at the sender")
        z = [a for a in acks if a[2] == 0]
        ax.plot([a[0] for a in z], [a[1] for a in z], "kx", ms=8, label="zero window (FrACK)")
        a = r["window_at"] - r["clock_at_start"]
        ax.axvspan(a, a + r["outage_s"], color="0.85")
        ax.set_title("%s sender, outage %g s, LIFT %s: %.1f s" % (
            r["sender"], r["outage_s"], r["lift"], r["seconds"]), fontsize=9)
        ax.set_xlabel("seconds from the download's start")
        ax.set_ylabel("KB (sequence, from the first segment)")
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--tsg":
        tsg(sys.argv[2], sys.argv[3:])
        return
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    downs, runs = load(sys.argv[3:])
    keys = sorted({(r["outage_s"], r["sender"]) for r in downs})
    print("| D (s) | sender | LIFT | downloads | seconds, median [min-max] | on/off | "
          "retrans segs | timeouts | undo + spurious | cwnd before -> lowest | "
          "lowest ssthresh | backoff max | frozen share | hub freezes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for D, snd in keys:
        base = None
        for mode in ("off", "on"):
            g = [r for r in downs if (r["outage_s"], r["sender"], r["lift"]) == (D, snd, mode)]
            if not g:
                continue
            secs = [r["seconds"] for r in g]
            cens = sum(1 for r in g if r.get("censored"))
            m = med(secs)
            if mode == "off":
                base = m
            ratio = "%.2f" % (m / base) if mode == "on" and base else "-"

            def n(k):
                return "%.1f" % statistics.mean(r["fh_nstat"].get(k, 0) for r in g)

            undo = statistics.mean(r["fh_nstat"].get("TcpExtTCPLossUndo", 0) +
                                   r["fh_nstat"].get("TcpExtTCPSpuriousRTOs", 0) for r in g)
            sg = [r["ss"] for r in g if r["ss"]]
            cw = ", ".join("%s->%s" % (s["cwnd_before"], s["cwnd_min"]) for s in sg)
            bo = ", ".join(str(s["backoff_max"]) for s in sg)
            st = ", ".join(str(s["ssthresh_min"]) for s in sg)
            fr = "%.2f" % med([s["frozen_share"] for s in sg]) if sg else "-"
            fz = [x["hub_lift"]["freezes"] for x in runs
                  if (x["outage_s"], x["sender"], x["lift"]) == (D, snd, mode)]
            print("| %g | %s | %s | %s | %.2f [%.2f-%.2f] | %s | %s | %s | %.1f | %s | %s | %s | %s | %s |"
                  % (D, snd, mode, "%d (%d censored)" % (len(g), cens) if cens else len(g),
                     m, min(secs), max(secs), ratio, n("TcpRetransSegs"),
                     n("TcpExtTCPTimeouts"), undo, cw, st, bo, fr, ",".join(map(str, fz)) or "-"))
    with open(sys.argv[2], "w") as f:
        json.dump({"downloads": downs, "runs": runs}, f, indent=0)
    senders = sorted({k[1] for k in keys})
    ds = sorted({k[0] for k in keys})
    fig, axes = plt.subplots(len(ds), len(senders), figsize=(5.5 * len(senders), 3.2 * len(ds)),
                             squeeze=False, sharex=True)
    for i, D in enumerate(ds):
        for j, snd in enumerate(senders):
            ax = axes[i][j]
            for mode, col in (("off", "tab:blue"), ("on", "tab:orange")):
                first = True
                for r in downs:
                    if (r["outage_s"], r["sender"], r["lift"]) != (D, snd, mode):
                        continue
                    x = [p[0] for p in r["trace"]]
                    y = [p[1] / 1024 for p in r["trace"]]
                    ax.step(x, y, where="post", color=col, lw=0.9, alpha=0.8,
                            label=("LIFT " + mode) if first else None)
                    first = False
            g = [r for r in downs if (r["outage_s"], r["sender"]) == (D, snd)]
            if g:
                a = g[0]["window_at"] - g[0]["clock_at_start"]
                ax.axvspan(a, a + D, color="0.85", label="outage (forward)")
            ax.set_title("%s sender, outage %g s" % (snd, D), fontsize=9)
            ax.grid(alpha=0.3)
            if i == len(ds) - 1:
                ax.set_xlabel("seconds from the download's start")
            if j == 0:
                ax.set_ylabel("KB received at mh")
            if i == 0 and j == 0:
                ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)


if __name__ == "__main__":
    main()
