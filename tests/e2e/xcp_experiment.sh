#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The seed's (001, SatERN) scenarios on the chain of test_xcp_chain.sh, scaled to
# this machine (docs/xcp.md "XCP experiments"): fh - hub (satlink 10 Mbit/s,
# XCP stage on or off) - emulator (270 ms each way) - terminal - mh.
#
# Usage: xcp_experiment.sh SATGW XCP_AGENT OUTDIR GW SCENARIO...
#   GW: xcp (xcp_hub.yaml) or droptail (the same with `xcp: {enabled: false}`:
#       satlink's queue without XCP; the agents still run, nothing lowers H_feedback);
#       without satlink at hub and terminal (xcp_hub_shaper.yaml, xcp_terminal_plain.yaml),
#       the stage's own shaper at 9 Mbit/s is the bottleneck: xcp2q (separate XCP and
#       other queues, the share adapted) or xcp1q (the same shaper with one queue);
#       legacy: xcp_hub.yaml with xcp.legacy (plain TCP's ACKs clamped to its share);
#       xcpd: the shaper at the seed's 3 Mbit/s, one queue (policies/xcp_d_hub.yaml), for d;
#       legacyd: the same in legacy mode, for dl; legacy1q: xcp1q in legacy mode
#   XE_CAPACITY_BPS (env): xcp.capacity_bps set (results then named GW-capN-...)
#   SCENARIO (each run on the same boxes, one after the other):
#     a          one CUBIC-XCP flow, XE_A_S (40) s
#     a-cubic    one plain CUBIC flow (no agent on its path; for GW legacy)
#     b-xcp      four CUBIC-XCP flows, start 0/5/10/15 s, stop 50/50/45/40 s
#     b-cubic    the same with four plain CUBIC flows (no agent on their path)
#     c-K-R      K CUBIC-XCP against K plain CUBIC, all from 0 to XE_C_S (30) s; R: run tag
#     d[-R]      the dynamic bottleneck (the seed's Fig. 8/9): CUBIC-XCP flow 1 through a
#                drop-tail "Router 1" (policies/xcp_d_router1.yaml: a second emulator box
#                inside fh, 2 Mbit/s, 40 packets, +200 ms) from 0 to 3 XE_D_S (40) s;
#                CUBIC-XCP flow 2 (to mh's 10.20.1.3, not through Router 1) from XE_D_S
#                to 2 XE_D_S. Meant for GW xcpd with XE_EMU=xcp_d_emulator.yaml (330 ms
#                each way: base RTTs ~0.86 and ~0.66 s). Also writes GW-d-R-ss.json
#                (the sender's ss -ti and Router 1's queue); xcp_analyze_d.py.
#     cu-X-Y-R   X CUBIC-XCP against Y plain CUBIC (unequal counts), as c-K-R; xcp_analyze_d.py cu
#     dl[-R]     (d) with plain CUBIC senders (no agent; GW legacyd: xcpd in legacy mode): flow 1 to mh's 10.20.1.2 through Router 1, flow 2 to 10.20.1.4
#   XE_EMU (env): the emulator's policy file in policies/ (xcp_emulator.yaml)
# Plain CUBIC flows use second addresses (fh 10.10.0.3, mh 10.20.1.2) routed past
# the agents' TUNs. Writes OUTDIR/GW-SCENARIO-{recv,series}.json and the hub's
# exit JSON OUTDIR/GW-hub.json; xcp_analyze.py makes the figures.
set -euo pipefail
SATGW=${1:?usage}
AGENT=$(readlink -f "${2:?usage}")
OUT=$(readlink -f "${3:?usage}")
GW=${4:?usage}
shift 4
export TB_BUDGET=${TB_BUDGET:-1500}
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"
XE_A_S=${XE_A_S:-40}
XE_C_S=${XE_C_S:-30}
XE_D_S=${XE_D_S:-40}
P=$TB_E2E_DIR/policies
mkdir -p "$OUT"

tb_init "$SATGW"
XT=${XE_NS_TAG:-xce}
TB_NS_FH="$XT-fh-$TB_ID" TB_NS_MH="$XT-mh-$TB_ID" TB_NS_HUB="$XT-hub-$TB_ID"
TB_NS_EMU="$XT-emu-$TB_ID" TB_NS_TERM="$XT-term-$TB_ID" TB_PREFIX="$XT-$TB_ID"
tb_topology chain
TERMP=$P/xcp_terminal.yaml
case $GW in
xcp) HUBP=$P/xcp_hub.yaml ;;
xcp2q) HUBP=$P/xcp_hub_shaper.yaml TERMP=$P/xcp_terminal_plain.yaml ;;
legacy) HUBP=$TB_DIR/xcp_hub_legacy.yaml
	sed 's/^xcp: {enabled: true}/xcp: {enabled: true, legacy: true}/' "$P/xcp_hub.yaml" >"$HUBP" ;;
