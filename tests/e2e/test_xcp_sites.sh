#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e: XCP (issue 9, docs/xcp.md) with two sites behind one hub: the stage's
# `scope: session` (one controller per satlink session, i.e. per remote
# terminal) end to end, with real Linux CUBIC senders made CUBIC-XCP by the
# host agents. test_xcp_chain.sh has one terminal, where the two scopes are one
# controller; here each session's pacer is a bottleneck of its own.
#
#   fh --- [hub: satlink + xcp, 2 sessions] === [emulator, GEO] === (bridge) === [term A] --- mh  10.20.1.1
#   xcp_agent sender                                                       \=== [term B] --- mhb 10.20.2.1
#                                                                                 xcp_agent receiver on each
#
#   1. testbed.sh's tb_topology_chain_sites: the emulator's terminal side on a
#      Linux bridge that joins both terminal boxes (the hub's frames go to the
#      default peer_mac, broadcast: each terminal keeps its own terminal id's
#      and counts the other's rx_no_session). Policies xcp_sites_hub.yaml
#      (terminals 1001 and 1002, satlink at 5 Mbit/s forward per session, the
#      XCP stage with scope session), xcp_sites_terminal_a.yaml, _b.yaml,
#      xcp_sites_emulator.yaml (270 ms each way, 20 / 8 Mbit/s: four times a
#      session's rates, so the pacers are the bottlenecks). Agents on fh
#      (sender, both sites' prefixes through its TUN), mh and mhb (receivers).
#   2. Both sessions up (an echo to each host), then an XS_XFER_KB (3072) kB
#      transfer fh -> mh and one fh -> mhb: sha256 equal.
#   3. Three CUBIC-XCP flows: 1 and 2 to mh over 0-26 s, 3 to mhb over 6-18 s
#      (site A's two flows alone, then with B's, then alone again); the hub's
#      /satgw/xcp (both sessions' controllers) sampled every 0.5 s. Asserted,
#      from what the test controls:
#      - the hub ran two controllers (scope session, controllers 2, the exit
#        JSON's sessions list terminals 1001 and 1002), each with one
#        session's capacity (5 Mbit/s x the IP share of the line the session
#        carried: at most 1400 / 1436, at least a 256-byte frame's), the
#        link's capacity their sum;
#      - each controller's input over the flows phase (exit JSON minus a
#        snapshot before it) is its own site's traffic: within [0.95, 1.30]
#        of the bytes its site's flows delivered (IP and XCP headers make it
#        ~1.05; the flows are sized so that A's and B's deliveries differ by
#        ~2x, so a controller fed the other site's or both sites' packets
#        falls outside); each saw XCP packets with H_rtt, lowered feedback
#        (negative bytes) and ran > 10 control intervals;
#      - each controller's flow estimate (sum of rtt x s / cwnd per interval,
#        ~1 per window-limited flow), its mean over 10-18 s: A's in [1.3, 3.0]
#        (two flows), B's in [0.5, 1.6] (one);
#      - per-session utilisation over 10-18 s (all three flows running;
#        goodput / the session's capacity) >= XS_UTIL_MIN (0.5), and no flow
#        below XS_STARVE (0.05) of its site's goodput there;
#      - the agents: fh applied feedback, mh and mhb echoed ACKs;
#      - each terminal counted the other's frames (rx_other_terminal > 0, no
#        loss: the bridge is a broadcast medium), none as rx_no_session, and
#        delivered its own.
#      Reported, not asserted: per-flow goodputs and per-session utilisation
#      per window (2-6 s: A alone, 10-18 s: all three, 20-26 s: A alone), the
#      controllers' queues and feedback. Measured figures: docs/xcp.md.
#      The same test against a hub with `scope: carrier` (XS_POLICY_HUB, run by
#      hand) fails: one controller, no per-session input, and site B's flow
#      under the utilisation floor (A's pacer keeps a standing queue whose
#      queue term cancels the spare capacity the carrier's controller sees,
#      and B's flow gets a per-flow share of the input: ~0.4 of its session).
#   4. Exit JSONs: the accounting identity at hub and both terminals (stats.py).
# Usage: test_xcp_sites.sh /path/to/satgw [/path/to/xcp_agent]
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

