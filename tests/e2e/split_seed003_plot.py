#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers and plots for split_seed003.sh (seed 003 on the testbed, issue 10).

  split_seed003_plot.py ge-mean --seed S --at T
      the mean_s of a Gilbert-Elliott first state that makes the emulator's
      forward chain (link.seed S) leave it exactly T s after the emulator
      started: T / E1, E1 = -ln(u) with u the chain stream's first draw
      (splitmix64 + xoshiro256**, as lib/sgw_linkem.c).
  split_seed003_plot.py wait-clock EMU_PREFIX W
      wait until the emulator's model clock (forward good_ns + bad_ns) is at
      least W s (600 s at most); print the clock in s.
  split_seed003_plot.py sample HUB_PREFIX EMU_PREFIX OUT.jsonl
      every 100 ms: the hub's /satgw/split gauges and counters and the
      emulator's forward clock and drops, one JSON line each, until killed.
  split_seed003_plot.py record --chan ... --out REC.json
      one run's record from the files split_seed003.sh collected.
  split_seed003_plot.py merge OUT.json REC.json...
  split_seed003_plot.py plot IN.json IMG_PREFIX
      IMG_PREFIX_occupancy.png, _cwnd.png, _delivered.png; a table on stdout.
"""
import json
import math
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
M64 = (1 << 64) - 1
SPLIT_KEYS = ("relay_occ_rx", "relay_occ_tx", "acks_withheld", "anti_freeze", "relay_clipped",
              "data_bytes_out", "credit_stall", "sat_stall", "rto_refresh", "zero_windows")


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


def xo_next(s):
    r = (rotl((s[1] * 5) & M64, 7) * 9) & M64
    t = (s[1] << 17) & M64
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = rotl(s[3], 45)
    return r


def ge_draws(seed, n):
    """The forward chain's first n exponential draws (E = -ln u, u in (0, 1])."""
    x, s = seed, []
    for _ in range(4):
        x, v = splitmix64(x)
        s.append(v)
    if not any(s):
        s[0] = 1
    return [-math.log(((xo_next(s) >> 11) + 1) * 2.0 ** -53) for _ in range(n)]


def telemetry(prefix):
    sys.path.insert(0, HERE)
    from sgwtel import Telemetry
    return Telemetry(prefix)


def clock_s(link):
    f = link["forward"]
    return (f["good_ns"] + f["bad_ns"]) / 1e9


def cmd_wait_clock(prefix, w):
    deadline = time.monotonic() + 600
    with telemetry(prefix) as t:
        while True:
            c = clock_s(t.cmd("/satgw/link"))
            if c >= w or time.monotonic() > deadline:
                print("%.3f" % c)
                return
            time.sleep(min(0.5, max(0.01, w - c)))


def cmd_sample(hub, emu, out):
    f = open(out, "a")
    with telemetry(hub) as th, telemetry(emu) as te:
        while True:
            t = time.time()
            d = th.cmd("/satgw/split")
            link = te.cmd("/satgw/link")
            rec = {"t": round(t, 3)}
            for k in SPLIT_KEYS:
                if k in d:
                    rec[k] = d[k]
            fw = link["forward"]
            rec["clock"] = round(clock_s(link), 3)
            rec["bad_ns"] = fw["bad_ns"]
            f.write(json.dumps(rec) + "\n")
            f.flush()
            time.sleep(max(0.0, 0.1 - (time.time() - t)))


SS_FIELDS = {"cwnd": int, "ssthresh": int, "rto": float, "snd_wnd": int, "bytes_acked": int,
             "backoff": int, "unacked": int, "retrans": str, "lost": int}


