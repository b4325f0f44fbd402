#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Numbers and figures of xcp_experiment.sh (docs/xcp.md "XCP experiments").

  xcp_analyze.py OUTDIR [IMGDIR]

Reads OUTDIR/{xcp,droptail}-SCENARIO-{recv,series}.json, writes
OUTDIR/xcp_results.json and, with IMGDIR, xcp_a.png, xcp_b.png, xcp_c.png.
Capacity: the XCP stage's (IP bits/s; satlink's 10 Mbit/s less framing).
"""
import glob
import json
import os
import sys

CAP_DEFAULT = 10e6 * 1400 / 1436


def load(p):
    with open(p) as f:
        return json.load(f)


def jain(xs):
    xs = list(xs)
    s2 = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * s2) if s2 > 0 else 0.0


def series_rate(recv, fid, step=1.0):
    """Goodput of a flow in bit/s per `step` s: (times, rates)."""
    b = recv["bin_s"]
    v = recv["flows"].get(fid, [])
    k = max(1, int(round(step / b)))
    ts, rs = [], []
    for i in range(0, len(v) - k + 1, k):
        ts.append((i + k / 2) * b)
        rs.append(sum(v[i:i + k]) * 8 / (k * b))
    return ts, rs


def mean_rate(recv, fid, a, b_):
    b = recv["bin_s"]
    v = recv["flows"].get(fid, [])
    return sum(v[int(a / b):int(b_ / b)]) * 8 / (b_ - a)


def queue_pkts(rec):
    s = rec.get("sl") or {}
    return s.get("queue_held", 0) + s.get("pacer_held", 0)


def main():
    out = sys.argv[1]
    img = sys.argv[2] if len(sys.argv) > 2 else None
    cap = CAP_DEFAULT
    if os.path.exists(out + "/xcp-hub.json"):
        cap = load(out + "/xcp-hub.json")["xcp"]["link"]["capacity_bps"]
    res = {"capacity_bps": cap}
    # ---- (a)
    a = {}
    for gw in ("xcp", "droptail"):
        p = "%s/%s-a-recv.json" % (out, gw)
        if not os.path.exists(p):
            continue
        r, s = load(p), load("%s/%s-a-series.json" % (out, gw))
        n = len(r["flows"]["1"]) * r["bin_s"]
        t_a, t_b = n / 2, n - 2
        qs = [queue_pkts(x) for x in s if t_a <= x["t"] < t_b]
        qx = [(x.get("xcp") or {}).get("queue_bytes") for x in s if t_a <= x["t"] < t_b]
        qx = [q for q in qx if q is not None]
        a[gw] = {"window_s": [t_a, t_b], "utilisation": mean_rate(r, "1", t_a, t_b) / cap,
                 "utilisation_0_10s": mean_rate(r, "1", 0, 10) / cap,
                 "satlink_queue_pkts_mean": sum(qs) / len(qs) if qs else None,
                 "satlink_queue_pkts_max": max(qs) if qs else None,
                 "xcp_queue_bytes_mean": sum(qx) / len(qx) if qx else None,
                 "cwnd_xcp_mean": None}
        cw = [v for x in s if t_a <= x["t"] < t_b for v in (x.get("cwnd") or {}).values()]
        if cw:
            a[gw]["cwnd_xcp_mean"] = sum(cw) / len(cw)
    res["a"] = a
    # ---- (b)
    b = {}
    sched = {"1": (0, 50), "2": (5, 50), "3": (10, 45), "4": (15, 40)}
    events = [5, 10, 15, 40, 45]
    for kind in ("b-xcp", "b-cubic"):
        p = "%s/xcp-%s-recv.json" % (out, kind)
        if not os.path.exists(p):
            continue
        r = load(p)
        act = lambda t: [f for f, (s0, s1) in sched.items() if s0 <= t and t + 1 <= s1]  # noqa
        jt = []
        for t in range(0, 50):
            fs = act(t)
            if len(fs) >= 2:
                jt.append((t, jain(mean_rate(r, f, t, t + 1) for f in fs)))
        conv = {}
        for i, e in enumerate(events):
            nxt = events[i + 1] if i + 1 < len(events) else 50
            c = None
            for t, j in jt:
                if e <= t < nxt and j >= 0.95:
                    c = t + 1 - e
                    break
            conv[str(e)] = c
        four = [mean_rate(r, f, 25, 40) for f in sorted(sched)]
        b[kind] = {"jain_1s": jt, "convergence_s_to_jain_0.95": conv,
                   "rates_25_40_bps": four, "jain_25_40": jain(four),
                   "jain_1s_min_25_40": min(j for t, j in jt if 25 <= t < 40),
                   "utilisation_25_40": sum(four) / cap}
    res["b"] = b
    # ---- (c)
    c = []
    for p in sorted(glob.glob(out + "/xcp-c-*-recv.json")):
        k = int(os.path.basename(p).split("-")[2])
        r = load(p)
        n = len(next(iter(r["flows"].values()))) * r["bin_s"]
        t_a, t_b = 5.0, n - 2
        x = sum(mean_rate(r, str(i), t_a, t_b) for i in range(1, k + 1))
        y = sum(mean_rate(r, str(100 + i), t_a, t_b) for i in range(1, k + 1))
        c.append({"run": os.path.basename(p)[:-10], "k": k, "window_s": [t_a, t_b],
                  "xcp_bps": x, "cubic_bps": y, "fairness_level": (x / (x + y)) / 0.5,
                  "utilisation": (x + y) / cap})
    res["c"] = c
    with open(out + "/xcp_results.json", "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps({k: v for k, v in res.items() if k != "b"}, indent=1))
    for k, v in b.items():
        print(k, {kk: vv for kk, vv in v.items() if kk != "jain_1s"})
    if not img:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    if a:
        fig, ax = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        for gw in a:
            r, s = load("%s/%s-a-recv.json" % (out, gw)), load("%s/%s-a-series.json" % (out, gw))
            ts, rs = series_rate(r, "1")
            ax[0].plot(ts, [x / 1e6 for x in rs], label="CUBIC-XCP, %s gateway" % gw)
            ax[1].plot([x["t"] for x in s], [queue_pkts(x) for x in s], label=gw)
        ax[0].axhline(cap / 1e6, color="grey", ls=":", label="capacity")
        ax[0].set_ylabel("goodput (Mbit/s)")
        ax[1].set_ylabel("hub satlink queue (packets)")
        ax[1].set_xlabel("time (s)")
        ax[0].legend()
        ax[1].legend()
        fig.suptitle("(a) one CUBIC-XCP flow, 10 Mbit/s GEO link, XCP vs drop-tail gateway")
        fig.tight_layout()
        fig.savefig(img + "/xcp_a.png", dpi=90)
    if b:
        fig, ax = plt.subplots(len(b), 1, figsize=(8, 3.2 * len(b)), sharex=True, squeeze=False)
        for i, kind in enumerate(b):
            r = load("%s/xcp-%s-recv.json" % (out, kind))
            for f in sorted(sched):
                ts, rs = series_rate(r, f)
                ax[i][0].plot(ts, [x / 1e6 for x in rs], label="flow %s" % f)
            ax[i][0].set_ylabel("Mbit/s")
            ax[i][0].set_title("(b) four %s flows (1 s bins)" % (
                "CUBIC-XCP, XCP gateway" if kind == "b-xcp" else "plain CUBIC"))
            ax[i][0].legend(fontsize=7)
        ax[-1][0].set_xlabel("time (s)")
        fig.tight_layout()
        fig.savefig(img + "/xcp_b.png", dpi=90)
    if c:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.scatter([x["k"] for x in c], [x["fairness_level"] for x in c])
        ax.axhspan(0.95, 1.05, color="green", alpha=0.15)
        ax.axhspan(0.9, 1.1, color="green", alpha=0.07)
        ax.set_xlabel("k (k CUBIC-XCP vs k CUBIC)")
        ax.set_ylabel("fairness level of CUBIC-XCP")
        ax.set_title("(c) inter-fairness, one point per run")
        fig.tight_layout()
        fig.savefig(img + "/xcp_c.png", dpi=90)


if __name__ == "__main__":
    main()
