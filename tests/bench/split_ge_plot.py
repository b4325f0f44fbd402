#!/usr/bin/python3
"""Per-second goodput of split downloads from split_goodput.py run JSON files,
one line per file (its first run), labelled by the caller:
    split_ge_plot.py OUT.png LABEL=FILE.json [LABEL=FILE.json ...]
(docs/experiments.md, "Gilbert-Elliott at low load")."""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    out, pairs = sys.argv[1], [a.rsplit("=", 1) for a in sys.argv[2:]]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.6))
    for label, path in pairs:
        res = json.load(open(path))
        r = next(x for x in res["runs"] if x.get("conns") and x["conns"][0])
        ps = [b * 8 / res["rate_bps"] for b in r["conns"][0].get("per_s") or []]
        ax.plot(range(len(ps)), ps, lw=1, label="%s (%.3f)" % (label, r["goodput_fraction"]))
        cum, tot = [], 0.0
        for i, x in enumerate(ps):
            tot += x
            cum.append(tot / (i + 1))
        ax2.plot(range(len(cum)), cum, lw=1.2, label=label)
    ax.set_xlabel("seconds from the SYN")
    ax.set_ylabel("goodput / 20 Mbit/s, per second")
    ax.set_ylim(0, 1.6)
    ax.set_title("split download, Gilbert-Elliott channel (seed 8)")
    ax.legend(fontsize=8, loc="upper left")
    ax2.axhline(0.832, color="k", ls="--", lw=0.8)
    ax2.text(1, 0.845, "bound of this realisation (0.832)", fontsize=8)
    ax2.set_xlabel("seconds from the SYN")
    ax2.set_ylabel("mean goodput since the SYN")
    ax2.set_ylim(0, 1.0)
    ax2.set_title("cumulative")
    ax2.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
