#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# What one freeze does to a Linux sender (issue 8, docs/experiments.md "LIFT
# across one outage"): the web-page grid's channel is random, so its page
# times mix LIFT's effect with where the bad periods fall. Here the channel is
# one scheduled outage of D seconds on the forward link (hub -> terminal,
# every frame lost, satlink repairs them after it), and each download starts
# LEAD seconds before the window on the emulator's clock: every repetition,
# with and without LIFT, meets the same outage at the same point of the same
# transfer. Same testbed as lift_experiment.sh (fh -> mh inside the mh_lift
# agents' ESP, hub - emulator - terminal, satlink AES-GCM, 344 kbit/s, 265 ms
# each way, MSS 1224), same two senders (Linux defaults; the seed's Reno).
#
# Usage: lift_outage.sh SATGW MH_LIFT OUT.json
#   LO_OUTAGES ("2 4 8": D, s), LO_SENDERS ("linux reno"), LO_MODES ("off on"),
#   LO_REPS (3: downloads per run, one per outage window), LO_SIZE (262144
#   bytes), LO_LEAD (3 s), LO_EVERY (40 s: the outages' period), LO_BOTH (0;
#   1: the return link is out in the same windows), LO_TIMER (fixed |
#   adaptive), LO_TAG ("lo1x"), LO_PCAP (0; 1: tcpdump of the sender's plain
#   TCP on fh's TUN into OUT.json.d/tcp-*.pcap), LO_TIMEOUT (120: a download
#   that receives nothing that long is recorded censored, "censored": true,
#   its seconds a lower bound, and ends its run).
# Per D, sender and mode one run: fresh boxes and agents, LO_REPS downloads.
# Written: one JSON line per download in OUT.json.d/downloads.jsonl (its
# seconds, progress trace, fh's nstat for it), each run's hub and agent
# counters in OUT.json.d/runs.jsonl, fh's `ss -tin` every 100 ms in
# OUT.json.d/ss-*.log; tests/e2e/lift_outage.py makes the table and plot.
# Not a test: it asserts nothing but that the downloads arrive.
set -euo pipefail
export TB_BUDGET=${TB_BUDGET:-5400}
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"
# shellcheck source=lift_common.sh
source "$(dirname "$0")/lift_common.sh"

OUTAGES=${LO_OUTAGES:-"2 4 8"}
SENDERS=${LO_SENDERS:-"linux reno"}
MODES=${LO_MODES:-"off on"}
REPS=${LO_REPS:-3}
SIZE=${LO_SIZE:-262144}
LEAD=${LO_LEAD:-3}
EVERY=${LO_EVERY:-40}
BOTH=${LO_BOTH:-0}
TIMER=${LO_TIMER:-fixed}
TAG=${LO_TAG:-lo1x}
FTIMEOUT=${LO_TIMEOUT:-120}               # the download's receive timeout, s
MARK=0x1e50
OUT=${3:?usage: lift_outage.sh SATGW MH_LIFT OUT.json}
OUT=$(readlink -f "$OUT")

lift_setup "${1:-}" "${2:?}" "$TAG" "$TIMER" "$OUT.d"
CHAIN=("$TB_PY" "$TB_E2E_DIR/chain.py")

emu_policy() { # D -> x_emu.yaml: the seed's link, no loss but the outages
	local out="    outages:
      - {at_s: 30, for_s: $1, every_s: $EVERY}" ret=""
	[ "$BOTH" = 1 ] && ret=$out
	cat >"$TB_DIR/x_emu.yaml" <<YAML
version: 1
role: emulator
ports:
  - {name: hub-side, device: net_af_packet0, role: satellite}
  - {name: term-side, device: net_af_packet1, role: satellite}
link:
  seed: 1
  forward:
    from: hub-side
    to: term-side
    rate_bps: 344000
    delay_ms: 265
    queue: {limit_packets: 2000}
$out
  return:
    from: term-side
    to: hub-side
    rate_bps: 344000
    delay_ms: 265
    queue: {limit_packets: 1000}
$ret
limits: {mbufs: 65535}
workers: {idle_backoff_us: 100}
YAML
}

