#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e: the TCP split's faults (issue 10, docs/tcp-split.md "Faults end to end")
# with real Linux TCP at both ends.
#
#   fh (server) --- [hub, split] ==satlink== [emulator, GEO] ==== [terminal, split] --- mh (client)
#
# Every connection is opened by the client on mh (10.20.1.1, split_fault_client.py:
# one connection, its progress in a file, its end named: "eof", an errno, or
# "stall" when nothing moved for its own deadline) toward split_xfer.py's server
# on fh (10.10.0.1). Boxes: split_faults_hub.yaml, split_faults_terminal.yaml
# (split_*.yaml with idle_timeout_ms 20 s, and server ports 9100-9199 forwarded
# rather than split, for comparison).
#   1. Outage: the emulator runs split_faults_emulator_outage.yaml (BER 0, 10 s
#      outage both ways every 30 s from 15 s). An 8 MB download and, beside
#      it, a 4 MB IPv6 upload (mh fd00:20:1::1 -> fh fd00:10::1) start 3 s
#      before a window (emulator clock); 1 s into the window both are
#      connected and not complete (else again at the next window, once):
#      both complete, sha256 equal, no reset; the emulator dropped frames in
#      both directions; neither satlink session went down or saw a restart;
#      no half aborted, no relay overflow (relay_clipped 0).
#   Then the emulator runs split_emulator_clean.yaml (no outage) for the rest.
#   2. Hub restart: kill -KILL the hub after the client got 1 MB of an 8 MB
#      download, start it again. Once an echo crosses again, the client's
#      connection ends within 40 s in an error (a RST: ECONNRESET), never
#      "eof" and never a hang; what it got is the file's prefix; the
#      terminal counted aborted_restart; the server's side of it ended (its
#      thread logged an error or the client's FIN, never its own timeout).
#      A new download is split (accepted by the new hub) and intact.
#   3. Terminal restart (kill -KILL), the same assertions; the hub counted aborted_restart and restart_probes (the SYN
#      toward the waiting client, dataplane/split.c restart_probe: without it
#      the client waited for ever).
#   3b. Terminal stopped by SIGINT mid-download (graceful stop): the client
#      gets ECONNRESET within SF_STOP_END (10) s of the signal, its bytes the
#      file's prefix; the exit report counts halves_reset_at_stop; the
#      server's side ends (the hub's half reset it), not by its own timeout.
#   4. A server that vanishes: a split download and upload, and the same two
#      forwarded (ports 9100-9199), run at once; when every one is mid-transfer
#      fh0 goes down and the server process is SIGKILLed (nothing from fh ever
#      again). Forwarded (as without satgw): the upload ends in ETIMEDOUT
#      (mh's tcp_retries2 is set to 4: 41 s after its last write once),
#      the download waits (the client's deadline, 45 s, ends it as "stall"). Split: the client's leg is
#      the terminal's, so the client's own timers never fire; each ends in a
#      RST from satgw when the hub's half saw nothing for idle_timeout_ms (20 s;
#      the hub's leg gives up after 15 RTO expiries, ~7.7 min, later); prefixes
#      intact.
#   5. Exit reports of the last hub and terminal runs (stopped by SIGINT):
#      relay_clipped 0, mempools whole, stats.py's accounting identity.
# Time: 463 s at load ~15 on the shared 2-core VM; its waits (an outage window
# up to 30 s away, link_down_ms 15 s per restart, the 20 s idle timeout, the
# forwarded download's 45 s deadline) make ~150-170 s on an idle one (estimated).
# Usage: test_split_faults.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

P=$TB_E2E_DIR/policies
SF_FILE_KB=${SF_FILE_KB:-8192}
SF_SMALL_KB=${SF_SMALL_KB:-1024}
SF_UP_KB=${SF_UP_KB:-4096}
SF_STALL=${SF_STALL:-45}            # a client's own deadline: nothing moved for this long
SF_RESTART_END=${SF_RESTART_END:-40} # after a restart, once an echo crosses again
EMU_OUTAGE=$P/split_faults_emulator_outage.yaml
EMU_CLEAN=$P/split_emulator_clean.yaml
HUB_POL=$P/split_faults_hub.yaml
TERM_POL=$P/split_faults_terminal.yaml