P=$TB_E2E_DIR/policies
XS_XFER_KB=${XS_XFER_KB:-3072}
XS_UTIL_MIN=${XS_UTIL_MIN:-0.5}
XS_STARVE=${XS_STARVE:-0.05}
XS_POLICY_HUB=${XS_POLICY_HUB:-$P/xcp_sites_hub.yaml}
XS_UNTIL=30 # the flows' receivers count until then (A's flows stop at 26 s: 4 s to drain)

tb_init "${1:-}"
# Namespaces and DPDK file prefixes carry "xs" (unique to this test).
TB_NS_FH="xs-fh-$TB_ID" TB_NS_MH="xs-mh-$TB_ID" TB_NS_HUB="xs-hub-$TB_ID"
TB_NS_EMU="xs-emu-$TB_ID" TB_NS_TERM="xs-term-$TB_ID" TB_PREFIX="xs-$TB_ID"
TB_NS_TERMB="xs-termb-$TB_ID" TB_NS_MHB="xs-mhb-$TB_ID" TB_NS_BR="xs-br-$TB_ID"
AGENT=${2:-$(dirname "$TB_SATGW")/../control/agent/xcp_agent}
[ -x "$AGENT" ] || tb_fail "no xcp_agent at $AGENT (give it as the second argument)"
AGENT=$(readlink -f "$AGENT")
tb_topology_chain_sites

for f in "$XS_POLICY_HUB" "$P/xcp_sites_terminal_a.yaml" "$P/xcp_sites_terminal_b.yaml" \
	"$P/xcp_sites_emulator.yaml"; do
	"$TB_SATGW" --check-config "$f" >"$TB_DIR/check.out" 2>&1 ||
		{ cat "$TB_DIR/check.out" >&2; tb_fail "$(basename "$f") does not validate"; }
done
tb_box_start emu "$P/xcp_sites_emulator.yaml" 1
tb_box_start hub "$XS_POLICY_HUB" 0
tb_box_start term "$P/xcp_sites_terminal_a.yaml" 1
tb_box_start termb "$P/xcp_sites_terminal_b.yaml" 0

# start_agent NS ROLE LOCAL GW NET...: the agent, then the routes to each NET
# through its TUN (they go with the TUN) and its marked packets by the wire.
declare -A AGENT_PID=()
start_agent() {
	local ns=$1 role=$2 local=$3 gw=$4 dev net
	shift 4
	dev=${ns}0
	tb_bg "$ns" "agent-$ns" "$AGENT" --role "$role" --tun xctun --no-ipv6 \
		--stats-json "$TB_DIR/agent-$ns.json"
	AGENT_PID[$ns]=$TB_LAST_PID
	for _ in $(seq 1 100); do
		grep -q ready "$TB_DIR/agent-$ns.log" 2>/dev/null && break
		tb__alive "$TB_LAST_PID" || break
		sleep 0.1
	done
	grep -q ready "$TB_DIR/agent-$ns.log" ||
		{ cat "$TB_DIR/agent-$ns.log" >&2; tb_fail "xcp_agent on $ns did not start"; }
	for net in "$@"; do
		tb_ns "$ns" ip route replace "$net" dev xctun src "$local"
		tb_ns "$ns" ip route replace "$net" via "$gw" dev "$dev" table 100
	done
	tb_ns "$ns" ip rule add fwmark 0x5843 lookup 100 pref 100
	tb_ns "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.xctun.rp_filter=0
}
start_agent fh sender "$TB_IP_FH" "$TB_GW_FH" 10.20.1.0/24 10.20.2.0/24
start_agent mh receiver "$TB_IP_MH" "$TB_GW_MH" 10.10.0.0/24
start_agent mhb receiver "$TB_IP_MHB" "$TB_GW_MHB" 10.10.0.0/24
tb_log "agents: fh sender, mh and mhb receivers (TUN xctun, protocol 254)"
tb_wait_path fh "$TB_IP_MH" 30
tb_wait_path fh "$TB_IP_MHB" 30
tb_box_wait_tel hub 10 /satgw/satlink 'd["0"]["state"] == "up" and d["1"]["state"] == "up"'
tb_log "both satlink sessions up"

