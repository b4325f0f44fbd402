#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Seed 003's comparison on the testbed with real Linux senders (issue 10,
# "Measurements"; docs/experiments.md "Seed 003: relay-buffer control with
# Linux senders"): RWND, PETRA and ACKRES at the hub's relay buffer, one 5 MiB
# download from a Linux (CUBIC) server on the hub's terrestrial side to a
# client behind the terminal, split at both ends.
#
#   fh (server) -- [wemu: wired] -- [hub, split] == [emu: satellite] == [term, split] -- mh
#
# - wired: a second emulator box between fh and the hub (no netem on this
#   machine): 2 Mbit/s each way, 50 ms each way (RTT_wired 0.1 s), a 1000-frame
#   queue and no loss (the seed's P_e(IP) = 1e-9: the relay's worst case, so
#   every sender timeout is the relay scheme's doing);
# - satellite: 512 kbit/s each way, 250 ms each way (RTT_sat 0.5 s); satlink
#   at the same rates, one copy per retransmission (the seed's SR-ARQ), a send
#   queue of 8 packets at the hub so that the relay (not satlink's queue) is
#   the buffer in front of the satellite; rtt_ms 2000 (not the link's ~550):
#   the ARQ windows are 2 x rate x rtt_ms = 1024 frames, so that a frame lost
#   several times in a row does not fill the window; with 282 frames it did,
#   and a stream message refused while the window was full went out later on
#   channel 0 (dataplane/satlink.c pace() overwrites m->port before the
#   refusal: docs/experiments.md, seed 003), which reset the connection;
# - relay: relay_connection_bytes 82000 at the hub (82 segments of 1000 bytes:
#   fh's route to the client has mtu 1052, so the sender's MSS is 1000 bytes
#   with timestamps); the terminal's relays 1 MB (the credit window: the seed
#   does not bound the far relay); PETRA/ACKRES threshold 7000 bytes (the
#   seed's eq. 1: ceil(512 kbit/s x 0.1 s / 8000 bit) = 7 segments);
# - channel (forward, the data direction; return clean), seed 003's "BER 1e-3"
#   mapped onto frames (docs/experiments.md says why): i.i.d. frame loss
#   p = 1 - (1 - 1e-3)^424 = 0.3457, the loss of a 53-byte link-layer PDU at
#   a bit error rate of 1e-3;
#     bad60: lossy for the first 60 s of the transfer, then BER 1e-12 (a
#            Gilbert-Elliott chain whose first sojourn is placed at 60 s after
#            the transfer's start: seed 11's first draw, see below);
#     bad:   lossy throughout.
# Per run (every box restarted, so the counters are the run's): the transfer
# time (connect to last byte), the server's nstat deltas, the hub's split
# counters (relay_clipped = relay overflows, acks_withheld, anti_freeze,
# rto_refresh...), samples every 100 ms of the hub's relay occupancy
# (/satgw/split relay_occ_rx) and the sender's ss -tin (cwnd, rto, snd_wnd),
# the load average before and after.
#
# Usage: split_seed003.sh SATGW OUT.json
#   S3_SCHEMES ("rwnd petra ackres"; also ackres200: ACKRES with
#   ackres_rto_min_ms 200, Linux's floor), S3_CHANNELS ("bad60 bad"), S3_RUNS (1),
#   S3_FILE_KB (5120), S3_WAIT_S (100: the emulator's clock at the transfer's
#   start in bad60, see below).
# Not a test: it writes numbers; a transfer that fails (reset, timeout) is
# recorded with ok false and the runs go on.
set -euo pipefail
export TB_BUDGET=${TB_BUDGET:-7200}
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

P=$TB_E2E_DIR/policies
SCHEMES=${S3_SCHEMES:-"rwnd petra ackres"}
CHANNELS=${S3_CHANNELS:-"bad60 bad"}
RUNS=${S3_RUNS:-1}
FILE_KB=${S3_FILE_KB:-5120}
WAIT_S=${S3_WAIT_S:-100}
LOSS_P=0.3457        # 1 - (1 - 1e-3)^(53 x 8)
OUT=${2:?usage: split_seed003.sh SATGW OUT.json}
OUT=$(readlink -f "$OUT")
PLOT=("$TB_PY" "$TB_E2E_DIR/split_seed003_plot.py")