tb_init "${1:-}"
# Names unique to this test ("sf"), so it runs next to other chain tests; the
# testbed's trap removes them.
TB_NS_FH="sf-fh-$TB_ID" TB_NS_MH="sf-mh-$TB_ID" TB_NS_HUB="sf-hub-$TB_ID"
TB_NS_EMU="sf-emu-$TB_ID" TB_NS_TERM="sf-term-$TB_ID" TB_PREFIX="sf-$TB_ID"
tb_topology chain
# IPv6 on fh and mh too (the policies route fd00:10::/64 and fd00:20:1::/64):
# phase 1 runs an IPv6 upload beside the IPv4 download.
tb_chain_ipv6
FH6=$TB_IP6_FH
CH=("$TB_PY" "$TB_E2E_DIR/chain.py")

for f in "$HUB_POL" "$TERM_POL" "$EMU_OUTAGE" "$EMU_CLEAN"; do
	"$TB_SATGW" --check-config "$f" >"$TB_DIR/check.out" 2>&1 ||
		{ cat "$TB_DIR/check.out" >&2; tb_fail "$(basename "$f") does not validate"; }
done
head -c "$((SF_FILE_KB * 1024))" /dev/urandom >"$TB_DIR/big.bin"
head -c "$((SF_SMALL_KB * 1024))" /dev/urandom >"$TB_DIR/small.bin"
head -c "$((SF_UP_KB * 1024))" /dev/urandom >"$TB_DIR/up.bin"
# The forwarded upload of phase 4 ends by the client's own retransmission
# bound: 4 retries (Linux: past 31 x 200 ms from the first retransmission, at
# the next RTO; the RTO over the queued satellite path is seconds long). With
# 3, uploads (split and forwarded) ended in ETIMEDOUT with no fault at all.
tb_ns mh sysctl -qw net.ipv4.tcp_retries2=4

# ---- boxes ---------------------------------------------------------------------
# box_launch BOX POLICY LCORES, then box_ready BOX: tb_box_start in two halves
# (test_split_chain.sh's), so boxes start at once; up to 180 s for telemetry (a loaded 2-core machine).
box_launch() {
	local box=$1 policy=$2 lcores=$3 ns ifs log json
	ns=$(tb__nsname "$box")
	read -r -a ifs <<<"$(tb__box_ifs "$box")"
	log=$(tb_box_log "$box")
	json=$(tb_box_json "$box")
	local -a eal=(--no-huge -m 512 --no-pci --file-prefix "$(tb_box_prefix "$box")" -l "$lcores"
		--vdev "net_af_packet0,iface=${ifs[0]},framecnt=2048"
		--vdev "net_af_packet1,iface=${ifs[1]},framecnt=2048")
	rm -f "$json"
	tb_log "starting satgw $box -l $lcores, policy $(basename "$policy")"
	echo "+ ip netns exec $ns $TB_SATGW ${eal[*]} -- -c $policy --stats-json $json -q" >>"$log"
	ip netns exec "$ns" "$TB_SATGW" "${eal[@]}" -- -c "$policy" --stats-json "$json" -q >>"$log" 2>&1 &
	TB_BOX_PID[$box]=$!
	TB_BOX_RC[$box]=
}
box_ready() {
	local box=$1 log
	log=$(tb_box_log "$box")
	"$TB_PY" "$TB_E2E_DIR/sgwtel.py" --wait 180 --pid "${TB_BOX_PID[$box]}" \
		"$(tb_box_prefix "$box")" /satgw/stats >/dev/null 2>"$TB_DIR/wait-$box.err" ||
		{ cat "$TB_DIR/wait-$box.err" >&2; tail -n 20 "$log" >&2; tb_fail "satgw $box did not become ready"; }
	tb_log "satgw $box ready (pid ${TB_BOX_PID[$box]})"
}
# stop_keep BOX TAG: testbed.sh's tb_boxes_stop_keep, 120 s at most; exit code 0 and
# its stats JSON kept as $TB_DIR/BOX-TAG.json.
stop_keep() { TB_STOP_S=120 tb_boxes_stop_keep "$2" "$1"; }
# tel BOX CMD EXPR: print a Python expression of telemetry CMD's value d.
tel() {
	tb_box_tel "$1" "$2" | "$TB_PY" -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$3"
}
# sl_events BOX: "link_downs peer_restarts" of the box's satlink session 0.
sl_events() { tel "$1" /satgw/satlink '"%d %d" % (d["0"]["link_downs"], d["0"]["peer_restarts"])'; }

