#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks and report of test_xcp_chain.sh (and the numbers xcp_experiment.sh reuses).

  xcp_chain_check.py DIR ONE_S UTIL_MIN STARVE EXPECT_FB [MODE [JAIN_MIN [QUEUE_MAX_PKTS]]]

DIR holds hub-run.json (the hub's exit JSON), agent-fh.json / agent-mh.json
(the agents' exit JSON; not in legacy mode), one-recv.json / one-series.json
and four-recv.json / four-series.json (xcp_flows.py, xcp_sample.py).
EXPECT_FB 1: the hub's stage must have lowered feedback and the agent applied
it (0: the stage-off run). MODE xcp (default: CUBIC-XCP senders with agents)
or legacy (plain CUBIC, the hub's ACK clamp: its legacy counters are checked
instead of the agents', and the one flow's mean satlink queue over the steady
window must stay below QUEUE_MAX_PKTS). JAIN_MIN: Jain's index of the four
flows over 20-28 s must reach it (default 0: not checked).
"""
import json
import sys


def load(p):
    with open(p) as f:
        return json.load(f)


def xcp_of(rec):
    d = rec.get("xcp") or {}
    return d.get("link", d)


def rates(recv, t_a, t_b):
    """Mean goodput of each flow over [t_a, t_b) in bit/s (bins of recv['bin_s'])."""
    b = recv["bin_s"]
    i, j = int(t_a / b), int(t_b / b)
    return {fid: sum(v[i:j]) * 8.0 / (t_b - t_a) for fid, v in sorted(recv["flows"].items())}


def jain(xs):
    xs = list(xs)
    s2 = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * s2) if s2 > 0 else 0.0


def main():
    d, one_s, umin, starve, expect_fb = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), \
        float(sys.argv[4]), int(sys.argv[5])
    mode = sys.argv[6] if len(sys.argv) > 6 else "xcp"
    jain_min = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
    qmax = float(sys.argv[8]) if len(sys.argv) > 8 else float("inf")
    legacy = mode == "legacy"
    hub = load(d + "/hub-run.json")
    L = hub["xcp"]["link"]
    cap = L["capacity_bps"]
    if not legacy:
        fc = load(d + "/agent-fh.json")["counters"]
        mc = load(d + "/agent-mh.json")["counters"]
    checks = []
    # ---- one flow
    one, ser1 = load(d + "/one-recv.json"), load(d + "/one-series.json")
    t_a, t_b = one_s / 2, one_s - 1
    r1 = rates(one, t_a, t_b)
    u1 = sum(r1.values()) / cap
    bdp = cap / 8 * 0.56
    cw = [v for rec in ser1 if t_a <= rec["t"] < t_b for v in rec.get("cwnd", {}).values()]
    q = [xcp_of(r).get("queue_bytes", 0) for r in ser1 if t_a <= r["t"] < t_b and "xcp" in r]
    slq = [(r.get("sl") or {}).get("queue_held", 0) + (r.get("sl") or {}).get("pacer_held", 0)
           for r in ser1 if t_a <= r["t"] < t_b and "sl" in r]
    print("  capacity (the stage's, IP bits/s) %.0f; BDP at 0.56 s %.0f bytes" % (cap, bdp))
    print("  one flow: utilisation over %.0f-%.0f s %.3f (goodput %.2f Mbit/s)" % (
        t_a, t_b, u1, sum(r1.values()) / 1e6))
    if cw:
        print("  one flow: cwnd_xcp over the window min %d mean %d max %d bytes (%.2f-%.2f BDP)" % (
            min(cw), sum(cw) / len(cw), max(cw), min(cw) / bdp, max(cw) / bdp))
    if q:
        print("  one flow: hub queue over the window mean %.0f max %d bytes" % (
            sum(q) / len(q), max(q)))
    if slq:
        print("  one flow: satlink queue over the window mean %.1f max %d packets" % (
            sum(slq) / len(slq), max(slq)))
    checks.append((u1 >= umin, "one flow: utilisation %.3f >= %.2f" % (u1, umin)))
    if legacy:
        checks += [
            (L["legacy"] == 1 and L["legacy_flows_new"] >= 5,
             "hub: legacy mode, %d legacy flows (the transfer, 1 and 4)" % L["legacy_flows_new"]),
            (L["legacy_acks_clamped"] > 0 and L["legacy_feedback_neg_bytes"] > 0,
             "hub: %d of %d ACKs to the senders clamped, negative feedback %d bytes" % (
                 L["legacy_acks_clamped"], L["legacy_acks_seen"],
                 L["legacy_feedback_neg_bytes"])),
            (L["legacy_rwnd_no_scale"] == 0 and L["legacy_table_full"] == 0,
             "hub: every flow's window scale seen (%d without), table never full (%d)" % (
                 L["legacy_rwnd_no_scale"], L["legacy_table_full"])),
            (L["control_intervals"] > 10, "hub: %d control intervals" % L["control_intervals"]),
            (bool(slq) and sum(slq) / len(slq) <= qmax,
             "one flow: mean satlink queue %.1f <= %.0f packets" % (
                 sum(slq) / len(slq) if slq else -1, qmax)),
        ]
    elif expect_fb:
        checks += [
            (L["xcp_to_link"] > 0 and L["xcp_pkts_with_rtt"] > 0,
             "hub: XCP packets to the link %d, with H_rtt %d" % (L["xcp_to_link"],
                                                                L["xcp_pkts_with_rtt"])),
            (L["feedback_lowered"] > 0 and L["feedback_negative_bytes"] > 0,
             "hub: feedback lowered %d times, negative feedback %d bytes" % (
                 L["feedback_lowered"], L["feedback_negative_bytes"])),
            (L["control_intervals"] > 10, "hub: %d control intervals" % L["control_intervals"]),
            (fc["feedback_applied"] > 0 and fc["feedback_neg_bytes"] > 0,
             "fh agent: feedback applied %d, negative %d bytes, windows clamped %d" % (
                 fc["feedback_applied"], fc["feedback_neg_bytes"], fc["rwnd_clamped"])),
            (mc["acks_echoed"] > 0, "mh agent: %d ACKs echoed" % mc["acks_echoed"]),
            (bool(cw) and 0.25 * bdp <= min(cw) and max(cw) <= 4 * bdp,
             "fh agent: cwnd_xcp within [0.25, 4] BDP over the steady window"),
        ]
    # ---- four flows
    four = load(d + "/four-recv.json")
    print("  four flows, per-flow goodput (Mbit/s) and Jain's index per window:")
    for (a, b) in ((2, 4), (6, 8), (10, 12), (14, 16), (16, 20), (20, 24), (24, 28),
                   (29, 32), (33, 36)):
        r = rates(four, a, b)
        act = [v for v in r.values() if v > 0]
        print("    %4.0f-%-4.0f s: %s  sum %.3f of C  Jain(active) %.3f" % (
            a, b, " ".join("%s:%.2f" % (k, v / 1e6) for k, v in r.items()),
            sum(r.values()) / cap, jain(act)))
    r = rates(four, 20, 28)
    tot = sum(r.values())
    print("  four flows 20-28 s: Jain %.3f, utilisation %.3f" % (jain(r.values()), tot / cap))
    checks.append((len(r) == 4 and min(r.values()) >= starve * tot,
                   "four flows 20-28 s: every flow >= %.2f of the goodput (lowest %.3f)" % (
                       starve, min(r.values()) / tot if tot else 0)))
    checks.append((tot / cap >= umin, "four flows 20-28 s: utilisation %.3f >= %.2f" % (
        tot / cap, umin)))
    if jain_min > 0:
        checks.append((len(r) == 4 and jain(r.values()) >= jain_min,
                       "four flows 20-28 s: Jain %.3f >= %.2f" % (jain(r.values()), jain_min)))
    for ok, w in checks:
        print("  %s %s" % ("ok  " if ok else "FAIL", w))
    sys.exit(0 if all(ok for ok, _ in checks) else 1)


if __name__ == "__main__":
    main()
