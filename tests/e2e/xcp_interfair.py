#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The seed's inter-fairness distribution (seed 001, Table I): X CUBIC-XCP
against Y plain CUBIC, X and Y drawn from 1..10, many runs.

  xcp_interfair.py draw [--seed S] [--n N] [--tag T]
      print the scenario names cu-X-Y-TNN (xcp_experiment.sh) of a deterministic
      draw: random.Random(S), for run i: X = randint(1, 10), then Y = randint(1, 10).
  xcp_interfair.py analyze OUTDIR... [--from S] [--cap BPS] [--json F] [--img PNG]
      [--loadlog F] [--seed S] [--n N]
      every OUTDIR/GW-cu-X-Y-R-{recv,series}.json: per run over [S (10), end - 2 s]
      the seed's fairness level (the X flows' share of the goodput / (X / (X + Y))),
      the ratio of mean per-flow rates (XCP / CUBIC), Jain's index over all flows,
      the goodput utilisation (TCP goodput / capacity, at most ~0.96 with 1500-byte
      packets) and the link utilisation (the shaper's sent rate, from the hub's
      per-class rates / capacity), the weight, flows counted, the queues, the
      sampler's largest gap (a host stall) and, with --loadlog (lines
      "EPOCH L1 L5 L15"), the 1-min load average over the run. Table I's bins per GW
      next to the seed's. Writes --json (every run with its raw receiver bins) and
      draws --img.