tb_init "${1:-}"
TB_NS_FH="s3-fh-$TB_ID" TB_NS_MH="s3-mh-$TB_ID" TB_NS_HUB="s3-hub-$TB_ID"
TB_NS_EMU="s3-emu-$TB_ID" TB_NS_TERM="s3-term-$TB_ID" TB_PREFIX="s3-$TB_ID"
NS_W="s3-wemu-$TB_ID"
tb_topology chain
# The wired emulator between fh and the hub: fh0 -- wf0 [wemu] wh0 -- terr0. It
# forwards frames unchanged, so fh0 and terr0 keep their MACs and neighbours.
ip -n "$TB_NS_FH" link del fh0
tb__mkns "$NS_W"
tb__veth "$TB_NS_FH" fh0 "$TB_MAC_FH" "$NS_W" s3wf0 02:00:00:00:05:01
tb__veth "$NS_W" s3wh0 02:00:00:00:05:02 "$TB_NS_HUB" terr0 "$TB_MAC_GT"
tb_ns fh ip addr add "$TB_IP_FH/24" dev fh0
tb_ns fh ip neigh replace "$TB_GW_FH" lladdr "$TB_MAC_GT" nud permanent dev fh0
# mtu 1052: MSS 1012, 1000 bytes of data with timestamps (the seed's 1 KB segments)
tb_ns fh ip route add 10.20.1.0/24 via "$TB_GW_FH" dev fh0 mtu lock 1052
tb_log "wired emulator $NS_W between fh0 and the hub's terr0"

# ---- policies ------------------------------------------------------------------------
sat_keys() { # the satlink keys both boxes share
	sed -e 's/forward_rate_bps: [0-9]*/forward_rate_bps: 512000/' \
	    -e 's/return_rate_bps: [0-9]*/return_rate_bps: 512000/' \
	    -e 's/rtt_ms: [0-9]*/rtt_ms: 2000/' -e 's/retx_copies: [0-9]*/retx_copies: 1/' "$1"
}
box_policies() { # SCHEME (ackres200: ACKRES assuming Linux's 200 ms RTO floor)
	local th="" mode=$1
	[ "$1" = rwnd ] || th='\n  threshold_bytes: 7000'
	[ "$1" = ackres200 ] && { mode=ackres; th="$th"'\n  ackres_rto_min_ms: 200'; }
	set -- "$mode"
	sat_keys "$P/split_hub.yaml" |
		sed -e 's/^  link_down_ms: \(.*\)$/  link_down_ms: \1\n  send_queue: 8/' \
		    -e 's/^  relay_connection_bytes: [0-9]*.*/  relay_connection_bytes: 82000/' \
		    -e "s/^  max_connections_per_terminal: \([0-9]*\)/  max_connections_per_terminal: \1\n  rwnd: $1$th/" \
		    >"$TB_DIR/s3_hub.yaml"
	sat_keys "$P/split_terminal.yaml" |
		sed -e "s/^  max_connections_per_terminal: \([0-9]*\)/  max_connections_per_terminal: \1\n  rwnd: $1$th/" \
		    >"$TB_DIR/s3_term.yaml"
	grep -q "^  rwnd: $1" "$TB_DIR/s3_hub.yaml" && grep -q "^  send_queue: 8" "$TB_DIR/s3_hub.yaml" &&
		grep -q "^  relay_connection_bytes: 82000" "$TB_DIR/s3_hub.yaml" &&
		grep -q "^  rwnd: $1" "$TB_DIR/s3_term.yaml" || tb_fail "policy edit ($1)"
}
# The GE chain starts in its first state ("good" here is the lossy state) when
# the emulator starts; its first sojourn is mean_s x E1, E1 = -ln(u), u the
# first draw of the forward direction's chain stream for link.seed (seed 11:
# E1 = 1.499396..., computed by split_seed003_plot.py ge-draw with the
# emulator's splitmix64/xoshiro256**). mean_s = (WAIT_S + 60) / E1 puts the
# switch at WAIT_S + 60 s of the emulator's clock; the transfer starts at
# WAIT_S (the script waits for that clock), so the channel turns clean 60 s
# into the transfer. The second state (BER 1e-12) lasts 10^6 s x 2.44.
emu_policy() { # CHANNEL
	local loss
	case "$1" in
	bad) loss="{model: random, p: $LOSS_P}" ;;
	bad60)
		local mean
		mean=$("${PLOT[@]}" ge-mean --seed 11 --at "$((WAIT_S + 60))")
		loss="{model: gilbert-elliott, good: {mean_s: $mean, p: $LOSS_P}, bad: {mean_s: 1000000, ber: 1e-12}}"
		;;
	*) tb_fail "channel $1: bad60 or bad" ;;
	esac
	cat >"$TB_DIR/s3_emu.yaml" <<EOF
