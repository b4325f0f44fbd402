#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Scenario (c) of xcp_experiment.sh: k CUBIC-XCP against k CUBIC, many runs.

  xcp_analyze_c.py OUTDIR [IMGDIR] [--from S] [--cap BPS]

Reads OUTDIR/GW-c-K-R-{recv,series}.json for every GW (xcp2q: the shaper with
separate queues; xcp2qv1, xcp2qv2: the same with earlier rules, docs/xcp.md's
batches A and B (runs renamed by hand); xcp1q: the same shaper with one queue;
xcp: satlink's queue).
Per run, over [S (10), end - 2 s]: the fairness level of the CUBIC-XCP flows
(the seed's definition: their share of the goodput / k / 2k), the goodput
utilisation (TCP goodput / the stage's IP capacity; at most ~0.96 with
1448- and 1428-byte segments in 1500-byte packets), and for the shaper runs
the link utilisation (IP bytes the shaper sent, from the hub's per-class
rates, / capacity) and the mean weight. Writes OUTDIR/xcp_c_results.json,
prints the seed's Table I bins per GW and, with IMGDIR, draws xcp_c.png.
Also, for runs of plain CUBIC flows (GW-a-cubic, GW-b-cubic: the legacy mode),
utilisation, Jain's index and the queue, written under "plain" and plotted in
xcp_legacy.png.
"""
import glob
import json
import os
import sys


def load(p):
    with open(p) as f:
        return json.load(f)


def mean_rate(recv, fid, a, b_):
    b = recv["bin_s"]
    v = recv["flows"].get(fid, [])
    return sum(v[int(a / b):int(b_ / b)]) * 8 / (b_ - a)


def bins(levels):
    good = sum(1 for x in levels if 0.95 <= x <= 1.05)
    ok = sum(1 for x in levels if 0.9 <= x < 0.95 or 1.05 < x <= 1.1)
    return {"[0.95,1.05]": good, "[0.9,0.95)|(1.05,1.1]": ok,
            "<0.9|>1.1": len(levels) - good - ok}


def jain(xs):
    xs = list(xs)
    s2 = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * s2) if s2 > 0 else 0.0


def plain_runs(out, img, cap_arg=None):
    """(a) and (b) with plain CUBIC senders (GW legacy: the stage clamps their ACKs;
    GW droptail: satlink's queue alone, whose hub reports no XCP capacity: --cap
    gives the one to compare with, else the configured frame's share)."""
    res = {}
    sched = {"1": (0, 50), "2": (5, 50), "3": (10, 45), "4": (15, 40)}
    for p in sorted(glob.glob(out + "/*-a-cubic-recv.json")) + \
            sorted(glob.glob(out + "/*-b-cubic-recv.json")):
        name = os.path.basename(p)[:-len("-recv.json")]
        gw = name.split("-")[0]
        hub = load("%s/%s-hub.json" % (out, gw)) if os.path.exists(
            "%s/%s-hub.json" % (out, gw)) else None
        cap = (hub or {}).get("xcp", {}).get("link", {}).get("capacity_bps") or cap_arg or \
            10e6 * 1400 / 1436
        r = load(p)
        s = load("%s/%s-series.json" % (out, name))
        if "-a-" in name:
            n = len(r["flows"]["1"]) * r["bin_s"]
            t_a, t_b = n / 2, n - 2
            qs = [(q.get("sl") or {}).get("queue_held", 0) + (q.get("sl") or {}).get(
                "pacer_held", 0) for q in s if t_a <= q["t"] < t_b]
            res[name] = {"window_s": [t_a, t_b],
                         "utilisation": mean_rate(r, "1", t_a, t_b) / cap,
                         "satlink_queue_pkts_mean": sum(qs) / len(qs) if qs else None,
                         "satlink_queue_pkts_max": max(qs) if qs else None}
        else:
            fids = ["10%s" % f if "10%s" % f in r["flows"] else f for f in sorted(sched)]
            four = [mean_rate(r, f, 25, 40) for f in fids]
            jt = []
            for t in range(16, 40):
                jt.append(jain(mean_rate(r, f, t, t + 1) for f in fids))
            res[name] = {"rates_25_40_bps": four, "jain_25_40": jain(four),
                         "jain_1s_min_25_40": min(jt[9:]), "utilisation_25_40": sum(four) / cap}
    if res and img:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(len(res), 1, figsize=(8, 3.2 * len(res)), squeeze=False)
        for i, name in enumerate(res):
            r = load("%s/%s-recv.json" % (out, name))
            for f in sorted(r["flows"]):
                b = r["bin_s"]
                v = r["flows"][f]
                k = max(1, int(round(1.0 / b)))
                ts = [(j + k / 2) * b for j in range(0, len(v) - k + 1, k)]
                rs = [sum(v[j:j + k]) * 8 / (k * b) / 1e6 for j in range(0, len(v) - k + 1, k)]
                ax[i][0].plot(ts, rs, label="flow %s" % f)
            ax[i][0].set_ylabel("Mbit/s")
            how = ("the hub in XCP legacy mode" if name.startswith("legacy")
                   else "satlink's queue without XCP")
            ax[i][0].set_title("%s: plain CUBIC, %s (1 s bins)" % (name, how), fontsize=10)
            ax[i][0].legend(fontsize=7)
        ax[-1][0].set_xlabel("time (s)")
        fig.tight_layout()
        fig.savefig(img + "/xcp_legacy.png", dpi=90)
    return res


def main():
    args = sys.argv[1:]
    t_from, cap_arg = 10.0, None
    pos = []
    while args:
        if args[0] == "--from":
            t_from = float(args[1])
            args = args[2:]
        elif args[0] == "--cap":
            cap_arg = float(args[1])
            args = args[2:]
        else:
            pos.append(args.pop(0))
    out = pos[0]
    img = pos[1] if len(pos) > 1 else None
    runs = []
    for p in sorted(glob.glob(out + "/*-c-*-recv.json")):
        name = os.path.basename(p)[:-len("-recv.json")]
        gw, _, k, tag = name.rsplit("-", 3)
        k = int(k)
        r = load(p)
        hub = "%s/%s-hub.json" % (out, gw)
        cap = cap_arg
        if cap is None:
            cap = 9e6 if gw.startswith(("xcp2q", "xcp1q")) else \
                load(hub)["xcp"]["link"]["capacity_bps"]
        n = len(next(iter(r["flows"].values()))) * r["bin_s"]
        t_a, t_b = t_from, n - 2
        x = sum(mean_rate(r, str(i), t_a, t_b) for i in range(1, k + 1))
        y = sum(mean_rate(r, str(100 + i), t_a, t_b) for i in range(1, k + 1))
        run = {"gw": gw, "run": name, "k": k, "window_s": [t_a, t_b], "xcp_bps": x,
               "cubic_bps": y, "fairness_level": (x / (x + y)) / 0.5,
               "utilisation_goodput": (x + y) / cap}
        sp = "%s/%s-series.json" % (out, name)
        if os.path.exists(sp):
            s = [q.get("xcp") or {} for q in load(sp) if t_a <= q["t"] < t_b]
            s = [q for q in s if "q_xcp_sent_bps" in q]
            if s and any(float(q.get("separate_queues", 0)) for q in s):
                sent = [float(q["q_xcp_sent_bps"]) + float(q["q_other_sent_bps"]) for q in s]
                run["utilisation_link"] = sum(sent) / len(sent) / cap
                run["weight_mean"] = sum(float(q["q_xcp_weight"]) for q in s) / len(s)
                run["xcp_queue_bytes_mean"] = sum(float(q["q_xcp_queue_bytes"])
                                                  for q in s) / len(s)
                run["other_queue_bytes_mean"] = sum(float(q["q_other_queue_bytes"])
                                                    for q in s) / len(s)
        runs.append(run)
    summary = {}
    for gw in sorted({r["gw"] for r in runs}):
        rs = [r for r in runs if r["gw"] == gw]
        lv = [r["fairness_level"] for r in rs]
        per_k = {}
        for k in sorted({r["k"] for r in rs}):
            kl = [r["fairness_level"] for r in rs if r["k"] == k]
            ku = [r["utilisation_goodput"] for r in rs if r["k"] == k]
            kl2 = [r["utilisation_link"] for r in rs if r["k"] == k and "utilisation_link" in r]
            per_k[k] = {"runs": len(kl), "level_mean": sum(kl) / len(kl),
                        "level_min": min(kl), "level_max": max(kl),
                        "goodput_util_mean": sum(ku) / len(ku),
                        "link_util_mean": sum(kl2) / len(kl2) if kl2 else None}
        summary[gw] = {"runs": len(rs), "table_I": bins(lv), "per_k": per_k}
    res = {"from_s": t_from, "runs": runs, "summary": summary,
           "plain": plain_runs(out, img, cap_arg)}
    with open(out + "/xcp_c_results.json", "w") as f:
        json.dump(res, f, indent=1)
    for r in runs:
        print("%-16s k=%-2d level %.3f goodput util %.3f%s" % (
            r["run"], r["k"], r["fairness_level"], r["utilisation_goodput"],
            "" if "utilisation_link" not in r else
            "  link util %.3f  w %.3f  qx %.0f kB qo %.0f kB" % (
                r["utilisation_link"], r["weight_mean"], r["xcp_queue_bytes_mean"] / 1e3,
                r["other_queue_bytes_mean"] / 1e3)))
    print(json.dumps(summary, indent=1))
    print(json.dumps(res["plain"], indent=1))
    if not img or not runs:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    label = {"xcp2q": "separate queues, batch C (as built)",
             "xcp2qv1": "separate queues, batch A (first capacity rule)",
             "xcp2qv2": "separate queues, batch B (flows of one interval)",
             "xcp1q": "one queue (the same shaper)",
             "xcp": "one queue (satlink's)"}
    mark = {"xcp2q": "o", "xcp2qv1": "^", "xcp2qv2": "s", "xcp1q": "x", "xcp": "+"}
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
    for gw in summary:
        rs = [r for r in runs if r["gw"] == gw]
        off = {"xcp2q": 0.0, "xcp2qv1": -0.24, "xcp2qv2": -0.12, "xcp1q": 0.12,
               "xcp": -0.36}.get(gw, 0.0)
        ax[0].scatter([r["k"] + off for r in rs], [r["fairness_level"] for r in rs],
                      marker=mark.get(gw, "o"), label="%s, %d runs" % (label.get(gw, gw),
                                                                       len(rs)))
        ax[1].scatter([r["k"] + off for r in rs], [r["utilisation_goodput"] for r in rs],
                      marker=mark.get(gw, "o"), label=label.get(gw, gw))
        for r in rs:
            # The host stalled the hub (the shaper sent < 0.6 C over the run).
            if r.get("utilisation_link", 1.0) < 0.6:
                ax[0].annotate("host stall", (r["k"] + off, r["fairness_level"]),
                               fontsize=6, xytext=(4, -3), textcoords="offset points")
    ax[0].axhspan(0.95, 1.05, color="green", alpha=0.15)
    ax[0].axhspan(0.9, 1.1, color="green", alpha=0.07)
    ax[0].set_xlabel("k (k CUBIC-XCP vs k CUBIC)")
    ax[0].set_ylabel("fairness level of CUBIC-XCP")
    ax[0].set_title("(c) inter-fairness, one point per run", fontsize=10)
    ax[0].legend(fontsize=7)
    ax[1].set_xlabel("k")
    ax[1].set_ylabel("goodput / capacity")
    ax[1].set_ylim(0, 1)
    ax[1].set_title("utilisation (TCP goodput; at most ~0.96)", fontsize=10)
    fig.tight_layout()
    fig.savefig(img + "/xcp_c.png", dpi=90)


if __name__ == "__main__":
    main()