xcpd) HUBP=$P/xcp_d_hub.yaml TERMP=$P/xcp_terminal_plain.yaml ;;
legacyd) HUBP=$TB_DIR/xcp_d_hub_legacy.yaml TERMP=$P/xcp_terminal_plain.yaml
	sed 's/separate_queues: false}/separate_queues: false, legacy: true}/' \
		"$P/xcp_d_hub.yaml" >"$HUBP" ;;
legacy1q) HUBP=$TB_DIR/xcp_hub_1q_legacy.yaml TERMP=$P/xcp_terminal_plain.yaml
	sed 's/separate_queues: true}/separate_queues: false, legacy: true}/' \
		"$P/xcp_hub_shaper.yaml" >"$HUBP" ;;
xcp1q) HUBP=$TB_DIR/xcp_hub_1q.yaml TERMP=$P/xcp_terminal_plain.yaml
	sed 's/separate_queues: true/separate_queues: false/' "$P/xcp_hub_shaper.yaml" >"$HUBP" ;;
droptail) HUBP=$TB_DIR/xcp_hub_off.yaml
	sed 's/^xcp: {enabled: true}/xcp: {enabled: false}/' "$P/xcp_hub.yaml" >"$HUBP" ;;
*) tb_fail "GW: xcp, droptail, legacy, xcp2q, xcp1q, legacy1q, xcpd or legacyd" ;;
esac
# XE_CAPACITY_BPS: the stage's capacity given (xcp.capacity_bps) instead of its default.
if [ -n "${XE_CAPACITY_BPS:-}" ]; then
	sed "s/^xcp: {enabled: true}/xcp: {enabled: true, capacity_bps: $XE_CAPACITY_BPS}/" \
		"$HUBP" >"$TB_DIR/xcp_hub_cap.yaml"
	HUBP=$TB_DIR/xcp_hub_cap.yaml
	GW=$GW-cap$XE_CAPACITY_BPS
fi
tb_box_start emu "$P/${XE_EMU:-xcp_emulator.yaml}" 1
tb_box_start hub "$HUBP" 0
tb_box_start term "$TERMP" 0

start_agent() {
	local ns=$1 role=$2 local=$3 net=$4 gw=$5 dev=${1}0
	tb_bg "$ns" "agent-$ns" "$AGENT" --role "$role" --tun xctun --no-ipv6 \
		--stats-json "$TB_DIR/agent-$ns.json"
	eval "AGENT_${ns^^}=$TB_LAST_PID"
	for _ in $(seq 1 100); do
		grep -q ready "$TB_DIR/agent-$ns.log" 2>/dev/null && break
		sleep 0.1
	done
	grep -q ready "$TB_DIR/agent-$ns.log" || tb_fail "xcp_agent on $ns did not start"
	tb_ns "$ns" ip route replace "$net" dev xctun src "$local"
	tb_ns "$ns" ip route replace "$net" via "$gw" dev "$dev" table 100
	tb_ns "$ns" ip rule add fwmark 0x5843 lookup 100 pref 100
	tb_ns "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.xctun.rp_filter=0
}
start_agent fh sender "$TB_IP_FH" 10.20.1.0/24 "$TB_GW_FH"
start_agent mh receiver "$TB_IP_MH" 10.10.0.0/24 "$TB_GW_MH"
# The plain CUBIC hosts: second addresses whose routes bypass the TUNs.
tb_ns fh ip addr add 10.10.0.3/24 dev fh0
tb_ns mh ip addr add 10.20.1.2/24 dev mh0
tb_ns fh ip route replace 10.20.1.2/32 via "$TB_GW_FH" dev fh0 src 10.10.0.3
tb_ns mh ip route replace 10.10.0.3/32 via "$TB_GW_MH" dev mh0 src 10.20.1.2
tb_wait_path fh "$TB_IP_MH" 30
XF=$TB_IP_FH:$TB_IP_MH
PF=10.10.0.3:10.20.1.2

