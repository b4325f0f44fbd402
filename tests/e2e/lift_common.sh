# SPDX-License-Identifier: BSD-3-Clause
# What the LIFT experiments share (lift_experiment.sh, lift_outage.sh): the
# ESP keys of the two mh_lift agents, the seed's link told to satlink, the two
# senders, an agent's start and the sender's nstat counters. Sourced after
# testbed.sh; lift_setup makes the testbed; the caller sets MARK (the agents'
# own packets' fwmark).
# shellcheck shell=bash

# satlink's rto_max_ms at both boxes: the policy's default, 1000; 10000 repeats
# runs before stop 30. Set once here for the policies and the runs' records.
LIFT_RTO_MAX_MS=${LIFT_RTO_MAX_MS:-1000}

# lift_setup SATGW MH_LIFT TAG TIMER OUTDIR: the chain testbed with this
# run's own namespaces and DPDK prefixes (TAG-box-ID: parallel runs do not
# collide), OUTDIR made, MH_LIFT set, the keys and the boxes' policies.
lift_setup() {
	tb_init "$1"
	TB_NS_FH="$3-fh-$TB_ID" TB_NS_MH="$3-mh-$TB_ID" TB_NS_HUB="$3-hub-$TB_ID"
	TB_NS_EMU="$3-emu-$TB_ID" TB_NS_TERM="$3-term-$TB_ID" TB_PREFIX="$3-$TB_ID"
	mkdir -p "$5"
	MH_LIFT=$(readlink -f "${2:?}")
	tb_topology chain
	lift_keys
	lift_box_policies "$4"
}

# lift_keys: the satlink key file and the agents' static ESP SAs (rfc4106).
lift_keys() {
	"$TB_PY" "$TB_E2E_DIR/satlink.py" keyfile "$TB_DIR/lift.keys" 1001
	umask 077
	cat >"$TB_DIR/esp.keys" <<KEYS
src $TB_IP_MH dst $TB_IP_FH proto esp spi 0x1e5a0001 mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6532652d75702d6b657921cafe0001 128
src $TB_IP_FH dst $TB_IP_MH proto esp spi 0x1e5a0002 mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6532652d646f776e2d6b65792d3235362d626974732d6f6b212121cafe0002 128
KEYS
	umask 022
}

# lift_box_policies TIMER: x_hub.yaml and x_terminal.yaml. The seed's link:
# 344 kbit/s both ways, 265 ms; satlink told so (rtt: 2 x 265 ms + a 1400-byte
# frame at 344 kbit/s each way), link_down 31.8 s (ESW's data link timeout) so
# shadowing never takes the session down; the hub's lift timer fixed (0.98 s)
# or adaptive; satlink's rto_max_ms LIFT_RTO_MAX_MS (above) on both ends;
# LIFT_HUB_KEYS more keys of the hub's lift section ("thaw: true").
lift_box_policies() {
	local b rmax=$LIFT_RTO_MAX_MS
	for b in hub terminal; do
		sed -e 's/forward_rate_bps: [0-9]*/forward_rate_bps: 344000/' \
		    -e 's/return_rate_bps: [0-9]*/return_rate_bps: 344000/' \
		    -e 's/rtt_ms: [0-9]*/rtt_ms: 600/' \
		    -e "s/link_down_ms: [0-9]*/link_down_ms: 31800\n  rto_max_ms: $rmax/" \
		    -e "s/^lift: {timer: fixed, timer_ms: 980}/lift: {timer: $1, timer_ms: 980${LIFT_HUB_KEYS:+, $LIFT_HUB_KEYS}}/" \
		    "$TB_E2E_DIR/policies/lift_$b.yaml" >"$TB_DIR/x_$b.yaml"
		grep -q "^  rto_max_ms: $rmax\$" "$TB_DIR/x_$b.yaml" ||
			tb_fail "$b policy edit (rto_max_ms $rmax)"
	done
	grep -q "^lift: {timer: $1" "$TB_DIR/x_hub.yaml" || tb_fail "hub policy edit (timer $1)"
	[ -z "${LIFT_HUB_KEYS:-}" ] || grep -qF ", $LIFT_HUB_KEYS}" "$TB_DIR/x_hub.yaml" ||
		tb_fail "hub policy edit (lift keys $LIFT_HUB_KEYS)"
}