for D in $OUTAGES; do
	emu_policy "$D"
	for snd in $SENDERS; do
		for mode in $MODES; do
			tag="d$D-$snd-$mode"
			tb_log "run $tag: $REPS downloads of $SIZE B, each ${LEAD} s before an outage of $D s"
			lift_run_start "$snd" "$mode"
			port=$(tb_rand_port)
			tb_bg fh "srv-$tag" "$TB_PY" "$TB_E2E_DIR/lift_pages.py" serve --bind "$TB_IP_FH" \
				--port "$port" --cc "$([ "$snd" = reno ] && echo reno || echo cubic)"
			SRV=$TB_LAST_PID
			tb_wait_listen fh "$port" 10
			tb_bg fh "ss-$tag" bash -c "while :; do date +%s.%N; ss -tin dst $TB_IP_MH; sleep 0.1; done"
			SS=$TB_LAST_PID
			PCAP=
			if [ "${LO_PCAP:-0}" = 1 ]; then   # the sender's plain TCP, on fh's TUN
				tb_bg fh "pcap-$tag" tcpdump -i le2x0 -n -s 96 -w "$OUT.d/tcp-$tag.pcap" tcp
				PCAP=$TB_LAST_PID
				sleep 1
			fi
			for rep in $(seq 1 "$REPS"); do
				# the next window at least LEAD + 2 s ahead on the emulator's clock
				w=$("${CHAIN[@]}" next-window "$(tb_box_prefix emu)" "$TB_DIR/x_emu.yaml" \
					--lead $((LEAD + 2)))
				c0=$("${CHAIN[@]}" wait-clock "$(tb_box_prefix emu)" \
					"$("$TB_PY" -c "print($w - $LEAD)")" --timeout $((EVERY + 60)))
				n0=$(lift_nstat_json fh)
				rc=0
				tb_ns mh "$TB_PY" "$TB_E2E_DIR/lift_pages.py" bulk --host "$TB_IP_FH" \
					--port "$port" --size "$SIZE" --tag "$tag-r$rep" --timeout "$FTIMEOUT" \
					--out "$TB_DIR/bulk.jsonl" 2>>"$TB_DIR/bulk-$tag.log" || rc=$?
				# 3: no byte for FTIMEOUT s, the fetcher wrote the download as
				# censored (its seconds a lower bound, lift_pages.py); the run ends
				if [ $rc = 3 ]; then
					tb_log "download $tag-r$rep: no byte for $FTIMEOUT s, recorded censored; run ends"
				elif [ $rc != 0 ]; then
					cat "$TB_DIR/bulk-$tag.log" >&2
					tb_fail "download $tag-r$rep failed"
				fi
				n1=$(lift_nstat_json fh)
				tail -n 1 "$TB_DIR/bulk.jsonl" | "$TB_PY" -c '
import json, sys
r = json.loads(sys.stdin.read())
n0, n1 = json.loads(sys.argv[1]), json.loads(sys.argv[2])
r.update({"outage_s": float(sys.argv[3]), "sender": sys.argv[4], "lift": sys.argv[5],
          "rep": int(sys.argv[6]), "window_at": float(sys.argv[7]), "clock_at_start": float(sys.argv[8]),
          "lead_s": float(sys.argv[9]), "both": sys.argv[10] == "1", "timer": sys.argv[11],
          "fh_nstat": {k: v - n0.get(k, 0) for k, v in n1.items()}})
print(json.dumps(r))' "$n0" "$n1" "$D" "$snd" "$mode" "$rep" "$w" "$c0" "$LEAD" "$BOTH" "$TIMER" \
					>>"$OUT.d/downloads.jsonl"
				[ $rc = 0 ] || break
			done
			kill "$SS" "$SRV" $PCAP 2>/dev/null || true
			lift_stop_agents
			tb_boxes_stop_keep "$tag" hub term emu
			cp "$TB_DIR/ss-$tag.log" "$TB_DIR/hub-$tag.json" "$OUT.d/" 2>/dev/null || true
			"$TB_PY" - "$TB_DIR/hub-$tag.json" "$TB_DIR/agent-mh.json" "$D" "$snd" "$mode" \
				>>"$OUT.d/runs.jsonl" <<'PY'
import json, sys
L = json.load(open(sys.argv[1]))["lift"]["counters"]
mh = json.load(open(sys.argv[2]))
print(json.dumps({"outage_s": float(sys.argv[3]), "sender": sys.argv[4], "lift": sys.argv[5],
                  "hub_lift": {k: L[k] for k in ("acks_rx", "fracks_rx", "acks_held", "freezes",
                                                  "freezes_spare", "unfreezes", "expiry_freeze",
                                                  "susp_frozen", "susp_share", "ooo_disable",
                                                  "rtt_samples")},
                  "mh_pairs": mh.get("mh", {}).get("pairs", 0)}))
PY
		done
	done
done
cp "$OUT.d/downloads.jsonl" "$OUT"
tb_log "wrote $OUT and $OUT.d/ (downloads.jsonl, runs.jsonl, ss-*.log)"
tb_pass