run_flows() {
	local tag=$1 until=$2 port t0 rp sp smp ssp f
	shift 2
	port=$(tb_rand_port)
	t0=$("$TB_PY" -c 'import time; print("%.3f" % (time.monotonic() + 1.5))')
	tb_bg mh "$tag-recv" "$TB_PY" "$TB_E2E_DIR/xcp_flows.py" recv --bind 0.0.0.0 \
		--port "$port" --t0 "$t0" --until "$until" --result "$OUT/$GW-$tag-recv.json"
	rp=$TB_LAST_PID
	tb_wait_listen mh "$port" 10
	local -a fl=()
	for f in "$@"; do fl+=(--flow "$f"); done
	tb_bg fh "$tag-send" "$TB_PY" "$TB_E2E_DIR/xcp_flows.py" send --host "$TB_IP_MH" \
		--port "$port" --t0 "$t0" "${fl[@]}"
	sp=$TB_LAST_PID
	tb_bg_local "$tag-sample" "$TB_PY" "$TB_E2E_DIR/xcp_sample.py" "$TB_E2E_DIR" \
		"$(tb_box_prefix hub)" "$t0" "$until" "$OUT/$GW-$tag-series.json" \
		--agent "$AGENT_FH" "$TB_DIR/agent-fh.json"
	smp=$TB_LAST_PID
	ssp=
	if [ "${tag%%-*}" = d ] || [ "${tag%%-*}" = dl ]; then
		# (d): the sender's kernel windows (ss -ti) and Router 1's queue.
		tb_bg_local "$tag-ss" "$TB_PY" "$TB_E2E_DIR/xcp_analyze_d.py" sample "$TB_NS_FH" \
			"$TB_E2E_DIR" "$TB_PREFIX-r1" "$t0" "$until" "$OUT/$GW-$tag-ss.json"
		ssp=$TB_LAST_PID
	fi
	tb_wait_pid "$sp" "$((${until%.*} + 20))" || tb_fail "$tag: sender failed"
	tb_wait_pid "$rp" 20 || tb_fail "$tag: receiver failed"
	tb_wait_pid "$smp" 20 || tb_fail "$tag: sampler failed"
	[ -z "$ssp" ] || tb_wait_pid "$ssp" 20 || tb_fail "$tag: ss sampler failed"
	# The link drains before the next scenario: satlink's queue empty.
	case $GW in
	xcp1q* | xcp2q* | legacy1q* | xcpd* | legacyd*)
		tb_box_wait_tel hub 30 /satgw/xcp \
			'd["q_xcp_queue_bytes"] + d["q_other_queue_bytes"] == 0' ;;
	*) tb_box_wait_tel hub 30 /satgw/satlink \
			'd["0"]["queue_held"] + d["0"]["pacer_held"] == 0' ;;
	esac
	tb_log "$GW $tag done"
}

# Scenario (d): Router 1, a drop-tail emulator box (its own namespace) between
# two veths of fh, on flow 1's way only:
#   fh: agent --raw, fwmark, table 100: 10.20.1.1/32 via R1--> xdfa0 --> [r1 box] --> xdfb0
#   fh forwards what comes out of xdfb0 (rule iif xdfb0 -> table 101) out of fh0 to the hub.
# Flow 2 goes to mh's 10.20.1.3 (through the agents like flow 1, table 100's /24 by fh0).
# The ACKs of both come back by fh0. fh's own source address arrives on xdfb0:
# accept_local. Names carry XE_NS_TAG; the namespace and the box go with the testbed.
R1_UP=
d_setup() {
	[ -z "$R1_UP" ] || return 0
	local ns="$XT-r1-$TB_ID" pfx="$TB_PREFIX-r1" pol=$P/xcp_d_router1.yaml
	ip netns add "$ns" || tb_fail "cannot create $ns"
	TB_NAMESPACES+=("$ns")
	ip netns exec "$ns" ip link set lo up
	ip link add name xdfa0 netns "$TB_NS_FH" address 02:00:00:00:0d:01 type veth \
		peer name xdea0 netns "$ns" address 02:00:00:00:0d:fe
	ip link add name xdfb0 netns "$TB_NS_FH" address 02:00:00:00:0e:01 type veth \
		peer name xdeb0 netns "$ns" address 02:00:00:00:0e:fe
	for i in xdfa0 xdfb0; do
		tb_ns fh ethtool -K "$i" tx off rx off tso off gso off gro off >/dev/null 2>&1 || true
		tb_ns fh ip link set "$i" up
	done
	for i in xdea0 xdeb0; do
		ip netns exec "$ns" ethtool -K "$i" tx off rx off tso off gso off gro off \
			>/dev/null 2>&1 || true
		ip netns exec "$ns" ip link set "$i" up
	done
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.disable_ipv6=1
	tb_log "starting satgw r1 (Router 1), policy $(basename "$pol")"
	ip netns exec "$ns" "$TB_SATGW" --no-huge -m 256 --no-pci --file-prefix "$pfx" -l 1 \
		--vdev "net_af_packet0,iface=xdea0,framecnt=2048" \
		--vdev "net_af_packet1,iface=xdeb0,framecnt=2048" -- -c "$pol" \
		--stats-json "$TB_DIR/stats-r1.json" -q >"$TB_DIR/satgw-r1.log" 2>&1 &
	R1_PID=$!
	TB_BG_PIDS+=("$R1_PID")
	"$TB_PY" "$TB_E2E_DIR/sgwtel.py" --wait 20 --pid "$R1_PID" "$pfx" /satgw/stats \
		>/dev/null 2>"$TB_DIR/wait-r1.err" || tb_fail "satgw r1 did not become ready"
	tb_ns fh sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.xdfb0.rp_filter=0 net.ipv4.conf.xdfb0.accept_local=1 \
		net.ipv4.conf.all.send_redirects=0
	tb_ns fh ip neigh replace 10.10.9.9 lladdr 02:00:00:00:0e:01 nud permanent dev xdfa0
	tb_ns fh ip route replace 10.20.1.1/32 via 10.10.9.9 dev xdfa0 onlink table 100
	tb_ns fh ip route replace 10.20.1.0/24 via "$TB_GW_FH" dev fh0 table 101
	tb_ns fh ip rule add iif xdfb0 lookup 101 pref 90
	tb_ns mh ip addr add 10.20.1.3/24 dev mh0
	# dl: the plain CUBIC flows (source 10.10.0.3, main table, no TUN): 10.20.1.2 through
	# Router 1, 10.20.1.4 straight.
	tb_ns fh ip route replace 10.20.1.2/32 via 10.10.9.9 dev xdfa0 onlink src 10.10.0.3
	tb_ns fh ip route replace 10.20.1.4/32 via "$TB_GW_FH" dev fh0 src 10.10.0.3
	tb_ns mh ip addr add 10.20.1.4/24 dev mh0
	R1_UP=1
}