# SF_SKIP_OUTAGE=1 (debugging): no phase 1, the emulator clean from the start.
EMU_FIRST=$EMU_OUTAGE
[ "${SF_SKIP_OUTAGE:-0}" != 1 ] || EMU_FIRST=$EMU_CLEAN
box_launch emu "$EMU_FIRST" 1
box_launch hub "$HUB_POL" 0
box_launch term "$TERM_POL" 0
for b in emu hub term; do box_ready "$b"; done
tb_wait_path mh "$TB_IP_FH" 60
tb_log "an echo crossed hub - emulator - terminal (satlink session up)"

# serve NAME PORT FILE: split_xfer.py's server on fh (GET, PUT); its log of
# finished connections in $TB_DIR/NAME.jsonl.
serve() {
	local name=$1 port=$2 file=$3 bind=${4:-$TB_IP_FH} _
	rm -f "$TB_DIR/$name.ready"
	tb_bg fh "$name" "$TB_PY" "$TB_E2E_DIR/split_xfer.py" serve --bind "$bind" --port "$port" \
		--file "$file" --log "$TB_DIR/$name.jsonl" --ready "$TB_DIR/$name.ready" --timeout 300
	SRV_PID[$name]=$TB_LAST_PID
	for _ in $(seq 1 100); do [ -e "$TB_DIR/$name.ready" ] && return 0; sleep 0.05; done
	cat "$TB_DIR/$name.log" >&2
	tb_fail "server $name did not start"
}
declare -A SRV_PID=() CL_PID=()

# cl_start NAME PORT OP FILE [STALL [HOST]]: split_fault_client.py on mh in
# the background (its own deadline STALL, default SF_STALL; the server at HOST,
# default fh's IPv4 address); its result in $TB_DIR/NAME.json, its progress in
# $TB_DIR/NAME.prog.
cl_start() {
	local name=$1 port=$2 op=$3 file=$4 stall=${5:-$SF_STALL} host=${6:-$TB_IP_FH}
	rm -f "$TB_DIR/$name.json" "$TB_DIR/$name.prog"
	tb_bg mh "$name" "$TB_PY" "$TB_E2E_DIR/split_fault_client.py" --host "$host" --port "$port" \
		--op "$op" --file "$file" --result "$TB_DIR/$name.json" --progress "$TB_DIR/$name.prog" \
		--stall "$stall" --timeout 30
	CL_PID[$name]=$TB_LAST_PID
}
# cl_bytes NAME: its progress so far (-1 before it connected).
cl_bytes() { cat "$TB_DIR/$1.prog" 2>/dev/null || echo -1; }
# cl_wait_bytes NAME BYTES TIMEOUT: until the client moved BYTES (fails if it ended first).
cl_wait_bytes() {
	local name=$1 want=$2 deadline=$(($(date +%s) + $3))
	until [ "$(cl_bytes "$name")" -ge "$want" ]; do
		tb__alive "${CL_PID[$name]}" || { cat "$TB_DIR/$name.log" >&2; tb_fail "$name ended before $want bytes"; }
		[ "$(date +%s)" -lt "$deadline" ] || tb_fail "$name: $(cl_bytes "$name") bytes after $3 s (want $want)"
		sleep 0.05
	done
}
# cl_done NAME TIMEOUT: wait for the client to end (it ends by itself within
# SF_STALL s of its last byte; TIMEOUT bounds the test's wait on top).
cl_done() {
	tb_wait_pid "${CL_PID[$1]}" "$2" || { cat "$TB_DIR/$1.log" >&2; tb_fail "$1: the client did not end within $2 s"; }
	[ -s "$TB_DIR/$1.json" ] || { cat "$TB_DIR/$1.log" >&2; tb_fail "$1: no result"; }
	tb_log "  $1: $(cat "$TB_DIR/$1.json")"
}
# cl_check NAME EXPR WHAT: EXPR (Python, r = the client's result) must hold.
cl_check() {
	"$TB_PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$TB_DIR/$1.json" "$2" || tb_fail "$1: $3 ($(cat "$TB_DIR/$1.json"))"
	tb_log "  ok   $1: $3"
}
# srv_end SRVNAME CLIENT TIMEOUT: wait until the server logged the client's
# connection (its thread ended); print the error it ended with ("" = the
# client's FIN after everything was sent).
srv_end() {
	"$TB_PY" - "$TB_DIR/$1.jsonl" "$TB_DIR/$2.json" "$3" <<'PY' || tb_fail "server $1: no end of $2's connection within $3 s"
import json, os, sys, time
local = json.load(open(sys.argv[2]))["local"]
deadline = time.monotonic() + float(sys.argv[3])
while time.monotonic() < deadline:
    if os.path.exists(sys.argv[1]):
        for line in open(sys.argv[1]):
            r = json.loads(line)
            if r["peer"] == local:
                print(r["error"])
                sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PY
}

