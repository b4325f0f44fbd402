#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Seed 000's experiment on the testbed (issue 8, docs/lift.md "End-to-end test
# and experiment"): web page downloads fh -> mh with Table I's HTTP model
# (lift_pages.py) inside ESP done by the mh_lift agents, across hub (lift:) -
# emulator - terminal with satlink AES-GCM (reliable service), at 344 kbit/s
# both ways, 265 ms each way, IP MTU 1282 / MSS 1224 (the agents' TUN MTU and
# the routes' advmss), a Gilbert-Elliott forward channel (bad loses every
# frame) with mean sojourns T_good / T_bad; each point with and without LIFT
# (the MH agent's --lift on / off; the hub's stage is on in both, and with
# --lift off sees no LIFT packet) and for two senders at fh: Linux defaults
# (CUBIC, SACK, timestamps, F-RTO) and the seed's (Reno, no SACK, no
# timestamps, F-RTO off, 64 KB window: the congestion control per socket
# (TCP_CONGESTION at the server: a namespace may not set the sysctl), SACK,
# timestamps and F-RTO by fh's namespace sysctls, the window at mh).
#
# Usage: lift_experiment.sh SATGW MH_LIFT OUT.json
#   LIFT_X_POINTS="TG:TB TG:TB ..." (default "4:1 2:2"), LIFT_X_PAGES (6),
#   LIFT_X_SENDERS ("linux reno"), LIFT_X_MODES ("off on"), LIFT_X_SEED (1),
#   LIFT_X_TIMER (fixed | adaptive: the hub's `lift: timer`),
#   LIFT_X_SEEDS ("S S ...": one run per seed and mode, each seed its own
#   channel realisation and page sequence; default LIFT_X_SEED),
#   LIFT_X_BULK (bytes; 0: web pages): every page one bulk download of this
#   size on its own connection (records as for pages, "bulk_bytes" in each
#   run's), LIFT_X_TIMEOUT (the fetcher's receive timeout, 120 s), LIFT_X_TAG (the
#   namespace / DPDK prefix, "le2x"; a run's names also carry its pid and a
#   random number, so parallel runs do not collide), LIFT_RTO_MAX_MS (satlink's
#   `rto_max_ms` at both boxes, 1000; 10000 repeats runs before stop 30;
#   "satlink_rto_max_ms" in each run's record), LIFT_HUB_KEYS (more keys of the hub's lift section, "thaw: true"; in each
#   run's record as "hub_lift_keys").
# A page that hits the receive timeout is recorded as censored (its seconds
# are the time from its start to the timeout, a lower bound) and ends that
# run; the run's other pages keep their records. Per-page records are written
# to OUT.json.d/pages-TAG.jsonl as they complete and each run's record is
# appended to OUT.json.d/runs.jsonl, so a run killed midway loses only its
# page in flight.
# Every run restarts the three boxes, so the emulator's channel (seeded,
# starting good) is the same realisation in time for each mode and sender.
# Not a test: it asserts nothing but that pages arrive; it writes numbers.
set -euo pipefail
export TB_BUDGET=${TB_BUDGET:-5400}
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"
# shellcheck source=lift_common.sh
source "$(dirname "$0")/lift_common.sh"

P=$TB_E2E_DIR/policies
POINTS=${LIFT_X_POINTS:-"4:1 2:2"}
PAGES=${LIFT_X_PAGES:-6}
SENDERS=${LIFT_X_SENDERS:-"linux reno"}
MODES=${LIFT_X_MODES:-"off on"}
SEED=${LIFT_X_SEED:-1}
SEEDS=${LIFT_X_SEEDS:-$SEED}
FTIMEOUT=${LIFT_X_TIMEOUT:-120}
TAG=${LIFT_X_TAG:-le2x}
TIMER=${LIFT_X_TIMER:-fixed}             # the hub's lift timer: fixed (0.98 s) or adaptive
BULK=${LIFT_X_BULK:-0}                   # bytes: each page one bulk download of this size
MARK=0x1e50
OUT=${3:?usage: lift_experiment.sh SATGW MH_LIFT OUT.json}
OUT=$(readlink -f "$OUT")

lift_setup "${1:-}" "${2:?}" "$TAG" "$TIMER" "$OUT.d"
emu_policy() { # T_GOOD T_BAD SEED -> file
	sed -e 's/rate_bps: [0-9]*/rate_bps: 344000/' -e 's/delay_ms: 270/delay_ms: 265/' \
	    -e "s/good: {mean_s: [0-9.]*}/good: {mean_s: $1}/" \
	    -e "s/bad: {mean_s: [0-9.]*, p: 1.0}/bad: {mean_s: $2, p: 1.0}/" \
	    -e "s/seed: [0-9]*/seed: $3/" "$P/lift_emulator_ge.yaml" >"$TB_DIR/x_emu.yaml"
	grep -q "bad: {mean_s: $2, p: 1.0}" "$TB_DIR/x_emu.yaml" || tb_fail "emulator policy edit"
}