# seed 003's satellite (split_seed003.sh): 512 kbit/s, 250 ms each way; channel $1
version: 1
role: emulator
ports:
  - {name: hub-side, device: net_af_packet0, role: satellite}
  - {name: term-side, device: net_af_packet1, role: satellite}
link:
  seed: 11
  forward:
    from: hub-side
    to: term-side
    rate_bps: 512000
    delay_ms: 250
    queue: {limit_packets: 1000}
    loss: $loss
  return:
    from: term-side
    to: hub-side
    rate_bps: 512000
    delay_ms: 250
    queue: {limit_packets: 1000}
limits: {mbufs: 16383}
workers: {idle_backoff_us: 100}
EOF
}
cat >"$TB_DIR/s3_wemu.yaml" <<EOF
# seed 003's wired link (split_seed003.sh): 2 Mbit/s, 50 ms each way, lossless
version: 1
role: emulator
ports:
  - {name: fh-side, device: net_af_packet0, role: satellite}
  - {name: hub-side, device: net_af_packet1, role: satellite}
link:
  seed: 1
  forward:
    from: fh-side
    to: hub-side
    rate_bps: 2000000
    delay_ms: 50
    queue: {limit_packets: 1000}
  return:
    from: hub-side
    to: fh-side
    rate_bps: 2000000
    delay_ms: 50
    queue: {limit_packets: 1000}
limits: {mbufs: 16383}
workers: {idle_backoff_us: 100}
EOF

# ---- boxes ---------------------------------------------------------------------------
# launch BOX NS IF0 IF1 POLICY LCORES; ready BOX (90 s: a loaded 2-core machine).
launch() {
	local box=$1 ns=$2 policy=$5 lcores=$6 log json
	log=$(tb_box_log "$box")
	json=$(tb_box_json "$box")
	local -a eal=(--no-huge -m 512 --no-pci --file-prefix "$(tb_box_prefix "$box")" -l "$lcores"
		--vdev "net_af_packet0,iface=$3,framecnt=2048" --vdev "net_af_packet1,iface=$4,framecnt=2048")
	rm -f "$json"
	echo "+ ip netns exec $ns $TB_SATGW ${eal[*]} -- -c $policy --stats-json $json -q" >"$log"
	ip netns exec "$ns" "$TB_SATGW" "${eal[@]}" -- -c "$policy" --stats-json "$json" -q >>"$log" 2>&1 &
	TB_BOX_PID[$box]=$!
	TB_BOX_RC[$box]=
}
ready() {
	"$TB_PY" "$TB_E2E_DIR/sgwtel.py" --wait 90 --pid "${TB_BOX_PID[$1]}" \
		"$(tb_box_prefix "$1")" /satgw/stats >/dev/null 2>"$TB_DIR/wait-$1.err" ||
		{ cat "$TB_DIR/wait-$1.err" >&2; tail -n 20 "$(tb_box_log "$1")" >&2; tb_fail "satgw $1 did not become ready"; }
}
stop_keep() { TB_STOP_S=120 tb_boxes_stop_keep "$@"; } # TAG BOX...: keep BOX-TAG.json

# nstat_json: the sender's absolute counters (fh's namespace lives through every
# run; a run's figures are the difference of two snapshots).
nstat_json() {
	tb_ns fh nstat -az TcpOutSegs TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPSpuriousRTOs \
		TcpExtTCPLossUndo TcpExtTCPLossProbes TcpExtTCPLossProbeRecovery TcpExtTCPSackRecovery \
		TcpExtTCPRenoRecovery TcpExtTCPLostRetransmit TcpExtTCPWinProbe TcpExtTCPLossFailures \
		TcpExtTCPFullUndo TcpExtTCPPartialUndo TcpExtTCPDSACKUndo 2>/dev/null | "$TB_PY" -c '
import json, sys
d = {}
for l in sys.stdin:
    f = l.split()
    if len(f) >= 2 and f[1].isdigit():
        d[f[0]] = int(f[1])
print(json.dumps(d))'
}

