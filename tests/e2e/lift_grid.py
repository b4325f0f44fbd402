#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The LIFT grid's statistics and plot (docs/experiments.md, "LIFT (issue 8)").

Usage: lift_grid.py OUT.png OUT.json DIR|EARLIER.json [DIR|EARLIER.json ...]

DIR is a lift_grid_run.sh output directory: one SENDER-TIMER-tgX-tbY-MODE-sS.json.d/
per run of lift_experiment.sh, with pages-*.jsonl (one record per page, written
as pages complete), runs.jsonl (the run's counters, if the run finished) and
ss-*.log (the sender's ss -tin samples). EARLIER.json is an OUT.json this
script wrote before (its pages and runs, e.g. docs/data/): a point's data can
grow over several sessions without keeping the raw directories. A page or run
present twice (the same sender, timer, point, mode, seed and page) counts once.

Pairing: page i of seed s without LIFT against page i of seed s with LIFT (the
same page objects, the same channel realisation in time from the run's start;
the runs drift apart in time after their first differing page). Only pages
present in both modes count. Per point: the mean page time off and on, the
ratio of means on/off, and a 95 % bootstrap interval of that ratio resampling
whole seeds (clusters: pages of one run share a channel realisation and a
sender state, so they are not independent); beside it the paired t-interval
of the per-page difference on - off (pages treated as independent: narrower,
optimistic). A censored page (the fetcher's receive timeout) enters at its
censored time, a lower bound; the table says how many.

Writes OUT.json (pages, runs with the ss figures, and the table's numbers) and
OUT.png, and prints the markdown table.

  lift_grid.py --realisations PNG GRID.json
      For one point of an OUT.json: each realisation's on/off (the sums of its
      paired pages), and the ratio of means with its 95 % seed-bootstrap
      interval as realisations are added in seed order: how far a few
      realisations can mislead. Prints the per-realisation table.

  lift_grid.py --compare PNG OUT.json A.json LABEL_A B.json LABEL_B
      Two OUT.json of one point run with different settings (satlink's
      rto_max_ms, say): per LIFT mode, the pages present in both (the same
      seed and page: the same channel realisation and page objects), the
      ratio of means B/A with its 95 % seed-bootstrap interval, and each
      realisation's page-time sum both ways. Censored pages enter at their
      censored time (a lower bound) and are counted.
"""
import glob
import json
import math
import os
import random
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lift_plot import ss_stats  # noqa: E402

RUN = re.compile(r"^(\w+)-(\w+)-tg[\d.]+-tb[\d.]+-.*\.json\.d$")
PAGES = re.compile(r"^pages-tg([\d.]+)-tb([\d.]+)-(\w+)-(off|on)-s(\d+)\.jsonl$")
# two-sided 97.5 % quantiles of Student's t for small df (df > 30: 1.96 + ...)
T975 = [0, 12.71, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    return T975[df] if df < len(T975) else 1.96 + 2.4 / df


def dedup(items, key):
    seen, out = set(), []
    for x in items:
        k = tuple(x.get(f) for f in key)
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out


def load(dirs):
    pages, runs = [], []
    for d in dirs:
        if os.path.isfile(d):
            e = json.load(open(d))
            pages += e["pages"]
            runs += e["runs"]
            continue
        for rd in sorted(glob.glob(os.path.join(d, "*.json.d"))):
            m = RUN.match(os.path.basename(rd))
            if not m:
                continue
            timer = m.group(2)
            for pf in glob.glob(os.path.join(rd, "pages-*.jsonl")):
                pm = PAGES.match(os.path.basename(pf))
                if not pm:
                    continue
                tg, tb, snd, mode, seed = pm.groups()
                key = dict(sender=snd, timer=timer, t_good_s=float(tg), t_bad_s=float(tb),
                           lift=mode, seed=int(seed))
                with open(pf) as f:
                    for line in f:
                        if line.strip():
                            p = json.loads(line)
                            p.update(key)
                            pages.append(p)
            rf = os.path.join(rd, "runs.jsonl")
            if os.path.exists(rf):
                with open(rf) as f:
                    for line in f:
                        r = json.loads(line)
                        r.setdefault("timer", timer)
                        tag = "tg%s-tb%s-%s-%s-s%d" % (
                            ("%g" % r["t_good_s"]), ("%g" % r["t_bad_s"]), r["sender"], r["lift"],
                            r["seed"])
                        ss = os.path.join(rd, "ss-%s.log" % tag)
                        if os.path.exists(ss):
                            r["cwnd_collapses"], r["frozen_samples"], r["ss_samples"] = \
                                ss_stats(ss)
                        runs.append(r)
    k = ("sender", "timer", "t_good_s", "t_bad_s", "lift", "seed")
    return dedup(pages, k + ("page",)), dedup(runs, k)


def ratio_ci(pairs, rng, n_boot=4000):
    """pairs: {seed: [(off, on), ...]}; 95 % percentile interval of
    sum(on)/sum(off) over bootstrap resamples of whole seeds."""
    seeds = list(pairs)
    if len(seeds) < 2:
        return None
    vals = []
    for _ in range(n_boot):
        so = sn = 0.0
        for _ in seeds:
            for a, b in pairs[rng.choice(seeds)]:
                so += a
                sn += b
        if so > 0:
            vals.append(sn / so)
    vals.sort()
    return vals[int(0.025 * len(vals))], vals[int(0.975 * len(vals)) - 1]


def paired(pages):
    """{(sender, timer, t_good, t_bad): [(seed, off page, on page), ...]} in
    (seed, page) order: the pages present in both modes."""
    idx = {}
    for p in pages:
        k = (p["sender"], p["timer"], p["t_good_s"], p["t_bad_s"])
        idx.setdefault(k, {}).setdefault((p["seed"], p["page"]), {})[p["lift"]] = p
    return {k: [(seed, by["off"], by["on"]) for (seed, _), by in sorted(v.items())
                if "off" in by and "on" in by] for k, v in idx.items()}


def summarise(pages, runs):
    rng = random.Random(8)
    idx = paired(pages)
    rows = []
    for k in sorted(idx, key=lambda k: (k[0] != "reno", k[1], k[3], k[2])):
        pairs, diffs, cens = {}, [], [0, 0]
        for seed, po, pn in idx[k]:
            a, b = po["seconds"], pn["seconds"]
            pairs.setdefault(seed, []).append((a, b))
            diffs.append(b - a)
            cens[0] += bool(po.get("censored"))
            cens[1] += bool(pn.get("censored"))
        n = len(diffs)
        if n == 0:
            continue
        off = [a for v in pairs.values() for a, _ in v]
        on = [b for v in pairs.values() for _, b in v]
        mo, mn = sum(off) / n, sum(on) / n
        md = sum(diffs) / n
        sd = math.sqrt(sum((d - md) ** 2 for d in diffs) / (n - 1)) if n > 1 else float("nan")
        half = t975(n - 1) * sd / math.sqrt(n) if n > 1 else float("nan")
        ci = ratio_ci(pairs, rng)
        rr = [r for r in runs if (r["sender"], r["timer"], r["t_good_s"], r["t_bad_s"]) == k]

        def per_page(mode, fn):
            rs = [r for r in rr if r["lift"] == mode]
            npg = sum(r["pages"] for r in rs)
            return (sum(fn(r) for r in rs) / npg) if npg else None

        def ctr(name):
            return lambda r: r["fh_nstat"].get(name, 0)

        def frozen(mode):
            rs = [r for r in rr if r["lift"] == mode and r.get("ss_samples")]
            s = sum(r["ss_samples"] for r in rs)
            return sum(r["frozen_samples"] for r in rs) / s if s else None

        row = {"sender": k[0], "timer": k[1], "t_good_s": k[2], "t_bad_s": k[3], "pairs": n,
               "seeds": len(pairs), "censored_off": cens[0], "censored_on": cens[1],
               "mean_off_s": mo, "mean_on_s": mn, "ratio": mn / mo,
               "ratio_ci95_seed_bootstrap": ci, "diff_s": md, "diff_ci95_t": (md - half, md + half),
               "runs_with_counters": len(rr)}
        for mode in ("off", "on"):
            row["timeouts_pp_" + mode] = per_page(mode, ctr("TcpExtTCPTimeouts"))
            row["retrans_pp_" + mode] = per_page(mode, ctr("TcpRetransSegs"))
            row["lossprobes_pp_" + mode] = per_page(mode, ctr("TcpExtTCPLossProbes"))
            row["undo_spurious_pp_" + mode] = per_page(
                mode, lambda r: r["fh_nstat"].get("TcpExtTCPLossUndo", 0) +
                r["fh_nstat"].get("TcpExtTCPSpuriousRTOs", 0))
            row["collapses_pp_" + mode] = per_page(mode, lambda r: r.get("cwnd_collapses") or 0)
            row["uplink_pp_" + mode] = per_page(mode, lambda r: r["mean_uplink_bytes"] * r["pages"])
            row["frozen_share_" + mode] = frozen(mode)
        rows.append(row)
    return rows


def fmt(v, f="%.2f"):
    return "-" if v is None else f % v


def table(rows):
    print("| sender, timer | T_good/T_bad (s) | pairs (seeds) | page s off / on | on/off "
          "[95 % CI, seed bootstrap] | on - off s [95 % t-CI] | timeouts/page off / on | "
          "cwnd collapses/page off / on | frozen share on | loss probes/page off / on | "
          "undo+spurious/page off / on | uplink B/page off / on |")
    print("|" + "---|" * 12)
    for r in rows:
        ci = r["ratio_ci95_seed_bootstrap"]
        cen = ""
        if r["censored_off"] or r["censored_on"]:
            cen = " (censored %d / %d)" % (r["censored_off"], r["censored_on"])
        sig = ""
        if ci and (ci[1] < 1 or ci[0] > 1):
            sig = " **"
        print("| %s, %s | %g/%g | %d (%d) | %.2f / %.2f%s | %.2f [%s]%s | %+.2f [%+.2f, %+.2f] | "
              "%s / %s | %s / %s | %s | %s / %s | %s / %s | %s / %s |" % (
                  r["sender"], r["timer"], r["t_good_s"], r["t_bad_s"], r["pairs"], r["seeds"],
                  r["mean_off_s"], r["mean_on_s"], cen, r["ratio"],
                  "%.2f-%.2f" % tuple(ci) if ci else "-", sig, r["diff_s"],
                  r["diff_ci95_t"][0], r["diff_ci95_t"][1],
                  fmt(r["timeouts_pp_off"]), fmt(r["timeouts_pp_on"]),
                  fmt(r["collapses_pp_off"]), fmt(r["collapses_pp_on"]), fmt(r["frozen_share_on"]),
                  fmt(r["lossprobes_pp_off"]), fmt(r["lossprobes_pp_on"]),
                  fmt(r["undo_spurious_pp_off"]), fmt(r["undo_spurious_pp_on"]),
                  fmt(r["uplink_pp_off"], "%.0f"), fmt(r["uplink_pp_on"], "%.0f")))


def plot(rows, pages, out):
    cols = sorted({(r["sender"], r["timer"]) for r in rows}, key=lambda c: c[0] != "reno")
    fig, axes = plt.subplots(2, len(cols), figsize=(7 * len(cols), 9), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    rng = random.Random(9)
    for ci, (snd, timer) in enumerate(cols):
        rs = [r for r in rows if (r["sender"], r["timer"]) == (snd, timer)]
        tbads = sorted({r["t_bad_s"] for r in rs})
        ax = axes[0][ci]
        for ti, tb in enumerate(tbads):
            for lift, style, dx in (("on", "-", 0.08), ("off", "--", -0.08)):
                xs, ys, lo, hi = [], [], [], []
                for r in sorted((r for r in rs if r["t_bad_s"] == tb), key=lambda r: r["t_good_s"]):
                    # the pages of this mode that are in a pair, by seed, for the mean's CI
                    by = {}
                    for p in pages:
                        if (p["sender"], p["timer"], p["t_good_s"], p["t_bad_s"], p["lift"]) == \
                                (snd, timer, r["t_good_s"], tb, lift):
                            by.setdefault(p["seed"], []).append(p["seconds"])
                    m = r["mean_%s_s" % lift]
                    seeds = list(by)
                    bs = []
                    for _ in range(2000):
                        v = [x for _ in seeds for x in by[rng.choice(seeds)]]
                        bs.append(sum(v) / len(v))
                    bs.sort()
                    xs.append(r["t_good_s"] + dx)
                    ys.append(m)
                    lo.append(max(0, m - bs[int(0.025 * len(bs))]))
                    hi.append(max(0, bs[int(0.975 * len(bs)) - 1] - m))
                if xs:
                    ax.errorbar(xs, ys, yerr=[lo, hi], fmt=style, marker="o", capsize=3,
                                color=colours[ti % len(colours)],
                                label="T_bad %g s, LIFT %s" % (tb, lift))
        ax.set_yscale("log")
        ax.set_xlabel("T_good (s)")
        ax.set_ylabel("mean page download time (s), 95 % CI (seeds)")
        ax.set_title("%s sender, hub timer %s" % (snd, timer))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        ax = axes[1][ci]
        labels = []
        for i, r in enumerate(rs):
            c = r["ratio_ci95_seed_bootstrap"] or (r["ratio"], r["ratio"])
            ax.errorbar([i], [r["ratio"]], yerr=[[r["ratio"] - c[0]], [c[1] - r["ratio"]]],
                        fmt="o", capsize=4, color=colours[tbads.index(r["t_bad_s"]) % len(colours)])
            labels.append("%g/%g\nn=%d" % (r["t_good_s"], r["t_bad_s"], r["pairs"]))
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(range(len(rs)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_xlabel("T_good/T_bad (s), pairs")
        ax.set_ylabel("page time with / without LIFT, 95 % CI")
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def realisations(out, grid):
    d = json.load(open(grid))
    if len(d["summary"]) != 1:
        sys.exit("--realisations: %s holds %d points, not one" % (grid, len(d["summary"])))
    pairs = {}
    for pt in paired(d["pages"]).values():
        for seed, po, pn in pt:
            pairs.setdefault(seed, []).append((po["seconds"], pn["seconds"]))
    seeds = sorted(pairs)
    print("| seed | pairs | page s off / on (sums) | on/off |\n|---|---|---|---|")
    per = []
    for s in seeds:
        a, b = sum(x for x, _ in pairs[s]), sum(y for _, y in pairs[s])
        per.append(b / a)
        print("| %d | %d | %.1f / %.1f | %.2f |" % (s, len(pairs[s]), a, b, b / a))
    rng = random.Random(8)
    cum = []
    for n in range(2, len(seeds) + 1):
        sub = {s: pairs[s] for s in seeds[:n]}
        so = sum(a for v in sub.values() for a, _ in v)
        sn = sum(b for v in sub.values() for _, b in v)
        cum.append((n, sn / so) + ratio_ci(sub, rng, 2000))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    ax.bar(range(len(seeds)), per, color=["tab:green" if r < 1 else "tab:red" for r in per])
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(seeds)))
    ax.set_xticklabels([str(s) for s in seeds], rotation=90, fontsize=7)
    ax.set_xlabel("channel realisation (seed)")
    ax.set_ylabel("page time with / without LIFT (sum of paired pages)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax = axes[1]
    ns = [c[0] for c in cum]
    ax.fill_between(ns, [c[2] for c in cum], [c[3] for c in cum], alpha=0.25,
                    label="95 % CI (seed bootstrap)")
    ax.plot(ns, [c[1] for c in cum], "o-", ms=3, label="ratio of mean page times")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("realisations included (in seed order)")
    ax.set_ylabel("with / without LIFT")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    r = d["summary"][0]
    fig.suptitle("%s sender, timer %s, T_good %g s / T_bad %g s: %d page pairs" % (
        r["sender"], r["timer"], r["t_good_s"], r["t_bad_s"], r["pairs"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def compare(out_png, out_json, a_path, a_label, b_path, b_label):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def idx(path):
        d = json.load(open(path))
        if len(d["summary"]) != 1:
            sys.exit("--compare: %s holds %d points, not one" % (path, len(d["summary"])))
        cens = {(r["seed"], r["lift"], c) for r in d["runs"] for c in r.get("censored", [])}
        return {(p["seed"], p["lift"], p["page"]): (p["seconds"],
                (p["seed"], p["lift"], p["page"]) in cens) for p in d["pages"]}
    a, b = idx(a_path), idx(b_path)
    rng = random.Random(1)
    res = {"a": a_path, "a_label": a_label, "b": b_path, "b_label": b_label, "modes": {}}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, mode in zip(axes, ("off", "on")):
        per = {}
        cens = [0, 0]
        for k in sorted(set(a) & set(b)):
            if k[1] != mode:
                continue
            per.setdefault(k[0], []).append((a[k][0], b[k][0]))
            cens[0] += a[k][1]
            cens[1] += b[k][1]
        sa = sum(x for v in per.values() for x, _ in v)
        sb = sum(y for v in per.values() for _, y in v)
        n = sum(len(v) for v in per.values())
        ci = ratio_ci(per, rng)
        seeds = sorted(per)
        res["modes"][mode] = {
            "seeds": len(seeds), "pages": n,
            "mean_a_s": sa / max(1, n), "mean_b_s": sb / max(1, n),
            "ratio_b_a": sb / sa if sa else None, "ratio_ci95_seed_bootstrap": ci,
            "censored_a": cens[0], "censored_b": cens[1],
            "per_seed": {str(s): [sum(x for x, _ in per[s]), sum(y for _, y in per[s])]
                         for s in seeds}}
        m = res["modes"][mode]
        print("LIFT %s: %d pages over %d realisations, mean page %s %.2f s, %s %.2f s, "
              "%s/%s %.3f [%s] (censored %d / %d)" % (
                  mode, m["pages"], m["seeds"], a_label, m["mean_a_s"], b_label,
                  m["mean_b_s"], b_label, a_label, m["ratio_b_a"] or 0,
                  "-".join("%.3f" % x for x in ci) if ci else "-", cens[0], cens[1]))
        xs = range(len(seeds))
        ax.plot(xs, [m["per_seed"][str(s)][0] for s in seeds], "o-", label=a_label)
        ax.plot(xs, [m["per_seed"][str(s)][1] for s in seeds], "s-", label=b_label)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([str(s) for s in seeds], rotation=90, fontsize=7)
        ax.set_yscale("log")
        ax.set_xlabel("channel realisation (seed)")
        ax.set_ylabel("sum of its page times (s)")
        ax.set_title("LIFT %s: %s/%s %.2f" % (mode, b_label, a_label, m["ratio_b_a"] or 0),
                     fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_png, dpi=90)
    with open(out_json, "w") as f:
        json.dump(res, f, indent=1)


def main():
    if sys.argv[1] == "--realisations":
        realisations(sys.argv[2], sys.argv[3])
        return
    if sys.argv[1] == "--compare":
        compare(*sys.argv[2:8])
        return
    out_png, out_json, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    pages, runs = load(dirs)
    rows = summarise(pages, runs)
    with open(out_json, "w") as f:
        json.dump({"summary": rows, "runs": runs, "pages": pages}, f, indent=0)
    table(rows)
    plot(rows, pages, out_png)


if __name__ == "__main__":
    main()