def parse_ss(path):
    """ss -tin samples: [{t, cwnd, rto, snd_wnd (0 when ss omits it), ...}]."""
    out, t, cur = [], None, None
    for line in open(path, errors="replace"):
        line = line.strip()
        if re.match(r"^\d+\.\d+$", line):
            t = float(line)
            continue
        if t is None or not line:
            continue
        if line.startswith("ESTAB") or line.startswith("FIN-WAIT") or line.startswith("State"):
            continue
        if "cwnd:" not in line:
            continue
        rec = {"t": t}
        for tok in line.split():
            if ":" not in tok:
                continue
            k, v = tok.split(":", 1)
            if k in SS_FIELDS:
                try:
                    rec[k] = SS_FIELDS[k](v.split(",")[0])
                except ValueError:
                    pass
        rec.setdefault("snd_wnd", 0)   # iproute2 omits snd_wnd when it is 0
        rec.setdefault("backoff", 0)
        out.append(rec)
    return out


def arg(name, default=None):
    a = sys.argv
    if name in a:
        return a[a.index(name) + 1]
    if default is None:
        sys.exit("missing " + name)
    return default


def cmd_record():
    t0, t1 = float(arg("--t0")), float(arg("--t1"))
    n0, n1 = json.loads(arg("--nstat0")), json.loads(arg("--nstat1"))
    nst = {k: v - n0.get(k, 0) for k, v in n1.items()}
    cli = json.load(open(arg("--client")))
    conn = cli["conns"][0]
    hub = json.load(open(arg("--hub")))
    term = json.load(open(arg("--term")))
    emu = json.load(open(arg("--emu")))
    wemu = json.load(open(arg("--wemu")))
    tel = [json.loads(l) for l in open(arg("--tel")) if l.strip()]
    ss = parse_ss(arg("--ss"))
    hc = hub["split"]["counters"]
    tc = term["split"]["counters"]
    wait, clock0 = float(arg("--wait")), float(arg("--clock0"))
    chan = arg("--chan")
    # when the channel turned clean, seen by the sampler (first sample in state 2)
    sw = [s["t"] - t0 for s in tel if s.get("bad_ns", 0) > 0]
    rec = {
        "channel": chan, "scheme": arg("--scheme"), "run": int(arg("--run")),
        "load_before": arg("--load0"), "load_after": arg("--load1"),
        "seconds": conn["seconds"], "bytes": conn["bytes"], "ok": conn["ok"],
        "wall_s": round(t1 - t0, 3),
        "emu_clock_at_start_s": clock0,
        "clean_from_s_planned": round(wait + 60 - clock0, 2) if chan == "bad60" else None,
        "clean_from_s_seen": round(sw[0], 2) if sw else None,
        "fh_nstat": nst,
        "hub_split": {k: v for k, v in hc.items() if v},
        "term_split": {k: tc[k] for k in ("relay_clipped", "credit_stall", "data_bytes_in",
                                         "anti_freeze", "acks_withheld") if k in tc},
        "emu_link": emu.get("link", {}),
        "wired_link": wemu.get("link", {}),
    }
    occ = [s["relay_occ_rx"] for s in tel if "relay_occ_rx" in s]
    rec["occ_max"] = max(occ) if occ else None
    during = [s["relay_occ_rx"] for s in tel if "relay_occ_rx" in s and s["t"] <= t1]
    rec["occ_mean"] = round(sum(during) / len(during)) if during else None
    rec["ss_frozen_share"] = round(sum(1 for s in ss if s["snd_wnd"] == 0) / len(ss), 3) if ss else None
    rec["ss_max_backoff"] = max((s["backoff"] for s in ss), default=0)
    rec["trace"] = {
        "hub": [[round(s["t"] - t0, 2), s.get("relay_occ_rx"), s.get("data_bytes_out"),
                 s.get("acks_withheld"), s.get("anti_freeze")] for s in tel],
        "hub_cols": ["t", "relay_occ_rx", "data_bytes_out", "acks_withheld", "anti_freeze"],
        "ss": [[round(s["t"] - t0, 2), s.get("cwnd"), s.get("rto"), s.get("snd_wnd"),
                s.get("backoff"), s.get("bytes_acked")] for s in ss],
        "ss_cols": ["t", "cwnd", "rto_ms", "snd_wnd", "backoff", "bytes_acked"],
    }
    json.dump(rec, open(arg("--out"), "w"))
    print("  %s %s run %s: %.2f s for %d bytes (ok %s), fh timeouts %s, retrans %s, "
          "relay_clipped %s, withheld %s, anti_freeze %s, occ max %s, load %s / %s" % (
              chan, rec["scheme"], rec["run"], rec["seconds"], rec["bytes"], rec["ok"],
              nst.get("TcpExtTCPTimeouts"), nst.get("TcpRetransSegs"), hc.get("relay_clipped"),
              hc.get("acks_withheld"), hc.get("anti_freeze"), rec["occ_max"],
              rec["load_before"], rec["load_after"]))