PORT=$(tb_rand_port)
PORT_PLAIN=$((9100 + RANDOM % 100))
serve srv "$PORT" "$TB_DIR/big.bin"
serve plain "$PORT_PLAIN" "$TB_DIR/big.bin"
PORT_SMALL=$((PORT + 1))
serve small "$PORT_SMALL" "$TB_DIR/small.bin"
PORT6=$((PORT + 3))
serve srv6 "$PORT6" "$TB_DIR/big.bin" "$FH6"
FILE_B=$((SF_FILE_KB * 1024))
UP_B=$((SF_UP_KB * 1024))

# ---- 1. a 10 s outage mid-download ---------------------------------------------------
if [ "${SF_SKIP_OUTAGE:-0}" != 1 ]; then
tb_log "phase 1: a 10 s outage mid-download ($(basename "$EMU_OUTAGE"))"
read -r HUB_SL0 < <(sl_events hub)
read -r TERM_SL0 < <(sl_events term)
LEAD=3
emu=$(tb_box_prefix emu)
for try in 1 2; do
	win=$("${CH[@]}" next-window "$emu" "$EMU_OUTAGE" --lead "$LEAD") || tb_fail "no outage window left"
	"${CH[@]}" wait-clock "$emu" "$(awk -v w="$win" -v l="$LEAD" 'BEGIN { printf "%.3f", w - l }')" \
		--timeout 60 >/dev/null
	read -r f0 r0 < <("${CH[@]}" drops "$emu")
	cl_start outage "$PORT" get "$TB_DIR/big.bin"
	cl_start outage6 "$PORT6" put "$TB_DIR/up.bin" "$SF_STALL" "$FH6"
	now=$("${CH[@]}" wait-clock "$emu" "$(awk -v w="$win" 'BEGIN { printf "%.3f", w + 1 }')" --timeout 60)
	at=$(cl_bytes outage)
	at6=$(cl_bytes outage6)
	tb_log "  emulator clock $now s (window $win-$(awk -v w="$win" 'BEGIN { print w + 10 }') s): the client has $at of $FILE_B bytes; the IPv6 upload sent $at6 of $UP_B"
	cl_done outage 120
	cl_done outage6 120
	read -r f1 r1 < <("${CH[@]}" drops "$emu")
	if [ "$at" -ge 0 ] && [ "$at" -lt "$FILE_B" ] && [ "$at6" -ge 0 ] && [ "$at6" -lt "$UP_B" ]; then
		break
	fi
	tb_log "  the download or the upload was not connected, or already complete, 1 s into the outage: again, at the next window"
	[ "$try" -lt 2 ] || tb_fail "two tries, and the download and the upload were not both under way in an outage window"
done
cl_check outage 'r["end"] == "eof" and r["complete"]' "the download ran into the outage and completed intact (sha256 equal, the server's FIN, no reset)"
cl_check outage 'r["seconds"] > 10' "it lasted longer than the outage"
cl_check outage6 'r["end"] == "eof" and r["complete"]' "the IPv6 upload ran into the outage and completed intact (the server's sha256 equal, its FIN, no reset)"
cl_check outage6 'r["seconds"] > 10' "it lasted longer than the outage"
e=$(srv_end srv6 outage6 30)
[ -z "$e" ] || tb_fail "outage: the IPv6 server's side ended with '$e' (want the client's FIN)"
[ $((f1 - f0)) -gt 0 ] && [ $((r1 - r0)) -gt 0 ] ||
	tb_fail "the emulator dropped forward $((f1 - f0)) / return $((r1 - r0)) frames to the outage during the download (want both > 0)"