# ---- 2. an intact transfer to each site ------------------------------------------
head -c $((XS_XFER_KB * 1024)) /dev/urandom >"$TB_DIR/xs.bin"
TB_TCP_CC=cubic tb_xfer fh mh "$TB_IP_MH" "$TB_DIR/xs.bin" 60
TB_TCP_CC=cubic tb_xfer fh mhb "$TB_IP_MHB" "$TB_DIR/xs.bin" 60

# ---- 3. two flows to site A, one to site B ------------------------------------------
tb_box_tel hub /satgw/xcp >"$TB_DIR/xcp-before.json"
tb_log "CUBIC-XCP flows: 1, 2 to mh over 0-26 s; 3 to mhb over 6-18 s"
port=$(tb_rand_port)
t0=$("$TB_PY" -c 'import time; print("%.3f" % (time.monotonic() + 1.5))')
tb_bg mh flows-recv-a "$TB_PY" "$TB_E2E_DIR/xcp_flows.py" recv --bind "$TB_IP_MH" \
	--port "$port" --t0 "$t0" --until "$XS_UNTIL" --result "$TB_DIR/flows-recv-a.json"
rpa=$TB_LAST_PID
tb_bg mhb flows-recv-b "$TB_PY" "$TB_E2E_DIR/xcp_flows.py" recv --bind "$TB_IP_MHB" \
	--port "$port" --t0 "$t0" --until "$XS_UNTIL" --result "$TB_DIR/flows-recv-b.json"
rpb=$TB_LAST_PID
tb_wait_listen mh "$port" 10
tb_wait_listen mhb "$port" 10
tb_bg fh flows-send "$TB_PY" "$TB_E2E_DIR/xcp_flows.py" send --host "$TB_IP_MH" --port "$port" \
	--t0 "$t0" --flow "1:0:26:cubic::$TB_IP_MH" --flow "2:0:26:cubic::$TB_IP_MH" \
	--flow "3:6:18:cubic::$TB_IP_MHB"
sp=$TB_LAST_PID
tb_bg_local flows-sample "$TB_PY" "$TB_E2E_DIR/xcp_sample.py" "$TB_E2E_DIR" \
	"$(tb_box_prefix hub)" "$t0" "$XS_UNTIL" "$TB_DIR/flows-series.json"
smp=$TB_LAST_PID
tb_wait_pid "$sp" $((XS_UNTIL + 20)) || { cat "$TB_DIR/flows-send.log" >&2; tb_fail "flows: sender failed"; }
tb_wait_pid "$rpa" 20 || { cat "$TB_DIR/flows-recv-a.log" >&2; tb_fail "flows: receiver on mh failed"; }
tb_wait_pid "$rpb" 20 || { cat "$TB_DIR/flows-recv-b.log" >&2; tb_fail "flows: receiver on mhb failed"; }
tb_wait_pid "$smp" 20 || { cat "$TB_DIR/flows-sample.log" >&2; tb_fail "flows: sampler failed"; }

for ns in fh mh mhb; do
	kill -TERM "${AGENT_PID[$ns]}"
	tb_wait_pid "${AGENT_PID[$ns]}" 10 || tb_fail "xcp_agent on $ns did not exit cleanly"
done
tb_boxes_stop_keep run hub term termb emu

# ---- checks -----------------------------------------------------------------------
"$TB_PY" - "$TB_DIR" "$XS_UTIL_MIN" "$XS_STARVE" >&2 <<'PY' || tb_fail "XCP per-session checks failed ($TB_DIR)"
import json
import sys

d, umin, starve = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])


def load(name):
    with open(d + "/" + name) as f:
        return json.load(f)