for sc in "$@"; do
	case $sc in
	a) run_flows a "$XE_A_S" "1:0:$((XE_A_S - 1)):cubic:$XF" ;;
	a-cubic) run_flows a-cubic "$XE_A_S" "1:0:$((XE_A_S - 1)):cubic:$PF" ;;
	b-xcp) run_flows b-xcp 51 1:0:50:cubic:$XF 2:5:50:cubic:$XF 3:10:45:cubic:$XF 4:15:40:cubic:$XF ;;
	b-cubic) run_flows b-cubic 51 1:0:50:cubic:$PF 2:5:50:cubic:$PF 3:10:45:cubic:$PF 4:15:40:cubic:$PF ;;
	c-*)
		k=$(echo "$sc" | cut -d- -f2)
		fl=()
		for i in $(seq 1 "$k"); do
			fl+=("$i:0:$((XE_C_S - 1)):cubic:$XF" "$((100 + i)):0:$((XE_C_S - 1)):cubic:$PF")
		done
		run_flows "$sc" "$XE_C_S" "${fl[@]}" ;;
	cu-*)
		nx=$(echo "$sc" | cut -d- -f2)
		no=$(echo "$sc" | cut -d- -f3)
		fl=()
		for i in $(seq 1 "$nx"); do fl+=("$i:0:$((XE_C_S - 1)):cubic:$XF"); done
		for i in $(seq 1 "$no"); do fl+=("$((100 + i)):0:$((XE_C_S - 1)):cubic:$PF"); done
		run_flows "$sc" "$XE_C_S" "${fl[@]}" ;;
	dl | dl-*)
		d_setup
		t3=$((3 * XE_D_S))
		run_flows "$sc" "$((t3 + 1))" "1:0:$t3:cubic:10.10.0.3:10.20.1.2" \
			"2:$XE_D_S:$((2 * XE_D_S)):cubic:10.10.0.3:10.20.1.4" ;;
	d | d-*)
		d_setup
		t3=$((3 * XE_D_S))
		run_flows "$sc" "$((t3 + 1))" "1:0:$t3:cubic::$TB_IP_MH" \
			"2:$XE_D_S:$((2 * XE_D_S)):cubic::10.20.1.3" ;;
	*) tb_fail "unknown scenario $sc" ;;
	esac
done
if [ -n "$R1_UP" ]; then
	kill -INT "$R1_PID" 2>/dev/null || true
	tb_wait_pid "$R1_PID" 20 || true
	cp "$TB_DIR/stats-r1.json" "$OUT/$GW-r1.json" 2>/dev/null || true
fi
for ns in fh mh; do
	kill -TERM "$(eval echo "\$AGENT_${ns^^}")" || true
done
tb_boxes_stop_keep run hub term emu
cp "$TB_DIR/hub-run.json" "$OUT/$GW-hub.json"
tb_pass