# lift_senders linux | reno: fh's sender, mh's window. linux = Linux defaults
# (SACK, timestamps, F-RTO; CUBIC is set per socket by the server); reno = the
# seed's (no SACK, no timestamps, F-RTO off, a 64 KB window at mh: Table I).
lift_senders() {
	if [ "$1" = reno ]; then
		tb_ns fh sysctl -qw net.ipv4.tcp_sack=0 net.ipv4.tcp_timestamps=0 net.ipv4.tcp_frto=0
		tb_ns mh sysctl -qw net.ipv4.tcp_window_scaling=0 "net.ipv4.tcp_rmem=4096 65536 65536"
	else
		tb_ns fh sysctl -qw net.ipv4.tcp_sack=1 net.ipv4.tcp_timestamps=1 net.ipv4.tcp_frto=2
		tb_ns mh sysctl -qw net.ipv4.tcp_window_scaling=1 "net.ipv4.tcp_rmem=4096 131072 6291456"
	fi
}

# lift_start_agent NS LOCAL PEER MODE: mh_lift on a TUN (MTU 1282), its own
# packets marked past the TUN route; AGENT_<NS> = its pid.
lift_start_agent() {
	local ns=$1 local=$2 peer=$3 mode=$4
	tb_bg "$ns" "agent-$ns" "$MH_LIFT" --tun le2x0 --mtu 1282 --local "$local" --peer "$peer" \
		--keys "$TB_DIR/esp.keys" --mark "$MARK" --lift "$mode" --stats-json "$TB_DIR/agent-$ns.json"
	eval "AGENT_${ns^^}=$TB_LAST_PID"
	for _ in $(seq 1 100); do
		tb_ns "$ns" ip link show le2x0 >/dev/null 2>&1 && break
		sleep 0.1
	done
	tb_ns "$ns" ip rule add fwmark "$MARK" lookup main pref 100 2>/dev/null || true
	tb_ns "$ns" ip rule add to "$peer" lookup 161 pref 110 2>/dev/null || true
	# MSS 1224 (Table I): the TUN's MTU is 1282, advmss says 1224 exactly
	tb_ns "$ns" ip route replace "$peer" dev le2x0 src "$local" advmss 1224 table 161
	# fail closed when the agent stops (test_lift_chain.sh says why)
	tb_ns "$ns" ip route replace blackhole "$peer" metric 4096 table 161
	tb_ns "$ns" sysctl -qw net.ipv4.conf.le2x0.rp_filter=0 net.ipv4.conf.all.rp_filter=0
}

# lift_run_start SENDER MODE: a run's sender settings, the three boxes
# (x_emu.yaml, x_hub.yaml, x_terminal.yaml), fh's agent (--lift off) and mh's
# (--lift MODE), and a path fh -> mh through them.
lift_run_start() {
	lift_senders "$1"
	tb_box_start emu "$TB_DIR/x_emu.yaml" 1
	tb_box_start hub "$TB_DIR/x_hub.yaml" 0
	tb_box_start term "$TB_DIR/x_terminal.yaml" 0
	lift_start_agent fh "$TB_IP_FH" "$TB_IP_MH" off
	lift_start_agent mh "$TB_IP_MH" "$TB_IP_FH" "$2"
	tb_wait_path fh "$TB_IP_MH" 60
}

# lift_stop_agents: SIGTERM both agents, wait for each.
lift_stop_agents() {
	local ns pid
	for ns in fh mh; do
		pid=$(eval echo "\$AGENT_${ns^^}")
		kill -TERM "$pid"
		tb_wait_pid "$pid" 10 || true
	done
}

# lift_nstat_json NS: the absolute values (nstat -a) of the counters the issue
# names. The namespace lives through every run, so a run's figures are the
# difference of two snapshots (nstat's own history file is per user, not per
# namespace: another nstat anywhere on the host would move its baseline).
lift_nstat_json() {
	tb_ns "$1" nstat -az TcpOutSegs TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPSpuriousRTOs \
		TcpExtTCPLossUndo TcpExtTCPLossProbes TcpExtTCPSackRecovery TcpExtTCPRenoRecovery \
		2>/dev/null | "$TB_PY" -c '
import json, sys
d = {}
for l in sys.stdin:
    f = l.split()
    if len(f) >= 2 and f[1].isdigit():
        d[f[0]] = int(f[1])
print(json.dumps(d))'
}