tb_log "  ok   the outage dropped $((f1 - f0)) forward and $((r1 - r0)) return frames meanwhile"
e=$(srv_end srv outage 30)
[ -z "$e" ] || tb_fail "outage: the server's side ended with '$e' (want the client's FIN)"
[ "$(sl_events hub)" = "$HUB_SL0" ] && [ "$(sl_events term)" = "$TERM_SL0" ] ||
	tb_fail "a satlink session went down or restarted in the outage (link_downs peer_restarts: hub $HUB_SL0 -> $(sl_events hub), terminal $TERM_SL0 -> $(sl_events term))"
tb_log "  ok   the satlink sessions rode it out (link_downs, peer_restarts unchanged: hub $HUB_SL0, terminal $TERM_SL0)"
for b in hub term; do
	# (Not rst_*: the download's own end, eof and sha256, shows it was not
	# reset. A half waiting out TIME-WAIT (60 s) of an earlier, finished try is
	# no longer idle-reset with idle_timeout_ms 20 s: lib/sgw_split.c clean_over.)
	tb_box_wait_tel "$b" 10 /satgw/split "d['aborted_restart'] == 0 and d['relay_clipped'] == 0"
done
tb_box_wait_tel term 10 /satgw/split "d['opened'] >= 1"
tb_box_wait_tel hub 10 /satgw/split "d['accepted'] == $(tel term /satgw/split 'd["opened"]')"
tb_log "  ok   no half aborted for a restart, relay_clipped 0 at both"

# The rest without outages.
stop_keep emu outage
box_launch emu "$EMU_CLEAN" 1
box_ready emu
tb_wait_path mh "$TB_IP_FH" 60
fi

# restart_case NAME BOX SIGNAL: a download, BOX killed with SIGNAL after the
# client got 1 MB, started again; the client's and the server's ends checked,
# then a new download.
restart_case() {
	local name=$1 box=$2 sig=$3 other e pol
	[ "$box" = hub ] && { other=term; pol=$HUB_POL; } || { other=hub; pol=$TERM_POL; }
	local ab0
	local pr0
	ab0=$(tel "$other" /satgw/split 'd["aborted_restart"]')
	pr0=$(tel "$other" /satgw/split 'd["restart_probes"]')
	# The client's own deadline is far: a restart takes 10-80 s on a loaded
	# machine. What bounds it is the test's wait once the box is back.
	cl_start "$name" "$PORT" get "$TB_DIR/big.bin" 600
	cl_wait_bytes "$name" $((1024 * 1024)) 60
	tb_log "  $name: the client has $(cl_bytes "$name") bytes: kill -$sig the $box"
	if [ "$sig" = INT ]; then
		stop_keep "$box" "$name"
	else
		kill -"$sig" "${TB_BOX_PID[$box]}"
		tb_wait_pid "${TB_BOX_PID[$box]}" 30 || true
		TB_BOX_PID[$box]=
	fi
	box_launch "$box" "$pol" 0
	box_ready "$box"
	tb_wait_path mh "$TB_IP_FH" 60
	tb_log "  the $box is back, an echo crosses: the client's connection must end within $SF_RESTART_END s"
	cl_done "$name" "$SF_RESTART_END"
	cl_check "$name" 'r["end"] not in ("eof", "stall") and not r["complete"] and r["prefix_ok"]' \
		"its connection ended in an error (a reset), not a complete-looking or hung transfer; its bytes are the file's prefix"
	tb_box_wait_tel "$other" 30 /satgw/split "d['aborted_restart'] > $ab0"
	tb_log "  ok   the $other counted aborted_restart ($ab0 -> $(tel "$other" /satgw/split 'd["aborted_restart"]'))"
	# It sent a SYN toward the far peer of the half it gave up (split.c
	# restart_probe): the waiting client's only way to learn of it.
	tb_box_wait_tel "$other" 10 /satgw/split "d['restart_probes'] > $pr0"
	e=$(srv_end srv "$name" 60)
	[ "$e" != "timed out" ] || tb_fail "$name: the server's side only ended by its own timeout"
	tb_log "  ok   the server's side ended (${e:-by the FIN of the client})"
	local acc0
	acc0=$(tel hub /satgw/split 'd["accepted"]')
	cl_start "$name-new" "$PORT_SMALL" get "$TB_DIR/small.bin"
	cl_done "$name-new" 120
	cl_check "$name-new" 'r["end"] == "eof" and r["complete"]' "a new download after the restart is intact"
	tb_box_wait_tel hub 10 /satgw/split "d['accepted'] > $acc0"
	tb_log "  ok   and split (the hub accepted it)"
}

