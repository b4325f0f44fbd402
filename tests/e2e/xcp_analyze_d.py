#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Scenario (d) of xcp_experiment.sh: the dynamic bottleneck (seed 001, Fig. 8/9).

  xcp_analyze_d.py sample NETNS E2E_DIR R1_PREFIX T0 UNTIL OUT
      every 0.5 s from now until T0 + UNTIL (CLOCK_MONOTONIC): `ss -Htin` in the
      sender's namespace NETNS (each flow's kernel cwnd, mss, rtt, bytes in
      flight) and Router 1's /satgw/link (its drop-tail queue and drops; satgw
      file prefix R1_PREFIX) and the 1-min load average. Writes OUT:
      [{"t", "ss": {peer: {...}}, "r1": {...}, "load1"}].
  xcp_analyze_d.py cu OUTDIR [FROM_S]
      scenario (c) with unequal counts (xcp_experiment.sh cu-X-Y-R): per run over
      [FROM_S (10), end - 2 s] the fairness level of the X CUBIC-XCP flows (their
      share of the goodput / (X / (X + Y)), the seed's definition), Jain's index
      over all flows, utilisation, the shaper's weight and flow counts. Writes
      OUTDIR/xcp_cu_results.json.
  xcp_analyze_d.py OUTDIR [IMGDIR] [--phase S] [--settle S] [--cap BPS] [--r1 BPS]
      reads OUTDIR/GW-d[-R]-{recv,series,ss}.json; per run and phase (flow 1 alone,
      both, flow 1 alone again; each phase S (40) s, its first SETTLE (10) s left
      out): per-flow goodput, Jain's index, utilisation of the XCP link (goodput /
      CAP, 3 Mbit/s) and of Router 1 (flow 1's goodput / R1, 2 Mbit/s), the XCP
      queue (the hub's shaper), Router 1's queue and drops, each flow's kernel
      cwnd and cwnd_xcp and which of the two is the smaller (the mode: XCP when
      cwnd_xcp < cwnd), the flows' min RTT; the times the flows need to reach
      within 10 % of equal shares after flow 2 starts and flow 1 to reach 0.9 of
      Router 1 after flow 2 stops. Writes OUTDIR/xcp_d_results.json and, with
      IMGDIR, IMGDIR/xcp_d.png (the first run) and xcp_d_runs.png (all runs).
"""
import glob
import json
import os
import re
import subprocess
import sys
import time


def sample_main(argv):
    ns, e2e, r1pfx, t0, until, out = argv[0], argv[1], argv[2], float(argv[3]), \
        float(argv[4]), argv[5]
    sys.path.insert(0, e2e)
    from sgwtel import Telemetry
    tel = None
    try:
        tel = Telemetry(r1pfx)
    except OSError:
        pass
    series = []
    nxt = time.monotonic()
    while time.monotonic() < t0 + until:
        rec = {"t": time.monotonic() - t0, "ss": {}, "load1": os.getloadavg()[0]}
        try:
            txt = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Htin", "state",
                                  "established"], capture_output=True, text=True,
                                 timeout=5).stdout
            rec["ss"] = parse_ss(txt)
        except (OSError, subprocess.SubprocessError) as e:
            rec["err"] = str(e)
        if tel:
            try:
                rec["r1"] = tel.cmd("/satgw/link").get("forward", {})
            except Exception as e:  # noqa: BLE001 - a sample lost is reported, not fatal
                rec["err_r1"] = str(e)
        series.append(rec)
        nxt += 0.5
        time.sleep(max(0.0, nxt - time.monotonic()))
    with open(out + ".tmp", "w") as f:
        json.dump(series, f)
    os.rename(out + ".tmp", out)


def parse_ss(txt):
    """ss -Htin: a line with the addresses, then an indented line of info."""
    flows = {}
    cur = None
    for line in txt.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace() and len(line.split()) >= 4:
            f = line.split()
            # state may be omitted with `state established`: Recv-Q Send-Q local peer
            local, peer = f[-2], f[-1]
            cur = {"local": local, "peer": peer}
            flows[peer] = cur
            continue
        if cur is None:
            continue
        for key in ("cwnd", "mss", "unacked", "ssthresh", "retrans", "lost"):
            m = re.search(r"\b%s:(\d+)(?:/(\d+))?" % key, line)
            if m:
                cur[key] = int(m.group(2) if key == "retrans" and m.group(2) else m.group(1))
        m = re.search(r"\brtt:([\d.]+)/", line)
        if m:
            cur["rtt_ms"] = float(m.group(1))
        m = re.search(r"\bminrtt:([\d.]+)", line)
        if m:
            cur["minrtt_ms"] = float(m.group(1))
        m = re.search(r"\bsnd_wnd:(\d+)", line)
        if m:
            cur["snd_wnd"] = int(m.group(1))
        cur["rwnd_limited"] = "rwnd_limited" in line
        cur = None
    return flows


def load(p):
    with open(p) as f:
        return json.load(f)


def rate(recv, fid, a, b_):
    b = recv["bin_s"]
    v = recv["flows"].get(fid, [])
    return sum(v[int(a / b):int(b_ / b)]) * 8 / (b_ - a) if b_ > a else 0.0


def jain(xs):
    xs = list(xs)
    s2 = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * s2) if s2 > 0 else 0.0


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


DST = {"1": "10.20.1.1", "2": "10.20.1.3"}
DST_LEGACY = {"1": "10.20.1.2", "2": "10.20.1.4"}


def flow_traces(ss, series, dsts=None):
    """Per flow: [(t, kernel cwnd bytes, cwnd_xcp bytes or None, rtt_ms, minrtt_ms,
    snd_wnd: the peer's window as the kernel has it, i.e. after the agent's or the
    legacy mode's clamp)]."""
    dsts = dsts or DST
    port_of = {}
    tr = {"1": [], "2": []}
    for rec in ss:
        for peer, f in rec.get("ss", {}).items():
            for fid, dst in dsts.items():
                if peer.startswith(dst + ":") and "cwnd" in f:
                    lport = f["local"].rsplit(":", 1)[1]
                    port_of[lport] = fid
                    tr[fid].append([rec["t"], f["cwnd"] * f.get("mss", 1448), None,
                                    f.get("rtt_ms"), f.get("minrtt_ms"), f.get("snd_wnd")])
    # cwnd_xcp from the sender agent (xcp_sample.py: "lport:rport" -> cwnd_xcp).
    xc = {"1": [], "2": []}
    for rec in series:
        for k, v in (rec.get("cwnd") or {}).items():
            fid = port_of.get(k.split(":")[0])
            if fid:
                xc[fid].append((rec["t"], v))
    for fid in tr:
        pts = xc[fid]
        j = 0
        for row in tr[fid]:
            while j + 1 < len(pts) and pts[j + 1][0] <= row[0]:
                j += 1
            if pts and abs(pts[j][0] - row[0]) <= 0.6:
                row[2] = pts[j][1]
    return tr, xc


def analyse(out, name, P, settle, cap, r1cap):
    recv = load("%s/%s-recv.json" % (out, name))
    series = load("%s/%s-series.json" % (out, name))
    ssp = "%s/%s-ss.json" % (out, name)
    ss = load(ssp) if os.path.exists(ssp) else []
    legacy = "-dl" in name
    tr, xc = flow_traces(ss, series, DST_LEGACY if legacy else DST)
    res = {"run": name, "legacy": legacy, "phase_s": P, "settle_s": settle, "cap_bps": cap, "r1_bps": r1cap,
           "phases": []}
    gaps = [b["t"] - a["t"] for a, b in zip(series, series[1:])]
    res["sampler_gap_max_s"] = max(gaps) if gaps else None
    ld = [s["load1"] for s in ss if "load1" in s]
    res["load1_min_mean_max"] = [min(ld), mean(ld), max(ld)] if ld else None
    for i, (a, b, fl) in enumerate([(0, P, ["1"]), (P, 2 * P, ["1", "2"]),
                                    (2 * P, 3 * P, ["1"])]):
        t_a, t_b = a + settle, b
        r = {f: rate(recv, f, t_a, t_b) for f in ("1", "2")}
        ph = {"phase": i + 1, "window_s": [t_a, t_b], "rate_bps": r,
              "goodput_util_xcp_link": (r["1"] + r["2"]) / cap,
              "flow1_of_r1": r["1"] / r1cap}
        if len(fl) == 2:
            ph["jain"] = jain([r["1"], r["2"]])
            ph["ratio_1_to_2"] = r["1"] / r["2"] if r["2"] else None
        xs = [s.get("xcp") or {} for s in series if t_a <= s["t"] < t_b]
        qb = [float(x["queue_bytes"]) for x in xs if "queue_bytes" in x]
        ph["xcp_queue_bytes_mean"] = mean(qb)
        ph["xcp_queue_bytes_max"] = max(qb) if qb else None
        ph["xcp_input_bps_mean"] = mean([float(x["input_bps"]) for x in xs if "input_bps" in x])
        r1 = [s["r1"] for s in ss if "r1" in s and t_a <= s["t"] < t_b]
        if r1:
            ph["r1_queue_bytes_mean"] = mean([float(x["queue_bytes"]) for x in r1])
            ph["r1_queue_bytes_max"] = max(float(x["queue_bytes"]) for x in r1)
            ph["r1_drops"] = r1[-1]["dropped_queue"] - r1[0]["dropped_queue"]
        # whole phase (not only after settling) for the drops
        r1all = [s["r1"] for s in ss if "r1" in s and a <= s["t"] < b]
        if r1all:
            ph["r1_drops_whole_phase"] = r1all[-1]["dropped_queue"] - r1all[0]["dropped_queue"]
        for f in fl:
            rows = [x for x in tr[f] if t_a <= x[0] < t_b]
            k = [x[1] for x in rows]
            xw = [x[2] for x in rows if x[2] is not None]
            both = [x for x in rows if x[2] is not None]
            sw = [x[5] for x in rows if x[5] is not None]
            ph["flow%s" % f] = {
                "snd_wnd_bytes_mean": mean(sw),
                "snd_wnd_smaller_share": (sum(1 for x in rows if x[5] is not None and
                                              x[5] < x[1]) / len(sw) if sw else None),
                "cwnd_kernel_bytes_mean": mean(k),
                "cwnd_xcp_bytes_mean": mean(xw),
                "xcp_smaller_share": (sum(1 for x in both if x[2] < x[1]) / len(both)
                                      if both else None),
                "rtt_ms_mean": mean([x[3] for x in rows]),
                "minrtt_ms": min([x[4] for x in rows if x[4]], default=None)}
        res["phases"].append(ph)
    # Convergence: the first t after flow 2's start from which 2-s rates stay within
    # 10 % of each other for the rest of phase 2; recovery: the first t after flow 2
    # stops from which flow 1's 2-s rate stays >= 0.9 of Router 1's rate... of its
    # phase-1 rate (the drop-tail router's goodput) for the rest of phase 3.
    def first_stable(t0, t1, ok):
        ts = [t0 + 0.5 * j for j in range(int((t1 - t0 - 2) / 0.5) + 1)]
        good = [ok(t) for t in ts]
        for j in range(len(ts)):
            if all(good[j:]):
                return ts[j] - t0
        return None
    res["converge_s_after_flow2_start"] = first_stable(
        P, 2 * P, lambda t: abs(rate(recv, "1", t, t + 2) - rate(recv, "2", t, t + 2)) <=
        0.1 * max(rate(recv, "1", t, t + 2), rate(recv, "2", t, t + 2), 1))
    p1 = res["phases"][0]["rate_bps"]["1"]
    res["recover_s_after_flow2_stop"] = first_stable(
        2 * P, 3 * P, lambda t: rate(recv, "1", t, t + 2) >= 0.9 * p1)
    res["traces"] = {"cwnd": tr}
    return res


def plot(out, results, img, fname):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(results)
    fig, ax = plt.subplots(3, n, figsize=(7 * n, 8.5), squeeze=False, sharex="col")
    for c, res in enumerate(results):
        name, P, cap, r1cap = res["run"], res["phase_s"], res["cap_bps"], res["r1_bps"]
        recv = load("%s/%s-recv.json" % (out, name))
        series = load("%s/%s-series.json" % (out, name))
        ssp = "%s/%s-ss.json" % (out, name)
        ss = load(ssp) if os.path.exists(ssp) else []
        b = recv["bin_s"]
        k = max(1, int(round(1.0 / b)))
        lab = {"1": "flow 1 (base RTT ~0.86 s, via Router 1)", "2": "flow 2 (~0.66 s)"}
        for f in ("1", "2"):
            v = recv["flows"].get(f, [])
            ts = [(j + k / 2) * b for j in range(0, len(v) - k + 1, k)]
            rs = [sum(v[j:j + k]) * 8 / (k * b) / 1e6 for j in range(0, len(v) - k + 1, k)]
            ax[0][c].plot(ts, rs, label=lab[f], lw=1)
        ax[0][c].axhline(cap / 1e6, color="grey", ls=":", lw=0.8, label="XCP gateway C")
        ax[0][c].axhline(r1cap / 1e6, color="brown", ls="--", lw=0.8, label="Router 1 (drop-tail)")
        ax[0][c].axhline(cap / 2e6, color="grey", ls="-.", lw=0.8, label="C / 2")
        ax[0][c].set_ylabel("goodput (Mbit/s, 1 s)")
        ax[0][c].set_title("%s: (d) dynamic bottleneck%s" % (
            name, ", plain CUBIC, hub in legacy mode" if res.get("legacy") else
            ", CUBIC-XCP"), fontsize=10)
        ax[0][c].legend(fontsize=6, loc="upper right")
        tr = res["traces"]["cwnd"]
        for f, col in (("1", "C0"), ("2", "C1")):
            rows = tr[f]
            ax[1][c].plot([x[0] for x in rows], [x[1] / 1e3 for x in rows], color=col, lw=1,
                          label="flow %s kernel cwnd (CUBIC)" % f)
            if res.get("legacy"):
                xr = [x for x in rows if x[5] is not None]
                ax[1][c].plot([x[0] for x in xr], [x[5] / 1e3 for x in xr], color=col,
                              ls="--", lw=1, label="flow %s snd_wnd (the hub's clamp)" % f)
            else:
                xr = [x for x in rows if x[2] is not None]
                ax[1][c].plot([x[0] for x in xr], [x[2] / 1e3 for x in xr], color=col,
                              ls="--", lw=1, label="flow %s cwnd_xcp" % f)
        ax[1][c].set_yscale("log")
        ax[1][c].set_ylabel("window (kB, log)")
        ax[1][c].legend(fontsize=6, loc="upper right")
        t = [s["t"] for s in series if "queue_bytes" in (s.get("xcp") or {})]
        q = [float(s["xcp"]["queue_bytes"]) / 1e3 for s in series
             if "queue_bytes" in (s.get("xcp") or {})]
        ax[2][c].plot(t, q, lw=1, label="XCP gateway queue (hub shaper)")
        r1 = [(s["t"], float(s["r1"]["queue_bytes"]) / 1e3) for s in ss if "r1" in s]
        ax[2][c].plot([x[0] for x in r1], [x[1] for x in r1], lw=1, color="brown",
                      label="Router 1 queue (drop-tail, 40 packets)")
        ax[2][c].set_ylabel("queue (kB)")
        ax[2][c].set_xlabel("time (s)")
        ax[2][c].legend(fontsize=6, loc="upper right")
        for r in range(3):
            for x in (P, 2 * P):
                ax[r][c].axvline(x, color="k", lw=0.5, alpha=0.4)
    fig.tight_layout()
    fig.savefig(os.path.join(img, fname), dpi=90)


def unequal_main(argv):
    """cu-X-Y-R runs: X CUBIC-XCP (flows 1..X) against Y CUBIC (101..100+Y)."""
    out = argv[0]
    t_from = float(argv[1]) if len(argv) > 1 else 10.0
    cap = 9e6
    runs = []
    for p in sorted(glob.glob(out + "/*-cu-*-recv.json")):
        name = os.path.basename(p)[:-len("-recv.json")]
        gw, _, nx, no, tag = name.rsplit("-", 4)
        nx, no = int(nx), int(no)
        r = load(p)
        n = len(next(iter(r["flows"].values()))) * r["bin_s"]
        t_a, t_b = t_from, n - 2
        xr = [rate(r, str(i), t_a, t_b) for i in range(1, nx + 1)]
        yr = [rate(r, str(100 + i), t_a, t_b) for i in range(1, no + 1)]
        x, y = sum(xr), sum(yr)
        run = {"run": name, "gw": gw, "xcp_flows": nx, "cubic_flows": no,
               "window_s": [t_a, t_b], "xcp_bps": xr, "cubic_bps": yr,
               "fairness_level": (x / (x + y)) / (nx / (nx + no)) if x + y else None,
               "jain_all": jain(xr + yr), "utilisation_goodput": (x + y) / cap}
        sp = "%s/%s-series.json" % (out, name)
        if os.path.exists(sp):
            s = [q.get("xcp") or {} for q in load(sp) if t_a <= q["t"] < t_b]
            s = [q for q in s if "q_xcp_sent_bps" in q]
            if s:
                run["utilisation_link"] = mean([float(q["q_xcp_sent_bps"]) +
                                                float(q["q_other_sent_bps"]) for q in s]) / cap
                run["weight_mean"] = mean([float(q["q_xcp_weight"]) for q in s])
                run["flows_seen_mean"] = [mean([float(q["q_xcp_flows"]) for q in s]),
                                          mean([float(q["q_other_flows"]) for q in s])]
                run["xcp_queue_bytes_mean"] = mean([float(q["q_xcp_queue_bytes"]) for q in s])
        runs.append(run)
        print("%-22s %d vs %d: level %.3f, Jain %.3f, goodput util %.3f%s" % (
            name, nx, no, run["fairness_level"], run["jain_all"], run["utilisation_goodput"],
            "" if "weight_mean" not in run else
            ", link util %.3f, weight %.3f, flows seen %.1f + %.1f, XCP queue %.0f kB" % (
                run["utilisation_link"], run["weight_mean"], run["flows_seen_mean"][0],
                run["flows_seen_mean"][1], run["xcp_queue_bytes_mean"] / 1e3)))
    with open(out + "/xcp_cu_results.json", "w") as f:
        json.dump({"from_s": t_from, "runs": runs}, f, indent=1)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "sample":
        sample_main(sys.argv[2:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "cu":
        unequal_main(sys.argv[2:])
        return
    args = sys.argv[1:]
    P, settle, cap, r1cap = 40.0, 10.0, 3e6, 2e6
    pos = []
    while args:
        if args[0] in ("--phase", "--settle", "--cap", "--r1"):
            v = float(args[1])
            if args[0] == "--phase":
                P = v
            elif args[0] == "--settle":
                settle = v
            elif args[0] == "--cap":
                cap = v
            else:
                r1cap = v
            args = args[2:]
        else:
            pos.append(args.pop(0))
    out = pos[0]
    img = pos[1] if len(pos) > 1 else None
    names = sorted(os.path.basename(p)[:-len("-recv.json")]
                   for pat in ("d", "d-*", "dl", "dl-*")
                   for p in glob.glob("%s/*-%s-recv.json" % (out, pat)))
    results = [analyse(out, n, P, settle, cap, r1cap) for n in names]
    with open(out + "/xcp_d_results.json", "w") as f:
        json.dump(results, f, indent=1)
    for r in results:
        print("%s (sampler gap max %.1f s, load average %s)" % (
            r["run"], r["sampler_gap_max_s"] or 0,
            "/".join("%.1f" % x for x in r["load1_min_mean_max"])
            if r["load1_min_mean_max"] else "-"))
        for ph in r["phases"]:
            print("  phase %d %s: rates %.2f / %.2f Mbit/s, util XCP link %.3f, flow 1 / R1 %.3f"
                  "%s, xcp queue mean %.0f kB max %.0f kB, R1 queue mean %s kB, R1 drops %s" % (
                      ph["phase"], ph["window_s"], ph["rate_bps"]["1"] / 1e6,
                      ph["rate_bps"]["2"] / 1e6, ph["goodput_util_xcp_link"], ph["flow1_of_r1"],
                      ", Jain %.3f, ratio %.2f" % (ph["jain"], ph["ratio_1_to_2"] or 0)
                      if "jain" in ph else "",
                      (ph["xcp_queue_bytes_mean"] or 0) / 1e3,
                      (ph["xcp_queue_bytes_max"] or 0) / 1e3,
                      "%.0f" % (ph["r1_queue_bytes_mean"] / 1e3)
                      if ph.get("r1_queue_bytes_mean") is not None else "-",
                      ph.get("r1_drops_whole_phase", "-")))
            for f in ("flow1", "flow2"):
                if f in ph:
                    d = ph[f]
                    print("    %s: kernel cwnd %s kB, cwnd_xcp %s kB, xcp smaller in %s, "
                          "rtt %s ms, minrtt %s ms" % (
                              f, "%.0f" % (d["cwnd_kernel_bytes_mean"] / 1e3)
                              if d["cwnd_kernel_bytes_mean"] else "-",
                              "%.0f" % (d["cwnd_xcp_bytes_mean"] / 1e3)
                              if d["cwnd_xcp_bytes_mean"] else "-",
                              "%.2f" % d["xcp_smaller_share"]
                              if d["xcp_smaller_share"] is not None else "-",
                              "%.0f" % d["rtt_ms_mean"] if d["rtt_ms_mean"] else "-",
                              d["minrtt_ms"]))
        print("  converge after flow 2 starts: %s s; flow 1 back to 0.9 of phase 1 after "
              "flow 2 stops: %s s" % (r["converge_s_after_flow2_start"],
                                      r["recover_s_after_flow2_stop"]))
    if img and results:
        plot(out, results[:1], img, "xcp_d.png")
        if len(results) > 1:
            plot(out, results, img, "xcp_d_runs.png")


if __name__ == "__main__":
    main()