head -c "$((FILE_KB * 1024))" /dev/urandom >"$TB_DIR/big.bin"
SX=("$TB_PY" "$TB_E2E_DIR/split_xfer.py")
RECS=()
for chan in $CHANNELS; do
	emu_policy "$chan"
	for run in $(seq 1 "$RUNS"); do
		for scheme in $SCHEMES; do
			tag="$chan-$scheme-$run"
			box_policies "$scheme"
			for f in s3_hub.yaml s3_term.yaml s3_emu.yaml s3_wemu.yaml; do
				"$TB_SATGW" --check-config "$TB_DIR/$f" >"$TB_DIR/check.out" 2>&1 ||
					{ cat "$TB_DIR/check.out" >&2; tb_fail "$f does not validate"; }
			done
			load0=$(cut -d' ' -f1-3 /proc/loadavg)
			tb_log "run $tag (load $load0)"
			launch wemu "$NS_W" s3wf0 s3wh0 "$TB_DIR/s3_wemu.yaml" 1
			launch emu "$TB_NS_EMU" hub0 term0 "$TB_DIR/s3_emu.yaml" 1
			launch hub "$TB_NS_HUB" terr0 sat0 "$TB_DIR/s3_hub.yaml" 0
			launch term "$TB_NS_TERM" sat0 lan0 "$TB_DIR/s3_term.yaml" 0
			for b in wemu emu hub term; do ready "$b"; done
			tb_wait_path mh "$TB_IP_FH" 60
			# bad60: start the transfer at WAIT_S s of the emulator's clock
			clock=$("${PLOT[@]}" wait-clock "$(tb_box_prefix emu)" "$([ "$chan" = bad60 ] && echo "$WAIT_S" || echo 0)")
			[ "$chan" != bad60 ] || "$TB_PY" -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]) + 1)" \
				"$clock" "$WAIT_S" || tb_log "$tag: WARNING the boxes took until $clock s of the emulator's clock (> S3_WAIT_S $WAIT_S): the lossy period is shorter than 60 s (recorded)"
			port=$(tb_rand_port)
			rm -f "$TB_DIR/srv.ready"
			tb_bg fh "srv-$tag" "${SX[@]}" serve --bind "$TB_IP_FH" --port "$port" --file "$TB_DIR/big.bin" \
				--log "$TB_DIR/srv-$tag.jsonl" --ready "$TB_DIR/srv.ready" --timeout 900
			SRV=$TB_LAST_PID
			tb_wait_listen fh "$port" 10
			tb_bg fh "ss-$tag" bash -c "while :; do date +%s.%N; ss -tin '( sport = :$port )'; sleep 0.1; done"
			SS=$TB_LAST_PID
			tb_bg_local "tel-$tag" "${PLOT[@]}" sample "$(tb_box_prefix hub)" "$(tb_box_prefix emu)" \
				"$TB_DIR/tel-$tag.jsonl"
			TEL=$TB_LAST_PID
			nst0=$(nstat_json)
			t0=$(date +%s.%N)
			tb_ns mh "${SX[@]}" client --host "$TB_IP_FH" --port "$port" --op get --conns 1 \
				--file "$TB_DIR/big.bin" --timeout 900 --result "$TB_DIR/cli-$tag.json" \
				>"$TB_DIR/cli-$tag.out" 2>&1 ||
				{ cat "$TB_DIR/cli-$tag.out" >&2; tb_log "$tag: the download was NOT intact (recorded)"; }
			t1=$(date +%s.%N)
			nst1=$(nstat_json)
			# a last second of samples (the relay empties, the ACKs come back)
			sleep 1
			kill "$SS" "$TEL" "$SRV" 2>/dev/null || true
			wait "$SS" "$TEL" "$SRV" 2>/dev/null || true
			load1=$(cut -d' ' -f1-3 /proc/loadavg)
			stop_keep "$tag" hub term emu wemu
			"${PLOT[@]}" record --chan "$chan" --scheme "$scheme" --run "$run" --t0 "$t0" --t1 "$t1" \
				--clock0 "$clock" --wait "$WAIT_S" --load0 "$load0" --load1 "$load1" \
				--nstat0 "$nst0" --nstat1 "$nst1" --client "$TB_DIR/cli-$tag.json" \
				--hub "$TB_DIR/hub-$tag.json" --term "$TB_DIR/term-$tag.json" \
				--emu "$TB_DIR/emu-$tag.json" --wemu "$TB_DIR/wemu-$tag.json" \
				--tel "$TB_DIR/tel-$tag.jsonl" --ss "$TB_DIR/ss-$tag.log" \
				--out "$TB_DIR/rec-$tag.json" >&2
			RECS+=("$TB_DIR/rec-$tag.json")
			# keep what is there so far (a long run interrupted still leaves its records)
			"${PLOT[@]}" merge "$OUT" "${RECS[@]}"
		done
	done
done
tb_log "wrote $OUT (${#RECS[@]} runs)"
tb_pass