echo "[" >"$OUT.tmp"
first=1
for pt in $POINTS; do
	tg=${pt%%:*} tbad=${pt##*:}
	for SEED in $SEEDS; do
	emu_policy "$tg" "$tbad" "$SEED"
	for snd in $SENDERS; do
		for mode in $MODES; do
			tag="tg${tg}-tb${tbad}-$snd-$mode"
			[ "$SEED" = "${LIFT_X_SEED:-1}" ] && [ "$SEEDS" = "$SEED" ] || tag="$tag-s$SEED"
			tb_log "run $tag: $PAGES pages"
			lift_run_start "$snd" "$mode"
			nst0=$(lift_nstat_json fh)
			port=$(tb_rand_port)
			tb_bg fh "srv-$tag" "$TB_PY" "$TB_E2E_DIR/lift_pages.py" serve --bind "$TB_IP_FH" --port "$port" \
				--cc "$([ "$snd" = reno ] && echo reno || echo cubic)"
			SRV=$TB_LAST_PID
			tb_wait_listen fh "$port" 10
			# ss -ti of the sender every 100 ms (cwnd traces)
			tb_bg fh "ss-$tag" bash -c "while :; do date +%s.%N; ss -tin dst $TB_IP_MH; sleep 0.1; done"
			SS=$TB_LAST_PID
			rc=0
			tb_ns mh "$TB_PY" "$TB_E2E_DIR/lift_pages.py" fetch --host "$TB_IP_FH" --port "$port" \
				--pages "$PAGES" --seed "$SEED" --out "$OUT.d/pages-$tag.jsonl" \
				--timeout "$FTIMEOUT" --iface mh0 --bulk "$BULK" >"$TB_DIR/fetch-$tag.log" 2>&1 || rc=$?
			# 3: the fetcher wrote the page in flight as censored (lift_pages.py)
			if [ $rc = 3 ]; then
				tb_log "run $tag: page timed out after ${FTIMEOUT} s idle, recorded censored"
			elif [ $rc != 0 ]; then
				cat "$TB_DIR/fetch-$tag.log" >&2
				tb_fail "pages $tag failed"
			fi
			nst=$(lift_nstat_json fh)
			kill "$SS" "$SRV" 2>/dev/null || true
			lift_stop_agents
			tb_boxes_stop_keep "$tag" hub term emu
			[ $first = 1 ] || echo "," >>"$OUT.tmp"
			first=0
			cp "$TB_DIR/ss-$tag.log" "$OUT.d/" 2>/dev/null || true
			"$TB_PY" - "$OUT.d/pages-$tag.jsonl" "$TB_DIR/hub-$tag.json" "$TB_DIR/agent-mh.json" \
				"$nst" "$tg" "$tbad" "$snd" "$mode" "$TIMER" "$nst0" "$SEED" "$OUT.d/runs.jsonl" "$BULK" \
				"$LIFT_RTO_MAX_MS" "${LIFT_HUB_KEYS:-}" \
				>>"$OUT.tmp" <<'PY'
import json, sys
pages = [json.loads(l) for l in open(sys.argv[1])]
n0 = json.loads(sys.argv[10])
nst = {k: v - n0.get(k, 0) for k, v in json.loads(sys.argv[4]).items()}   # this run's
L = json.load(open(sys.argv[2]))["lift"]["counters"]
mh = json.load(open(sys.argv[3]))
n = len(pages)
rec = {"t_good_s": float(sys.argv[5]), "t_bad_s": float(sys.argv[6]), "sender": sys.argv[7],
       "lift": sys.argv[8], "timer": sys.argv[9], "pages": n,
       "mean_page_s": round(sum(p["seconds"] for p in pages) / n, 3),
       "mean_uplink_bytes": round(sum(p["uplink_bytes"] for p in pages if not p.get("censored"))
                                  / max(1, sum(1 for p in pages if not p.get("censored")))),
       "page_s": [p["seconds"] for p in pages], "seed": int(sys.argv[11]),
       "bulk_bytes": int(sys.argv[13]), "satlink_rto_max_ms": int(sys.argv[14]),
       "hub_lift_keys": sys.argv[15],
       "censored": [p["page"] for p in pages if p.get("censored")],
       "fh_nstat": nst,
       "hub_lift": {k: L[k] for k in ("acks_rx", "fracks_rx", "acks_held", "freezes",
                                       "freezes_spare", "unfreezes", "expiry_freeze",
                                       "susp_frozen", "susp_share", "ooo_disable",
                                       "rtt_samples", "thaws")},
       "mh_pairs": mh.get("mh", {}).get("pairs", 0)}
print(json.dumps(rec, indent=1))
with open(sys.argv[12], "a") as f:
    f.write(json.dumps(rec) + "\n")
print("%s: mean page %.2f s, uplink %d B/page, fh timeouts %s, hub freezes %d" % (
    "tg%s tb%s %s lift %s timer %s" % tuple(sys.argv[5:10]), rec["mean_page_s"], rec["mean_uplink_bytes"],
    rec["fh_nstat"].get("TcpExtTCPTimeouts"), L["freezes"]), file=sys.stderr)
PY
		done
	done
	done
done
echo "]" >>"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
# The per-page records and the sender's ss -tin samples (cwnd traces) survive
# the work directory, which a passing run deletes.
tb_log "wrote $OUT and $OUT.d/ (pages-*.jsonl, ss-*.log)"
tb_pass
