#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The LIFT grid (docs/experiments.md, "LIFT (issue 8)"): one worker per
# (point, sender), all started at once; each worker runs lift_experiment.sh
# over channel seeds SEED0, SEED0+1, ... (new runs start until DEADLINE, epoch
# seconds), per seed without and then with LIFT (the same channel realisation and
# page sequence, back to back under the same load). 
# Usage: lift_grid_run.sh SATGW MH_LIFT OUTDIR DEADLINE "SENDER:TIMER:TG:TB ..."
#   PAGES (5), SEED0 (101), NSEEDS (20), LIFT_X_TIMEOUT (120), LIFT_X_TAG (hlf)
# Each worker is one lift_experiment.sh over all its seeds (the testbed is set
# up once: 80 s at load 25); kill it at the deadline, the pages written so far
# stay in OUTDIR/*.json.d/. A failed run (box start timeout under load: a
# harness failure) is logged to OUTDIR/harness_failures and the worker goes
# on with the seeds not yet done (at most 3 tries).
set -u
SATGW=$1 MH=$2 OUTDIR=$3 DEADLINE=$4 JOBS=$5
PAGES=${PAGES:-5} SEED0=${SEED0:-101} NSEEDS=${NSEEDS:-20}
export LIFT_X_TAG=${LIFT_X_TAG:-hlf} TB_READY_S=${TB_READY_S:-60} TB_STOP_S=${TB_STOP_S:-60}
mkdir -p "$OUTDIR"
here=$(dirname "$(readlink -f "$0")")
worker() { # SENDER TIMER TG TB
	local seeds try rc out d
	seeds=$(seq "$SEED0" $((SEED0 + NSEEDS - 1)) | tr '\n' ' ')
	for try in 1 2 3; do
		[ -n "${seeds// /}" ] && [ "$(date +%s)" -lt "$DEADLINE" ] || break
		out="$OUTDIR/$1-$2-tg$3-tb$4-s${seeds%% *}-t$try.json"
		LIFT_X_POINTS="$3:$4" LIFT_X_SENDERS=$1 LIFT_X_TIMER=$2 LIFT_X_MODES="off on" \
			LIFT_X_SEEDS="$seeds" LIFT_X_PAGES=$PAGES \
			bash "$here/lift_experiment.sh" "$SATGW" "$MH" "$out" >"$out.log" 2>&1
		rc=$?
		[ $rc = 0 ] && break
		echo "$(date -u +%T) $out rc $rc try $try load $(cut -d' ' -f1-3 /proc/loadavg)" \
			>>"$OUTDIR/harness_failures"
		# the seeds whose off and on runs both finished are done
		d=$(cat "$out.d/runs.jsonl" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
m = {}
for l in sys.stdin:
    r = json.loads(l)
    m.setdefault(r["seed"], set()).add(r["lift"])
print(" ".join(str(s) for s, v in m.items() if v == {"off", "on"}))')
		for x in $d; do seeds=" $seeds "; seeds=${seeds/ $x / }; done
		seeds=$(echo $seeds)
	done
}
for j in $JOBS; do
	IFS=: read -r snd tmr tg tb <<<"$j"
	worker "$snd" "$tmr" "$tg" "$tb" &
done
while [ "$(date +%s)" -lt "$DEADLINE" ]; do
	echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUTDIR/load.log"
	sleep 30
done &
wait
