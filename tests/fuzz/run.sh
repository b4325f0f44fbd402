#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The libFuzzer runs that ctest makes (tests/fuzz/CMakeLists.txt; README.md here).
#
#   run.sh build FUZZ_DIR
#       configure FUZZ_DIR with clang and -DSATGW_FUZZ=ON, build the harnesses
#   run.sh run BIN_DIR WORK_DIR HARNESS
#       fuzz BIN_DIR/HARNESS for SATGW_FUZZ_SECONDS, starting from its
#       committed seeds copied to WORK_DIR/HARNESS/corpus; crash, leak, timeout
#       and out-of-memory reports go to WORK_DIR/HARNESS/artifacts/, the log to
#       WORK_DIR/HARNESS/fuzz.log. Fails on any finding.
#
# Environment (ctest sets them from the CMake cache variables of the same name):
#   SATGW_FUZZ_SECONDS  length of each run (default 60)
#   SATGW_FUZZ_TIMEOUT  per-input limit in seconds: one input slower than this
#                       fails the run (default 5)
#   SATGW_FUZZ_RSS_MB   memory limit of the process, and of one malloc (default 2048)
#   SATGW_FUZZ_SEED     libFuzzer's -seed, to replay a run (default: random, printed)
#   SATGW_FUZZ_CC, SATGW_FUZZ_CXX  the compilers of `build` (default clang, clang++)
#
# Nothing is written into the source tree: the seeds are copied, libFuzzer runs
# in the work directory and writes only there.
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
src=$(cd "$here/../.." && pwd)
harnesses=(fuzz_parse fuzz_satlink fuzz_policy fuzz_xcp fuzz_lift fuzz_tcp fuzz_esp fuzz_lift_mh fuzz_stream)

die() {
	echo "fuzz: FAIL: $*" >&2
	exit 1
}

# The seed directories of a harness (all committed, none written to).
seed_dirs() {
	case "$1" in
	fuzz_parse|fuzz_satlink|fuzz_xcp|fuzz_lift|fuzz_tcp|fuzz_esp|fuzz_lift_mh) echo "$here/corpus/$1" ;;
	fuzz_policy) echo "$src/tests/data/policy/good $src/tests/data/policy/bad" ;;
	fuzz_stream) echo "$here/corpus/$1" ;;
	*) die "unknown harness '$1' (known: ${harnesses[*]})" ;;
	esac
}

do_build() {
	local dir=$1 cc=${SATGW_FUZZ_CC:-clang} cxx=${SATGW_FUZZ_CXX:-clang++}

	# No silent skip: a machine without clang fails here (setup.sh installs
	# clang and libclang-rt-14-dev, libFuzzer's runtime).
	command -v "$cc" >/dev/null || die "$cc not found: install clang and libclang-rt-14-dev"
	command -v "$cxx" >/dev/null || die "$cxx not found: install clang"
	mkdir -p "$dir"
	cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
		-DSATGW_FUZZ=ON -DSATGW_FUZZ_TESTS=OFF >"$dir/configure.log" 2>&1 ||
		{ cat "$dir/configure.log" >&2; die "configure of $dir failed"; }
	ninja -C "$dir" "${harnesses[@]}" || die "build of the harnesses failed"
	echo "fuzz: built ${harnesses[*]} in $dir/tests/fuzz"
}

do_run() {
	local bin=$1/$3 work=$2/$3 h=$3 d f s v n rc secs timeout rss seed_arg=()
	local -a found

	secs=${SATGW_FUZZ_SECONDS:-60}
	timeout=${SATGW_FUZZ_TIMEOUT:-5}
	rss=${SATGW_FUZZ_RSS_MB:-2048}
	for v in "$secs" "$timeout" "$rss"; do
		[[ $v =~ ^[1-9][0-9]*$ ]] ||
			die "SATGW_FUZZ_SECONDS/TIMEOUT/RSS_MB: '$v' is not a positive integer"
	done
	[ -n "${SATGW_FUZZ_SEED:-}" ] && seed_arg=(-seed="$SATGW_FUZZ_SEED")
	[ -x "$bin" ] || die "$bin not built (run.sh build, or -DSATGW_FUZZ=ON with clang)"

	# A fresh working corpus from the committed seeds, every run.
	rm -rf "$work"
	mkdir -p "$work/corpus" "$work/artifacts"
	n=0
	for d in $(seed_dirs "$h"); do
		[ -d "$d" ] || die "seed directory $d is missing"
		for f in "$d"/*; do
			[ -f "$f" ] || continue
			cp -- "$f" "$work/corpus/$(basename "$d")-$(basename "$f")"
			n=$((n + 1))
		done
	done
	[ "$n" -gt 0 ] || die "no seeds for $h in $(seed_dirs "$h")"

	echo "fuzz: $h for ${secs} s from $n seeds, -timeout=$timeout -rss_limit_mb=$rss"
	echo "fuzz: log $work/fuzz.log, artifacts $work/artifacts/"
	rc=0
	(cd "$work" && exec "$bin" -max_total_time="$secs" -timeout="$timeout" \
		-rss_limit_mb="$rss" -malloc_limit_mb="$rss" -detect_leaks=1 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" "${seed_arg[@]}" \
		corpus) >"$work/fuzz.log" 2>&1 || rc=$?
	grep -m1 -E '^INFO: Seed: ' "$work/fuzz.log" || true

	# Any file in artifacts/ is a finding (crash-, leak-, timeout-, oom-,
	# slow-unit-), even if the exit status said nothing.
	mapfile -t found < <(find "$work/artifacts" -type f)
	if [ "$rc" -ne 0 ] || [ "${#found[@]}" -gt 0 ]; then
		echo "---- last 60 lines of $work/fuzz.log ----" >&2
		tail -n 60 "$work/fuzz.log" >&2
		echo "----" >&2
		for f in "${found[@]}"; do
			echo "fuzz: finding: $f (replay: $bin $f)" >&2
			# a committed seed that fails is named
			for d in $(seed_dirs "$h"); do
				for s in "$d"/*; do
					cmp -s -- "$f" "$s" && echo "fuzz: it is the seed $s" >&2
				done
			done
		done
		die "$h: exit status $rc, ${#found[@]} artifact(s)"
	fi
	grep -E '^(#[0-9]+[[:space:]]+DONE|stat::(number_of_executed_units|peak_rss_mb))' \
		"$work/fuzz.log" || true
	echo "fuzz: $h: no finding in ${secs} s ($(find "$work/corpus" -type f | wc -l) corpus entries)"
}

case "${1:-}" in
build)
	[ $# -eq 2 ] || die "usage: run.sh build FUZZ_DIR"
	do_build "$2"
	;;
run)
	[ $# -eq 4 ] || die "usage: run.sh run BIN_DIR WORK_DIR HARNESS"
	do_run "$(readlink -f "$2")" "$(readlink -m "$3")" "$4"
	;;
*)
	die "usage: run.sh build FUZZ_DIR | run.sh run BIN_DIR WORK_DIR HARNESS"
	;;
esac