"""
import glob
import json
import os
import random
import sys

SEED_TABLE_I = {"[0.95,1.05]": 52, "[0.9,0.95)|(1.05,1.1]": 45, "<0.9|>1.1": 3}


def draw(seed, n, tag):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        x = rng.randint(1, 10)
        y = rng.randint(1, 10)
        out.append("cu-%d-%d-%s%02d" % (x, y, tag, i))
    return out


def load(p):
    with open(p) as f:
        return json.load(f)


def rate(recv, fid, a, b_):
    b = recv["bin_s"]
    v = recv["flows"].get(fid, [])
    return sum(v[int(round(a / b)):int(round(b_ / b))]) * 8 / (b_ - a)


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


def jain(xs):
    xs = list(xs)
    s2 = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * s2) if s2 > 0 else 0.0


def bin_of(x):
    if 0.95 <= x <= 1.05:
        return "[0.95,1.05]"
    if 0.9 <= x < 0.95 or 1.05 < x <= 1.1:
        return "[0.9,0.95)|(1.05,1.1]"
    return "<0.9|>1.1"


def bins(levels):
    res = {k: 0 for k in SEED_TABLE_I}
    for x in levels:
        res[bin_of(x)] += 1
    return res


def analyze_run(out, p, t_from, cap, loadlog):
    name = os.path.basename(p)[:-len("-recv.json")]
    gw, _, nx, no, tag = name.rsplit("-", 4)
    nx, no = int(nx), int(no)
    r = load(p)
    n = len(next(iter(r["flows"].values()))) * r["bin_s"]
    t_a, t_b = t_from, n - 2
    xr = [rate(r, str(i), t_a, t_b) for i in range(1, nx + 1)]
    yr = [rate(r, str(100 + i), t_a, t_b) for i in range(1, no + 1)]
    x, y = sum(xr), sum(yr)
    run = {"run": name, "gw": gw, "tag": tag, "xcp_flows": nx, "cubic_flows": no,
           "flows_connected": len(r["flows"]), "window_s": [t_a, t_b],
           "xcp_bps": xr, "cubic_bps": yr,
           "fairness_level": (x / (x + y)) / (nx / (nx + no)) if x + y else None,
           "per_flow_ratio": (x / nx) / (y / no) if y else None,
           "jain_all": jain(xr + yr), "utilisation_goodput": (x + y) / cap,
           "end_epoch": os.path.getmtime(p),
           # The raw data: bytes received per flow in bins of bin_s from t0 (xcp_flows.py).
           "recv": r}
    sp = "%s/%s-series.json" % (out, name)
    if os.path.exists(sp):
        ser = load(sp)
        ts = [q["t"] for q in ser]
        run["sampler_gap_max_s"] = max((b - a for a, b in zip(ts, ts[1:])), default=None)
        s = [q.get("xcp") or {} for q in ser if t_a <= q["t"] < t_b]
        s = [q for q in s if "q_xcp_sent_bps" in q]
        if s and not any(float(q.get("separate_queues", 0)) for q in s):
            # One queue (legacy1q): no per-class rates; the controller's view instead.
            run["queue_bytes_mean"] = mean(float(q["queue_bytes"]) for q in s)
            run["xcp_input_of_capacity"] = mean(float(q["input_bps"]) for q in s) / cap
            last = s[-1]
            run["legacy_counters_end"] = {k: last[k] for k in last if k.startswith("legacy")}
            s = []
        if s:
            run["utilisation_link"] = mean(float(q["q_xcp_sent_bps"]) +
                                           float(q["q_other_sent_bps"]) for q in s) / cap
            run["weight_mean"] = mean(float(q["q_xcp_weight"]) for q in s)
            run["weight_expected"] = nx / (nx + no)
            run["flows_seen_mean"] = [mean(float(q["q_xcp_flows"]) for q in s),
                                      mean(float(q["q_other_flows"]) for q in s)]
            run["xcp_queue_bytes_mean"] = mean(float(q["q_xcp_queue_bytes"]) for q in s)
            # What each class sent against its weighted share of C (both backlogged: 1).
            run["xcp_sent_of_share"] = mean(float(q["q_xcp_sent_bps"]) for q in s) / (
                run["weight_mean"] * cap)
            run["other_sent_of_share"] = mean(float(q["q_other_sent_bps"]) for q in s) / (
                (1 - run["weight_mean"]) * cap) if run["weight_mean"] < 1 else None
            run["xcp_queue_empty_frac"] = mean(1.0 if float(q["q_xcp_queue_bytes"]) == 0
                                               else 0.0 for q in s)
            run["other_queue_bytes_mean"] = mean(float(q["q_other_queue_bytes"]) for q in s)
    if loadlog:
        # The run ended when the receiver wrote its result (mtime); it lasted n s.
        t1 = run["end_epoch"]
        ls = [l1 for (e, l1) in loadlog if t1 - n <= e <= t1]
        if ls:
            run["load1_mean"] = mean(ls)
            run["load1_min"] = min(ls)
            run["load1_max"] = max(ls)
    return run


def analyze(argv):
    t_from, cap, js, img, ll, seed, ndraw = 10.0, 9e6, None, None, None, None, None
    outs = []
    while argv:
        a = argv.pop(0)
        if a == "--from":
            t_from = float(argv.pop(0))
        elif a == "--cap":
            cap = float(argv.pop(0))
        elif a == "--json":
            js = argv.pop(0)
        elif a == "--img":
            img = argv.pop(0)
        elif a == "--loadlog":
            ll = argv.pop(0)
        elif a == "--seed":
            seed = int(argv.pop(0))
        elif a == "--n":
            ndraw = int(argv.pop(0))
        else:
            outs.append(a)
    loadlog = []
    if ll:
        with open(ll) as f:
            for line in f:
                p = line.split()
                if len(p) >= 2:
                    loadlog.append((float(p[0]), float(p[1])))
    runs = []
    for out in outs:
        for p in sorted(glob.glob(out + "/*-cu-*-recv.json")):
            runs.append(analyze_run(out, p, t_from, cap, loadlog))
    runs.sort(key=lambda r: r["end_epoch"])
    for r in runs:
        # Not the drawn scenario: a flow did not connect (connect timed out, 5 s, while
        # the host stalled) or carried nothing in the window.
        r["all_flows_ran"] = (r["flows_connected"] == r["xcp_flows"] + r["cubic_flows"] and
                              min(r["xcp_bps"] + r["cubic_bps"]) > 0)
        # The host stalled the hub: the shaper sent less than 0.6 C over the window (the
        # rule of the earlier (c) batches, docs/xcp.md).
        # One queue: the controller's input rate (what joined the queue) instead.
        r["host_stall"] = r.get("utilisation_link", r.get("xcp_input_of_capacity", 1.0)) < 0.6
    summary = {}
    sets = {"": lambda r: True, "/all_flows_ran": lambda r: r["all_flows_ran"],
            "/all_flows_ran,no_stall": lambda r: r["all_flows_ran"] and not r["host_stall"]}
    for gw, (sn, sf) in [(g, x) for g in sorted({r["gw"] for r in runs}) for x in sets.items()]:
        rs = [r for r in runs if r["gw"] == gw and sf(r)]
        if not rs:
            continue
        gw = gw + sn
        lv = [r["fairness_level"] for r in rs if r["fairness_level"] is not None]
        ug = [r["utilisation_goodput"] for r in rs]
        ul = [r["utilisation_link"] for r in rs if "utilisation_link" in r]
        summary[gw] = {"runs": len(rs), "table_I": bins(lv), "seed_table_I": SEED_TABLE_I,
                       "table_I_per_flow_ratio": bins(r["per_flow_ratio"] for r in rs),
                       "level_min": min(lv), "level_max": max(lv),
                       "level_mean": mean(lv),
                       "utilisation_goodput_mean": mean(ug),
                       "utilisation_goodput_min": min(ug),
                       "utilisation_link_mean": mean(ul),
                       "utilisation_link_min": min(ul) if ul else None}
    res = {"from_s": t_from, "capacity_bps": cap, "summary": summary, "runs": runs}
    if seed is not None:
        res["draw"] = {"seed": seed, "n": ndraw, "rule": "random.Random(seed); per run "
                       "X = randint(1, 10) then Y = randint(1, 10)"}
    for r in runs:
        print("%-24s %2d vs %-2d level %.3f (%s) ratio %.3f Jain %.3f goodput %.3f%s%s%s" % (
            r["run"], r["xcp_flows"], r["cubic_flows"], r["fairness_level"],
            bin_of(r["fairness_level"]), r["per_flow_ratio"], r["jain_all"],
            r["utilisation_goodput"],
            ("" if "queue_bytes_mean" not in r else " 1q: queue %.0f kB, input %.3f C" % (
                r["queue_bytes_mean"] / 1e3, r["xcp_input_of_capacity"])) +
            ("" if "utilisation_link" not in r else
            " link %.3f w %.3f/%.3f flows %.1f+%.1f qx %.0f kB (empty %.2f)"
            " sent/share %.3f %.3f" % (
                r["utilisation_link"], r["weight_mean"], r["weight_expected"],
                r["flows_seen_mean"][0], r["flows_seen_mean"][1],
                r["xcp_queue_bytes_mean"] / 1e3, r["xcp_queue_empty_frac"],
                r["xcp_sent_of_share"], r["other_sent_of_share"] or 0)),
            "" if r.get("sampler_gap_max_s") is None else " gap %.1f s" % r["sampler_gap_max_s"],
            "" if "load1_mean" not in r else " load %.1f" % r["load1_mean"]))
    print(json.dumps(summary, indent=1))
    for r in runs:
        if not r["all_flows_ran"] or r["host_stall"]:
            print("flagged: %s%s%s" % (r["run"], " (not all flows ran)" if not r["all_flows_ran"]
                                        else "", " (host stall)" if r["host_stall"] else ""))
    if js:
        with open(js, "w") as f:
            json.dump(res, f, separators=(",", ":"))
    if img and runs:
        plot(runs, {k: v for k, v in summary.items() if k.endswith("no_stall")}, img)


def plot(runs, summary, img):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axs = plt.subplots(2, 2, figsize=(12, 8))
    ax = [axs[0][0], axs[0][1], axs[1][0], axs[1][1]]
    labels = ["<0.90 or >1.10", "0.90-0.95 or 1.05-1.10", "0.95-1.05"]
    keys = list(SEED_TABLE_I)[::-1]
    w = 0.8 / (len(summary) + 1)
    xs = [i - 0.4 + w / 2 for i in range(3)]
    b = ax[0].bar(xs, [SEED_TABLE_I[k] / 100.0 for k in keys], w,
                  label="seed (ns-2, 1000 s), 100 runs")
    for r, k in zip(b, keys):
        ax[0].annotate(str(SEED_TABLE_I[k]), (r.get_x() + w / 2, r.get_height()),
                       ha="center", va="bottom", fontsize=7)
    for j, gw in enumerate(summary):
        n = summary[gw]["runs"]
        b = ax[0].bar([x + (j + 1) * w for x in xs],
                      [summary[gw]["table_I"][k] / n for k in keys], w,
                      label="%s, %d runs (flagged runs left out)" % (gw.split("/")[0], n))
        for r, k in zip(b, keys):
            ax[0].annotate(str(summary[gw]["table_I"][k]), (r.get_x() + w / 2, r.get_height()),
                           ha="center", va="bottom", fontsize=7)
    ax[0].set_xticks(range(3))
    ax[0].set_xticklabels(labels, fontsize=8)
    ax[0].set_ylabel("fraction of runs")
    ax[0].set_title("fairness level in Table I's bins (counts on the bars)", fontsize=10)
    ax[0].legend(fontsize=7)
    mk = {"xcp2q": "o", "legacy1q": "s"}
    for key in summary:
        gw = key.split("/")[0]
        rs = [r for r in runs if r["gw"] == gw and r["all_flows_ran"] and not r["host_stall"]]
        sh = [r["xcp_flows"] / (r["xcp_flows"] + r["cubic_flows"]) for r in rs]
        p = ax[1].scatter(sh, [r["fairness_level"] for r in rs], marker=mk.get(gw, "x"),
                          label="%s: fairness level" % gw)
        ax[1].scatter(sh, [r["per_flow_ratio"] for r in rs], marker=mk.get(gw, "x"),
                      facecolors="none", edgecolors=p.get_facecolor(),
                      label="%s: mean XCP flow / mean CUBIC flow" % gw)
        lv = sorted(r["fairness_level"] for r in rs)
        ax[2].hist(lv, bins=[0.80 + 0.01 * i for i in range(41)], alpha=0.6,
                   label="%s, %d runs" % (gw, len(rs)))
        ax[3].scatter([r["xcp_flows"] + r["cubic_flows"] for r in rs],
                      [r["utilisation_goodput"] for r in rs], marker=mk.get(gw, "x"),
                      label="%s: TCP goodput" % gw)
        if any("utilisation_link" in r for r in rs):
            ax[3].scatter([r["xcp_flows"] + r["cubic_flows"] for r in rs
                           if "utilisation_link" in r],
                          [r["utilisation_link"] for r in rs if "utilisation_link" in r],
                          marker="+", label="%s: the shaper's sent rate" % gw)
    fl = [r for r in runs if not r["all_flows_ran"] or r["host_stall"]]
    if fl:
        ax[1].scatter([r["xcp_flows"] / (r["xcp_flows"] + r["cubic_flows"]) for r in fl],
                      [min(r["fairness_level"], 1.19) for r in fl], marker="x", color="grey",
                      label="flagged (host stall or flows missing; clipped at 1.19)")
    ax[1].set_ylim(0.6, 1.2)
    for a in (ax[1],):
        a.axhspan(0.95, 1.05, color="green", alpha=0.15)
        a.axhspan(0.9, 1.1, color="green", alpha=0.07)
    ax[1].set_xlabel("X / (X + Y) (expected share of the CUBIC-XCP flows)")
    ax[1].set_ylabel("CUBIC-XCP against CUBIC")
    ax[1].set_title("one point per run (bands: Table I's bins)", fontsize=10)
    ax[1].legend(fontsize=7)
    ax[2].axvspan(0.95, 1.05, color="green", alpha=0.15)
    ax[2].axvspan(0.9, 1.1, color="green", alpha=0.07)
    ax[2].set_xlabel("fairness level (0.01 bins)")
    ax[2].set_ylabel("runs")
    ax[2].set_title("distribution of the fairness level", fontsize=10)
    ax[2].legend(fontsize=7)
    ax[3].set_xlabel("X + Y (flows)")
    ax[3].set_ylabel("/ capacity (9 Mbit/s of IP)")
    ax[3].set_ylim(0, 1.05)
    ax[3].set_title("utilisation over the window (goodput at most ~0.96)", fontsize=10)
    ax[3].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(img, dpi=80)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "draw":
        a = sys.argv[2:]
        seed, n, tag = 9, 100, "s"
        while a:
            k = a.pop(0)
            if k == "--seed":
                seed = int(a.pop(0))
            elif k == "--n":
                n = int(a.pop(0))
            elif k == "--tag":
                tag = a.pop(0)
        print(" ".join(draw(seed, n, tag)))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "analyze":
        analyze(sys.argv[2:])
        return
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