# ---- 2. the hub restarted mid-download ---------------------------------------------
tb_log "phase 2: the hub killed (SIGKILL) and started again mid-download"
restart_case hubrst hub KILL

# ---- 3. the terminal restarted mid-download ---------------------------------------
# SIGKILL (a crash): a graceful stop slower than idle_timeout_ms (61 s once on
# the loaded VM) let the old terminal's idle timer reset the stream first; the
# hub's half was gone before the new terminal's HELLO, nothing probed the
# client, and it waited (docs/tcp-split.md "Faults end to end").
tb_log "phase 3: the terminal killed (SIGKILL) and started again mid-download"
restart_case termrst term KILL

# ---- 3b. the terminal stopped gracefully (SIGINT) mid-download ---------------------
# Before its ports stop, the terminal resets every open half both ways
# (dataplane/split.c split_stop): the client gets ECONNRESET within
# SF_STOP_END s of the signal, whatever the process's own exit takes; its bytes
# are the file's prefix; the hub's half hears RST ABORT and resets the server.
tb_log "phase 3b: the terminal stopped (SIGINT) mid-download"
cl_start termstop "$PORT" get "$TB_DIR/big.bin" 600
cl_wait_bytes termstop $((1024 * 1024)) 60
tb_log "  termstop: the client has $(cl_bytes termstop) bytes: kill -INT the terminal"
T_SIG=$(date +%s.%N)
kill -INT "${TB_BOX_PID[term]}"
cl_done termstop "${SF_STOP_END:-10}"
tb_log "  the client's connection ended $(awk -v a="$(date +%s.%N)" -v b="$T_SIG" 'BEGIN { printf "%.1f", a - b }') s after the signal"
cl_check termstop 'r["end"] == "ECONNRESET" and r["prefix_ok"] and not r["complete"]' \
	"the client got a RST from the stopping terminal, after a correct prefix"
stop_keep term stop
"$TB_PY" -c 'import json, sys
c = json.load(open(sys.argv[1]))["split"]["counters"]
sys.exit(0 if c["halves_reset_at_stop"] >= 1 else 1)' "$TB_DIR/term-stop.json" ||
	tb_fail "the terminal's exit report counts no halves_reset_at_stop"
e=$(srv_end srv termstop 30)
[ "$e" != "timed out" ] || tb_fail "termstop: the server's side only ended by its own timeout"
tb_log "  ok   halves_reset_at_stop counted; the server's side ended (${e:-by the FIN of the client})"
box_launch term "$TERM_POL" 0
box_ready term
tb_wait_path mh "$TB_IP_FH" 60

# ---- 4. a server that vanishes ----------------------------------------------------------
tb_log "phase 4: the server vanishes (fh0 down, the server SIGKILLed) mid-transfer; split and forwarded side by side"
# Files far larger than what moves before the server vanishes (a loaded
# machine is slow to see every transfer under way): none may complete.
head -c $((64 * 1024 * 1024)) /dev/urandom >"$TB_DIR/huge.bin"
head -c $((16 * 1024 * 1024)) /dev/urandom >"$TB_DIR/hugeup.bin"
serve vsrv "$((PORT + 2))" "$TB_DIR/huge.bin"
PORT_PLAIN2=$((9100 + (PORT_PLAIN - 9100 + 50) % 100))   # forwarded too (9100-9199)
serve vplain "$PORT_PLAIN2" "$TB_DIR/huge.bin"
OPENED4=$(tel term /satgw/split 'd["opened"]')
IDLE4=$(($(tel hub /satgw/split 'd["idle_timeout"]') + $(tel term /satgw/split 'd["idle_timeout"]')))
# The upload first, and the download only once the upload is split: the upload
# fills the terminal's satlink feed queue within milliseconds, and the
# download's SYN must still find room for its OPEN (the queue's reserve for
# control messages; without it, it was forwarded unsplit, bypassed_no_room, as
# the CI run of 5bed12f met).
cl_start vput "$((PORT + 2))" put "$TB_DIR/hugeup.bin"
tb_box_wait_tel term 30 /satgw/split "d['opened'] > $OPENED4"
cl_start vget "$((PORT + 2))" get "$TB_DIR/huge.bin"
cl_start pget "$PORT_PLAIN2" get "$TB_DIR/huge.bin"
# Its own deadline above the kernel's retransmission bound (41 s once, with 4 retries).
cl_start pput "$PORT_PLAIN2" put "$TB_DIR/hugeup.bin" 150
# Until every one moved 256 KB (one waiter for the four: bash loops are slow under load).
"$TB_PY" - "$TB_DIR" 120 vget vput pget pput <<'PY' || tb_fail "phase 4: not every transfer under way"
import os, sys, time
d, deadline, names = sys.argv[1], time.monotonic() + float(sys.argv[2]), sys.argv[3:]
def prog(n):
    try:
        return int(open(os.path.join(d, n + ".prog")).read())
    except (OSError, ValueError):
        return -1
