#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e (f): satgw --check-config, no EAL and no namespaces. A good file exits 0;
# a bad one exits non-zero and prints every error as FILE:LINE:COLUMN: message
# on stderr. Checks the e2e policies, then sweeps tests/data/policy/good and
# tests/data/policy/bad (where a bad file's "# expect: L:C: ..." header names
# the position, that position must be reported).
# Usage: test_check_config.sh /path/to/satgw
set -uo pipefail
SATGW=${1:-}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=
if [ -d "$HERE/../data/policy" ]; then DATA=$(cd "$HERE/../data/policy" && pwd); fi
[ -x "$SATGW" ] || { echo "FAIL: satgw binary not found: '$SATGW'" >&2; exit 1; }
fails=0
checked=0
fail() { echo "  FAIL $*" >&2; fails=$((fails + 1)); }

good() {
	local f=$1 out rc=0
	checked=$((checked + 1))
	out=$("$SATGW" --check-config "$f" 2>&1) || rc=$?
	[ "$rc" -eq 0 ] || fail "$f: exit $rc, want 0: $out"
}

# bad FILE [LINE:COL ...]: non-zero, every stderr error line is FILE:LINE:COLUMN: message,
# and each LINE:COL given is among them.
bad() {
	local f=$1 out rc=0 lines pos
	shift
	checked=$((checked + 1))
	out=$("$SATGW" --check-config "$f" 2>&1 >/dev/null) || rc=$?
	[ "$rc" -ne 0 ] || { fail "$f: exit 0, want non-zero"; return; }
	lines=$(grep -cE "^$(printf '%s' "$f" | sed 's/[.[\*^$/]/\\&/g'):[0-9]+:[0-9]+: .+" <<<"$out")
	[ "$lines" -ge 1 ] || { fail "$f: no FILE:LINE:COLUMN: message line in: $out"; return; }
	for pos in "$@"; do
		grep -qF "$f:$pos: " <<<"$out" || fail "$f: no error reported at $pos in: $out"
	done
}

# The e2e policies are valid. Those naming a satlink key file next to them (lift_*: the
# test writes lift.keys at run time, mode 600, which a checkout cannot keep) are checked
# as their test uses them: copied beside a key file of the same form.
KEYDIR=$(mktemp -d)
trap 'rm -rf "$KEYDIR"' EXIT
printf '# test key\n1001 000102030405060708090a0b0c0d0e0f\n' >"$KEYDIR/lift.keys"
chmod 600 "$KEYDIR/lift.keys"
for f in "$HERE"/policies/*.yaml; do
	case "$(basename "$f")" in
	invalid.yaml | bad-syntax.yaml) ;;
	lift_hub.yaml | lift_terminal.yaml)
		cp "$f" "$KEYDIR/" && good "$KEYDIR/$(basename "$f")" ;;
	*) good "$f" ;;
	esac
done
# Our invalid files: exact positions (bad MAC 9:35, bad prefix 11:37, bad action 11:61;
# the unclosed flow mapping is noticed on line 7, reported at its '{' on line 6).
bad "$HERE/policies/invalid.yaml" 9:35 11:37 11:61
bad "$HERE/policies/bad-syntax.yaml" 6:5
# A missing file is an error too, named with the path.
bad "/nonexistent/satgw-e2e-$$.yaml"
# No argument: a usage error, non-zero.
"$SATGW" --check-config >/dev/null 2>&1 && fail "--check-config without FILE exited 0"

# The project's policy corpus.
if [ -n "$DATA" ]; then
	for f in "$DATA"/good/*.yaml; do
		[ -e "$f" ] && good "$f"
	done
	for f in "$DATA"/bad/*.yaml; do
		[ -e "$f" ] || continue
		pos=$(sed -nE '1,5s/^# *expect: *([0-9]+:[0-9]+):.*/\1/p' "$f" | head -n 1)
		# shellcheck disable=SC2086
		bad "$f" $pos
	done
fi

if [ "$fails" -ne 0 ]; then
	echo "[test_check_config] FAIL: $fails of $checked checks failed" >&2
	exit 1
fi
echo "[test_check_config] PASS: $checked files checked" >&2