hub, ta, tbx = load("hub-run.json"), load("term-run.json"), load("termb-run.json")
before = load("xcp-before.json")
ra, rb = load("flows-recv-a.json"), load("flows-recv-b.json")
series = load("flows-series.json")
ag = {ns: load("agent-%s.json" % ns)["counters"] for ns in ("fh", "mh", "mhb")}
x = hub["xcp"]
sess = {s["terminal_id"]: s for s in x["sessions"]}
pre = {int(v["terminal_id"]): v for k, v in before.items() if k.isdigit()}
site = {1001: ("A", ra, ("1", "2")), 1002: ("B", rb, ("3",))}
checks = []
# Capacity of one session: satlink's per-session rate times the IP share of the line the
# session carried (docs/xcp.md): at most a full frame's, 1400 / (1400 + 14 + 22), and here
# about 0.955 (1520-byte XCP packets are two frames of 760), at least that of frames of
# frame_size_min (256: 0.88 of the full-frame value). A controller of both sessions would
# have twice that.
cap1 = 5e6 * 1400 / (1400 + 14 + 22)
capl = 5e6 * 256 / (256 + 14 + 22)
checks.append((x["scope"] == "session" and x["link"]["per_session"] == 1 and
               x["link"]["controllers"] == 2 and sorted(sess) == [1001, 1002],
               "hub: scope %s, %d controllers, sessions of terminals %s" % (
                   x["scope"], x["link"]["controllers"], sorted(sess))))
# The exit JSON writes reals with 12 significant digits.
checks.append((len(sess) == 2 and
               all(capl * (1 - 1e-5) <= s["capacity_bps"] <= cap1 * (1 + 1e-5) for s in sess.values()) and
               abs(x["link"]["capacity_bps"] / sum(s["capacity_bps"] for s in sess.values()) - 1) < 1e-5,
               "hub: each controller's capacity %s bit/s is one session's (%.0f with full frames), "
               "the link's %.0f their sum" % (
                   " and ".join("%.0f" % s["capacity_bps"] for s in sess.values()), cap1,
                   x["link"]["capacity_bps"])))

def rates(recv, fids, a, b):
    bs = recv["bin_s"]
    return {f: sum(recv["flows"].get(f, [])[int(a / bs):int(b / bs)]) * 8.0 / (b - a) for f in fids}


def steady(key, tid, a=10, b=18):
    """Mean of a controller's telemetry KEY over [a, b) s (tid None: the link's)."""
    v = [float(r["xcp"][k][key]) if tid else float(r["xcp"][key])
         for r in series if a <= r["t"] < b and "xcp" in r
         for k in (r["xcp"] if tid else ["link"])
         if not tid or (k.isdigit() and int(r["xcp"][k]["terminal_id"]) == tid)]
    return sum(v) / len(v) if v else float("nan")


print("  per-flow goodput (Mbit/s), per-session utilisation (goodput / %.3f Mbit/s), the hub's "
      "XCP queues (mean kB: session A, B; the link's sum):" % (cap1 / 1e6))
for a, b in ((2, 6), (10, 18), (20, 26)):
    ga, gb = rates(ra, ("1", "2"), a, b), rates(rb, ("3",), a, b)
    print("    %2d-%-2d s: A %s sum %.2f (util %.3f) | B %s (util %.3f) | queue %.1f, %.1f; %.1f" % (
        a, b, " ".join("%s:%.2f" % (k, v / 1e6) for k, v in ga.items()), sum(ga.values()) / 1e6,
        sum(ga.values()) / cap1, " ".join("%s:%.2f" % (k, v / 1e6) for k, v in gb.items()),
        sum(gb.values()) / cap1, steady("queue_bytes", 1001, a, b) / 1e3,
        steady("queue_bytes", 1002, a, b) / 1e3, steady("queue_bytes", None, a, b) / 1e3))