while time.monotonic() < deadline:
    if all(prog(n) >= 256 * 1024 for n in names):
        sys.exit(0)
    if any(os.path.exists(os.path.join(d, n + ".json")) for n in names):
        break
    time.sleep(0.02)
print("  progress: %s" % {n: prog(n) for n in names})
sys.exit(1)
PY
[ "$(tel term /satgw/split 'd["opened"]')" -eq $((OPENED4 + 2)) ] ||
	tb_fail "phase 4: the terminal split $(($(tel term /satgw/split 'd["opened"]') - OPENED4)) connections (want the 2 to port $((PORT + 2)), not those to $PORT_PLAIN2)"
tb_ns fh ip link set fh0 down
kill -KILL "${SRV_PID[srv]}" "${SRV_PID[plain]}" "${SRV_PID[small]}" "${SRV_PID[vsrv]}" \
	"${SRV_PID[vplain]}" 2>/dev/null || true
T_GONE=$(date +%s.%N)
tb_log "  fh0 down, servers killed: vget $(cl_bytes vget), vput $(cl_bytes vput), pget $(cl_bytes pget), pput $(cl_bytes pput) bytes so far"
for c in vget vput pget; do cl_done "$c" $((SF_STALL + 60)); done
cl_done pput 210
since() { awk -v a="$(date +%s.%N)" -v b="$T_GONE" 'BEGIN { printf "%.1f", a - b }'; }
cl_check pput 'r["end"] == "ETIMEDOUT"' "forwarded upload: ETIMEDOUT by the client's own retransmission bound (as without satgw)"
cl_check pget 'r["end"] == "stall" and r["prefix_ok"]' "forwarded download: nothing more arrives and nothing ends it; the client's own ${SF_STALL} s deadline does (as without satgw)"
cl_check vget 'r["end"] == "ECONNRESET" and r["prefix_ok"] and not r["complete"]' "split download: a RST from satgw (the hub's idle timeout), after a correct prefix"
cl_check vput 'r["end"] in ("ECONNRESET", "EPIPE") and not r["complete"]' "split upload: a RST from satgw (the hub's idle timeout)"
IDLE_H=$(tel hub /satgw/split 'd["idle_timeout"]')
IDLE_T=$(tel term /satgw/split 'd["idle_timeout"]')
[ $((IDLE_H + IDLE_T - IDLE4)) -ge 2 ] ||
	tb_fail "idle_timeout: hub $IDLE_H, terminal $IDLE_T, $IDLE4 before (want 2 more: both split connections)"
tb_log "  ok   idle timeouts meanwhile: $((IDLE_H + IDLE_T - IDLE4)) (hub $IDLE_H, terminal $IDLE_T in all); all four ended $(since) s after the server vanished"

# ---- 5. the exit reports ----------------------------------------------------------------
stop_keep hub end
stop_keep term end
stop_keep emu end
for j in hub-end term-end; do
	"$TB_PY" - "$TB_DIR/$j.json" "$j" <<'PY' || tb_fail "$j: split counters"
import json, sys
c = json.load(open(sys.argv[1]))["split"]["counters"]
print("  %s split: %s" % (sys.argv[2], ", ".join("%s %d" % kv for kv in sorted(c.items()) if kv[1])))
ok = c["relay_clipped"] == 0
print("  %s %s: relay_clipped %d" % ("ok  " if ok else "FAIL", sys.argv[2], c["relay_clipped"]))
sys.exit(0 if ok else 1)
PY
	"$TB_PY" "$TB_E2E_DIR/stats.py" check "$TB_DIR/$j.json" --expect 'mempool.in_use == 0' >&2 ||
		tb_fail "$j accounting ($TB_DIR/$j.json)"
done
tb_pass
