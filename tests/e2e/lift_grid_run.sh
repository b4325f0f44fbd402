#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The LIFT grid (docs/experiments.md, "LIFT (issue 8)"): one worker per
# (point, sender), all started at once; each worker runs lift_experiment.sh
# once per channel seed (SEED0, SEED0+1, ...) until DEADLINE (epoch seconds),
# without and then with LIFT on that seed (the same channel realisation and
# page sequence, back to back under the same load). A run
# that fails (box start timeout under load: a harness failure) is logged to
# OUTDIR/harness_failures and retried once with the same seed.
# Usage: lift_grid_run.sh SATGW MH_LIFT OUTDIR DEADLINE "SENDER:TIMER:TG:TB ..."
#   PAGES (5), SEED0 (101), LIFT_X_TIMEOUT (120), LIFT_X_TAG (hlf)
set -u
SATGW=$1 MH=$2 OUTDIR=$3 DEADLINE=$4 JOBS=$5
PAGES=${PAGES:-5} SEED0=${SEED0:-101}
export LIFT_X_TAG=${LIFT_X_TAG:-hlf} TB_READY_S=${TB_READY_S:-60} TB_STOP_S=${TB_STOP_S:-60}
mkdir -p "$OUTDIR"
here=$(dirname "$(readlink -f "$0")")
worker() { # SENDER TIMER TG TB
	local seed=$SEED0 try rc out
	while [ "$(date +%s)" -lt "$DEADLINE" ]; do
		for try in 1 2; do
			out="$OUTDIR/$1-$2-tg$3-tb$4-s$seed.json"
			LIFT_X_POINTS="$3:$4" LIFT_X_SENDERS=$1 LIFT_X_TIMER=$2 LIFT_X_MODES="off on" \
				LIFT_X_SEEDS=$seed LIFT_X_PAGES=$PAGES \
				bash "$here/lift_experiment.sh" "$SATGW" "$MH" "$out" \
				>>"$out.log" 2>&1
			rc=$?
			[ $rc = 0 ] && break
			echo "$(date -u +%T) $out rc $rc try $try load $(cut -d' ' -f1-3 /proc/loadavg)" \
				>>"$OUTDIR/harness_failures"
		done
		seed=$((seed + 1))
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