for tid, (name, recv, fids) in sorted(site.items()):
    g = rates(recv, fids, 10, 18)
    tot = sum(g.values())
    checks.append((tot / cap1 >= umin, "site %s: utilisation 10-18 s %.3f >= %.2f" % (
        name, tot / cap1, umin)))
    checks.append((tot > 0 and min(g.values()) >= starve * tot,
                   "site %s: every flow >= %.2f of the site's goodput 10-18 s" % (name, starve)))
    s = sess.get(tid)
    if s is None or tid not in pre:
        checks.append((False, "site %s: no controller of its own at the hub" % name))
        continue
    delivered = sum(sum(recv["flows"].get(f, [])) for f in fids)
    other = sum(sum(r2["flows"].get(f, [])) for t2, (_, r2, f2) in site.items() if t2 != tid for f in f2)
    inp = s["input_bytes"] - int(pre[tid]["input_bytes"])
    print("  site %s (terminal %d): controller input over the flows %d B, its flows delivered %d B "
          "(ratio %.3f; the other site's %d B); 10-18 s: goodput %.2f Mbit/s, utilisation %.3f, "
          "flow estimate %.2f, input %.2f Mbit/s; %d intervals, feedback +%d / -%d B" % (
              name, tid, inp, delivered, inp / delivered if delivered else 0, other, tot / 1e6,
              tot / cap1, steady("flows", tid), steady("input_bps", tid) / 1e6,
              s["control_intervals"], s["feedback_positive_bytes"], s["feedback_negative_bytes"]))
    checks.append((delivered > 0 and 0.95 * delivered <= inp <= 1.30 * delivered,
                   "site %s: its controller's input %d B within [0.95, 1.30] of its flows' %d B" % (
                       name, inp, delivered)))
    checks.append((s["xcp_pkts_with_rtt"] > 0 and s["feedback_negative_bytes"] > 0 and
                   s["control_intervals"] > 10,
                   "site %s: XCP packets with H_rtt %d, negative feedback %d B, %d control intervals" % (
                       name, s["xcp_pkts_with_rtt"], s["feedback_negative_bytes"],
                       s["control_intervals"])))
    # The controller's flow estimate (sum of rtt x s / cwnd over an interval): ~1 per
    # window-limited flow; the bounds tell two from one with room for the noise.
    fl = steady("flows", tid)
    lo, hi = {2: (1.3, 3.0), 1: (0.5, 1.6)}[len(fids)]
    checks.append((lo <= fl <= hi, "site %s: its controller's flow estimate 10-18 s %.2f within "
                   "[%.1f, %.1f] (%d flows)" % (name, fl, lo, hi, len(fids))))
L = x["link"]
print("  hub link (%s): input %d B, feedback +%d / -%d B, %d intervals, flow estimate 10-18 s %.2f" % (
    x["scope"], L["input_bytes"], L["feedback_positive_bytes"], L["feedback_negative_bytes"],
    L["control_intervals"], steady("flows", None)))
checks.append((ag["fh"]["feedback_applied"] > 0 and ag["fh"]["feedback_neg_bytes"] > 0,
               "fh agent: feedback applied %d, negative %d B" % (
                   ag["fh"]["feedback_applied"], ag["fh"]["feedback_neg_bytes"])))
checks.append((ag["mh"]["acks_echoed"] > 0 and ag["mhb"]["acks_echoed"] > 0,
               "mh, mhb agents: ACKs echoed %d, %d" % (ag["mh"]["acks_echoed"],
                                                        ag["mhb"]["acks_echoed"])))
for name, t in (("A", ta), ("B", tbx)):
    ot = t["satlink"]["counters"]["rx_other_terminal"]
    ns = t["satlink"]["counters"]["rx_no_session"]
    dl = sum(s["pkts_delivered"] for s in t["satlink"]["sessions"])
    checks.append((ot > 0 and ns == 0 and dl > 0, "terminal %s: the other terminal's frames "
                   "counted rx_other_terminal %d (rx_no_session %d), own packets delivered %d"
                   % (name, ot, ns, dl)))
for ok, w in checks:
    print("  %s %s" % ("ok  " if ok else "FAIL", w))
sys.exit(0 if all(ok for ok, _ in checks) else 1)
PY
for box in hub term termb; do
	"$TB_PY" "$TB_E2E_DIR/stats.py" check "$TB_DIR/$box-run.json" --expect 'mempool.in_use == 0' >&2 ||
		tb_fail "$box accounting ($TB_DIR/$box-run.json)"
done
tb_pass