def cmd_merge(out, recs):
    runs = [json.load(open(r)) for r in recs]
    doc = {"experiment": "seed 003 relay-buffer control with Linux senders (split_seed003.sh)",
           "runs": runs}
    tmp = out + ".tmp"
    json.dump(doc, open(tmp, "w"), separators=(",", ":"))
    os.replace(tmp, out)


def rto_events(r):
    """The sender's RTOs seen in its ss samples (backoff rising from 0 with
    cwnd 1: a persist timer backs off too, but leaves cwnd alone), each
    with the longest pause of the hub's telemetry sampler within 1.5 s before
    it: a pause of the sampler is a pause of the machine (2 cores, shared)."""
    ss, hub = r["trace"]["ss"], r["trace"]["hub"]
    gaps = [(hub[i][0], hub[i + 1][0]) for i in range(len(hub) - 1)]
    ev, prev = [], 0
    for p in ss:
        b = p[4] or 0
        if b > 0 and prev == 0 and p[1] == 1:
            g = max([b2 - a for a, b2 in gaps if b2 >= p[0] - 1.5 and a <= p[0]], default=0)
            ev.append((p[0], round(g, 2)))
        prev = b
    return ev


def cmd_plot(inp, prefix):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = json.load(open(inp))["runs"]
    chans = [c for c in ("bad60", "bad") if any(r["channel"] == c for r in runs)]
    schemes = [s for s in ("rwnd", "petra", "ackres", "ackres200")
               if any(r["scheme"] == s for r in runs)]
    colors = {"rwnd": "tab:blue", "petra": "tab:red", "ackres": "tab:green",
              "ackres200": "tab:olive"}
    title = {"bad60": "frame loss 0.346 (BER 1e-3) for 60 s, then BER 1e-12",
             "bad": "frame loss 0.346 (BER 1e-3) throughout"}

    def first(ch, sc):
        rs = [r for r in runs if r["channel"] == ch and r["scheme"] == sc]
        return rs[0] if rs else None

    # occupancy: one panel per (channel, scheme)
    fig, axs = plt.subplots(len(chans), len(schemes), figsize=(4.2 * len(schemes), 3.2 * len(chans)),
                            squeeze=False, sharey=True)
    for i, ch in enumerate(chans):
        for j, sc in enumerate(schemes):
            ax = axs[i][j]
            r = first(ch, sc)
            if r is None:
                continue
            h = [p for p in r["trace"]["hub"] if p[1] is not None]
            ax.plot([p[0] for p in h], [p[1] / 1000 for p in h], color=colors[sc], lw=0.7)
            ax.axhline(82, color="k", ls="--", lw=0.6)
            if sc != "rwnd":
                ax.axhline(7, color="gray", ls=":", lw=0.6)
            if r.get("clean_from_s_seen"):
                ax.axvline(r["clean_from_s_seen"], color="gray", lw=0.6)
            ax.set_title("%s: %s\n%.1f s, %d timeouts, relay_clipped %d" % (
                sc.upper(), ch, r["seconds"], r["fh_nstat"].get("TcpExtTCPTimeouts", 0),
                r["hub_split"].get("relay_clipped", 0)), fontsize=8)
            ax.set_xlabel("s since connect", fontsize=8)
            if j == 0:
                ax.set_ylabel("hub relay occupancy, KB", fontsize=8)
            ax.set_ylim(0, 95)
    fig.suptitle("Seed 003 on the testbed: the hub's relay buffer (82 KB; B_th 7 KB dotted)", fontsize=9)
    fig.tight_layout()
    fig.savefig(prefix + "_occupancy.png", dpi=110)

    # the sender's cwnd and the bytes carried over the satellite
    for what, fn in (("cwnd", "_cwnd.png"), ("delivered", "_delivered.png")):
        fig, axs = plt.subplots(1, len(chans), figsize=(6 * len(chans), 3.4), squeeze=False)
        for i, ch in enumerate(chans):
            ax = axs[0][i]
            for sc in schemes:
                r = first(ch, sc)
                if r is None:
                    continue
                if what == "cwnd":
                    pts = [(p[0], p[1]) for p in r["trace"]["ss"] if p[1] is not None]
                    ax.set_ylabel("sender cwnd (segments, ss)", fontsize=8)
                else:
                    pts = [(p[0], p[2] / 1e6) for p in r["trace"]["hub"] if p[2] is not None]
                    ax.set_ylabel("MB sent over the satellite (hub)", fontsize=8)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colors[sc], lw=0.8,
                        label="%s (%.1f s, %d RTOs)" % (sc.upper(), r["seconds"],
                                                       r["fh_nstat"].get("TcpExtTCPTimeouts", 0)))
                if r.get("clean_from_s_seen"):
                    ax.axvline(r["clean_from_s_seen"], color="gray", lw=0.6)
            ax.set_title(title[ch], fontsize=9)
            ax.set_xlabel("s since connect", fontsize=8)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(prefix + fn, dpi=110)

    print("| channel | scheme | run | load | time s | timeouts | spurious RTOs | loss undo | "
          "TLPs | retrans segs | win probes | relay_clipped | withheld | anti_freeze | "
          "occ max KB | occ mean KB | frozen share | RTOs in ss (machine pause before) |")
    print("|" + "---|" * 18)
    for r in runs:
        n, h = r["fh_nstat"], r["hub_split"]
        ev = ", ".join("%.0f s (%.1f s)" % e for e in rto_events(r)) or "-"
        print("| %s | %s | %d | %s | %.1f%s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.1f | %.1f | %s | %s |" % (
            r["channel"], r["scheme"], r["run"], r["load_before"].split()[0], r["seconds"],
            "" if r["ok"] else " (RST after %d B)" % r["bytes"],
            n.get("TcpExtTCPTimeouts", 0), n.get("TcpExtTCPSpuriousRTOs", 0),
            n.get("TcpExtTCPLossUndo", 0), n.get("TcpExtTCPLossProbes", 0),
            n.get("TcpRetransSegs", 0), n.get("TcpExtTCPWinProbe", 0), h.get("relay_clipped", 0),
            h.get("acks_withheld", 0), h.get("anti_freeze", 0), (r["occ_max"] or 0) / 1000,
            (r["occ_mean"] or 0) / 1000, r["ss_frozen_share"], ev))


def main():
    c = sys.argv[1] if len(sys.argv) > 1 else ""
    if c == "ge-mean":
        e1 = ge_draws(int(arg("--seed")), 1)[0]
        print("%.9f" % (float(arg("--at")) / e1))
    elif c == "ge-draw":
        print(" ".join("%.9f" % e for e in ge_draws(int(arg("--seed")), 3)))
    elif c == "wait-clock":
        cmd_wait_clock(sys.argv[2], float(sys.argv[3]))
    elif c == "sample":
        cmd_sample(sys.argv[2], sys.argv[3], sys.argv[4])
    elif c == "record":
        cmd_record()
    elif c == "merge":
        cmd_merge(sys.argv[2], sys.argv[3:])
    elif c == "plot":
        cmd_plot(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
