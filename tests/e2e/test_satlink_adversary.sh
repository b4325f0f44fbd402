#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e: a hostile peer on the satellite segment (issue 11, "an adversary that
# stays"), against a live satlink session between a hub and a terminal.
#
#   fh --- [satgw hub] === hub0 [satgw emulator] term0 === [satgw terminal] --- mh
#                            ^                    ^
#                            +--- sl_adversary.py +  (in the emulator's namespace)
#
# testbed.sh's chain; the link is chain-emulator-ber.yaml without its bit
# errors (20 Mbit/s forward, 2 Mbit/s return, 270 ms each way, no loss: a
# recorded frame played back is one its receiver has). The adversary
# (sl_adversary.py) listens to both legs of the segment in the emulator's
# namespace, learns the epochs, sequence numbers and nonces from the headers
# (never encrypted), records frames, and sends its own straight into the hub
# (hub0) or the terminal (term0) with PACKET_QDISC_BYPASS, so the emulator
# does not relay them and each forged frame reaches exactly the end it aims
# at. While it attacks, every worker's loop counter of every running box is
# sampled every 1 s (/satgw/workers): it must move within every 3 s (no
# worker stalls; defect 1 of issue 11 froze one for ~10 s; one sample
# interval would also catch a busy machine not running a worker).
#
#   1. AES-GCM (a fresh AES-256 key for terminal 1001 at both ends). The
#      adversary sends, at both ends, until a ADV_FILE_KB (1024) KB transfer
#      fh -> mh that starts after its first round has arrived: HELLO and
#      HELLO_ACK of future, older, maximal and zero epochs, naming no peer or
#      another epoch; STATUS with every edge of the sequence space around the
#      window (snd_nxt + 2^31 and +/- 1, 0xffffffff, 0, 2^31, far ahead, far
#      behind) with empty and full 256-word bitmaps, and 257 words; a frame
#      per header check; recorded frames played back (>= 1 s old) and
#      reflected; recorded frames cut at every field boundary, raw and with
#      their length made to match; a flood of valid-looking frames (at most
#      ADV_FLOOD per end, paced at ADV_PPS frames/s). Sealed-looking (made-up
#      nonce, ciphertext, tag), some in clear, some with the receiver's own
#      direction bit or an older epoch. Checked: the sha256 matches; at each
#      end every forged frame was refused before the session machine (header
#      parse, no session, or the crypto layer: sent - af_packet ring overflow
#      <= refused <= sent), by every expected reason (bad_tag, unprotected,
#      bad_dir, stale_epoch, trunc, replay/too_old, each header check); the
#      session machine saw none (no ARQ refusal, no hello_refused_live, no
#      late status); no peer restart, no peer lost, no link down.
#   2. No keys, the real peer live: the same rounds minus what a session
#      cannot tell from its peer without keys (no DATA; STATUS only outside
#      [snd_una - ring, snd_nxt] or with an empty bitmap). The transfer
#      arrives intact; HELLOs of other epochs were refused because the peer is
#      live (hello_refused_live), impossible acks as bad frames, other epochs
#      as stale; no peer restart, no peer lost, no link down.
#   3. No keys, a takeover during an outage: the terminal is frozen
#      (SIGSTOP) so that the hub hears nothing from it; the adversary sends
#      HELLOs of a new epoch F naming the hub until the hub adopts it (after
#      link_down of silence, as it must take a restarted terminal), thaws the
#      terminal, keeps F alive for ADV_HOLD_S s, then goes silent. Bound: the
#      real session is back (both up, each naming the other's real epoch)
#      within ADV_RECOVER_S (15) s of the adversary's last frame: F silent
#      for link_down (2 s), the terminal's forget of the hub after link_down,
#      one handshake (hello interval 1 s, a 541 ms round trip); then an echo
#      and a transfer cross.
#   4. No keys, what a live session cannot tell from its peer: ADV_DATA
#      (4096, more than any window) DATA frames of each end's epoch at
#      consecutive sequence numbers from the other's cumulative ack, STATUS
#      frames acknowledging the whole window, HELLOs of other epochs; then
#      silence. Without keys there is no integrity: the forged frames are
#      delivered (they are not IP: deliver_not_ip) and real ones are lost.
#      Bound: the session is back within ADV_RECOVER_S s of the last forged
#      frame, an echo and a transfer cross.
#   Every box exits 0 with no mbuf in use and its exit report's accounting
#   identity holding.
# Usage: test_satlink_adversary.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

P=$TB_E2E_DIR/policies
HUB_POLICY=$P/chain-hub-satlink.yaml
TERM_POLICY=$P/chain-terminal-satlink.yaml
ADV_FILE_KB=${ADV_FILE_KB:-1024}      # transfers during the attacks (phases 1, 2)
ADV_AFTER_KB=${ADV_AFTER_KB:-256}     # transfers after a recovery (phases 3, 4)
ADV_FLOOD=${ADV_FLOOD:-6000}          # flood frames per end, at most (phases 1, 2)
ADV_PPS=${ADV_PPS:-4000}              # the adversary's pace, frames/s
ADV_DATA=${ADV_DATA:-4096}            # forged DATA frames per end (phase 4)
ADV_HOLD_S=${ADV_HOLD_S:-2}           # the forger keeps the session this long (phase 3)
ADV_RECOVER_S=${ADV_RECOVER_S:-15}    # bound on the recovery after the last forged frame

tb_init "${1:-}"
tb_topology chain
ADV=("$TB_PY" "$TB_E2E_DIR/sl_adversary.py")
SLPY=("$TB_PY" "$TB_E2E_DIR/satlink.py")

# The link without bit errors: every frame the adversary records reached its
# receiver, so playing it back is a replay.
EMU_POLICY=$TB_DIR/chain-emulator-clean.yaml
sed '/^ *loss: /d' "$P/chain-emulator-ber.yaml" >"$EMU_POLICY"
grep -q 'ber:' "$EMU_POLICY" && tb_fail "could not take the bit errors out of the link"

G=$TB_DIR/gcm
mkdir -p "$G"
"${SLPY[@]}" keyfile "$G/hub.keys" 1001
cp -p "$G/hub.keys" "$G/term.keys"
with_keys() { sed "s|^satlink:\$|satlink:\n  keys: $2|" "$1"; }
with_keys "$HUB_POLICY" hub.keys >"$G/hub.yaml"
with_keys "$TERM_POLICY" term.keys >"$G/term.yaml"
grep -q '^  keys: hub.keys$' "$G/hub.yaml" || tb_fail "could not add keys to the hub policy"
for f in "$HUB_POLICY" "$TERM_POLICY" "$EMU_POLICY" "$G/hub.yaml" "$G/term.yaml"; do
	"$TB_SATGW" --check-config "$f" >"$TB_DIR/check.out" 2>&1 ||
		{ cat "$TB_DIR/check.out" >&2; tb_fail "$(basename "$f") does not validate"; }
done

# snap BOX FILE: the box's satlink and port counters, with the kernel's count
# of frames its sat0 received and of frames the adversary's leg dropped.
snap() {
	local box=$1 leg
	[ "$box" = hub ] && leg=hub0 || leg=term0
	"${ADV[@]}" snap "$(tb_box_prefix "$box")" "$2" \
		--set "kernel_rx=$(tb_ns "$box" cat /sys/class/net/sat0/statistics/rx_packets)" \
		--set "leg_tx_dropped=$(tb_ns emu cat "/sys/class/net/$leg/statistics/tx_dropped")" ||
		tb_fail "no telemetry from $box"
}
# loops_start TAG BOX...: sample the boxes' workers' loop counters until loops_check TAG.
LOOPS_PID=
loops_start() {
	local tag=$1 box
	local -a pfx=()
	shift
	for box in "$@"; do pfx+=("$(tb_box_prefix "$box")"); done
	tb_bg_local "loops-$tag" "${ADV[@]}" loops "$TB_DIR/loops-$tag.json" "${pfx[@]}" --interval 1
	LOOPS_PID=$TB_LAST_PID
}
loops_check() {
	kill -TERM "$LOOPS_PID" 2>/dev/null || true
	tb_wait_pid "$LOOPS_PID" 10 || tb_fail "the loop sampler failed ($TB_DIR/loops-$1.log)"
	"${ADV[@]}" loops-check "$TB_DIR/loops-$1.json" --min-samples "${2:-4}" >&2 ||
		tb_fail "a worker's loop counter stood still during the attack ($1: $TB_DIR/loops-$1.json)"
}
# wait_file FILE SECONDS PID WHAT: until FILE exists; fail if PID ends first.
wait_file() {
	local f=$1 t=$(($2 * 10)) pid=$3 _
	for _ in $(seq 1 "$t"); do
		[ -s "$f" ] && return 0
		tb__alive "$pid" || { cat "$TB_DIR/$4.log" >&2; tb_fail "$4 ended before $(basename "$f")"; }
		sleep 0.1
	done
	cat "$TB_DIR/$4.log" >&2
	tb_fail "$4: no $(basename "$f") after $2 s"
}
stop_adv() {
	kill -TERM "$1" 2>/dev/null || true
	tb_wait_pid "$1" 30 || { cat "$TB_DIR/$2.log" >&2; tb_fail "the adversary failed ($2)"; }
}
jget() { "$TB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d = d[k]
print(d)' "$1" "$2"; }
adv_log() {
	"$TB_PY" - "$1" "$2" <<'PY' >&2
import json, sys
d = json.load(open(sys.argv[1]))
for end in ("hub", "term"):
    s = d["sent"][end]
    print("  %s: %d frames to the %s: %s" % (sys.argv[2], s.get("total", 0), end,
          ", ".join("%s %d" % kv for kv in sorted(s.items()) if kv[0] != "total")))
print("  %s: learned hub epoch %d, terminal epoch %d, terminal %d" % (
    sys.argv[2], d["hub"]["epoch"], d["term"]["epoch"], d["hub"]["terminal_id"]))
PY
}
# learned_right ADVJSON: the epochs the adversary learned from the segment are
# the boxes' own (telemetry): it attacked the real session.
learned_right() {
	local he te
	he=$(tb_box_tel hub /satgw/satlink | "$TB_PY" -c 'import json,sys; print(json.load(sys.stdin)["epoch"])')
	te=$(tb_box_tel term /satgw/satlink | "$TB_PY" -c 'import json,sys; print(json.load(sys.stdin)["epoch"])')
	if [ "$(jget "$1" hub.epoch)" != "$he" ] || [ "$(jget "$1" term.epoch)" != "$te" ]; then
		tb_fail "the adversary learned epochs $(jget "$1" hub.epoch)/$(jget "$1" term.epoch), the boxes have $he/$te"
	fi
}
stop_boxes() {
	local tag=$1 box
	shift
	tb_boxes_stop_keep "$tag" "$@"
	for box in "$@"; do
		"$TB_PY" "$TB_E2E_DIR/stats.py" check "$TB_DIR/$box-$tag.json" \
			--expect 'mempool.in_use == 0' >&2 ||
			tb_fail "counter checks failed for $box ($tag: $TB_DIR/$box-$tag.json)"
	done
}
# attack_during_transfer TAG MODE: the adversary's rounds around a transfer fh -> mh.
attack_during_transfer() {
	local tag=$1 mode=$2 adv xfer=ok
	head -c "$((ADV_FILE_KB * 1024))" /dev/urandom >"$TB_DIR/$tag.bin"
	snap hub "$TB_DIR/$tag-hub-before.json"
	snap term "$TB_DIR/$tag-term-before.json"
	loops_start "$tag" hub term emu
	tb_bg emu "adv-$tag" "${ADV[@]}" attack --mode "$mode" --out "$TB_DIR/adv-$tag.json" \
		--ready "$TB_DIR/adv-$tag.ready" --flood "$ADV_FLOOD" --pps "$ADV_PPS" --max-seconds 90
	adv=$TB_LAST_PID
	wait_file "$TB_DIR/adv-$tag.ready" 20 "$adv" "adv-$tag"
	learned_right "$TB_DIR/adv-$tag.ready"
	tb_log "$tag: the adversary's first round is out ($mode); transfer of $ADV_FILE_KB KB fh -> mh"
	# In a subshell (no traps there): a failed transfer is reported after the
	# loop counters, which say whether a worker stalled.
	( tb_xfer fh mh "$TB_IP_MH" "$TB_DIR/$tag.bin" 90 ) || xfer=failed
	stop_adv "$adv" "adv-$tag"
	sleep 0.5  # the last forged frames processed, counters published (50 ms)
	loops_check "$tag"
	[ "$xfer" = ok ] || tb_fail "$tag: the transfer during the attack did not arrive intact"
	snap hub "$TB_DIR/$tag-hub-after.json"
	snap term "$TB_DIR/$tag-term-after.json"
	adv_log "$TB_DIR/adv-$tag.json" "$tag"
	"${ADV[@]}" check "$mode" --attack "$TB_DIR/adv-$tag.json" \
		--before-hub "$TB_DIR/$tag-hub-before.json" --after-hub "$TB_DIR/$tag-hub-after.json" \
		--before-term "$TB_DIR/$tag-term-before.json" --after-term "$TB_DIR/$tag-term-after.json" >&2 ||
		tb_fail "$tag: the session did not hold against the adversary"
}
# recovered TAG ADVJSON: within ADV_RECOVER_S s of the adversary's last frame,
# an echo crosses and both sessions are up, each naming the other's real
# epoch; then a transfer arrives intact.
recovered() {
	local tag=$1 silent took
	silent=$(jget "$2" silent_at)
	while :; do
		if tb_ns fh "$TB_PY" "$TB_E2E_DIR/ping.py" -c 1 -W 2 "$TB_IP_MH" >/dev/null 2>&1 &&
			took=$("${ADV[@]}" wait-up "$(tb_box_prefix hub)" "$(tb_box_prefix term)" \
				--since "$silent" --timeout 0 2>"$TB_DIR/wait-up-$tag.err"); then
			break
		fi
		awk -v s="$silent" -v b="$ADV_RECOVER_S" -v n="$(date +%s.%N)" 'BEGIN { exit !(n < s + b) }' &&
			continue
		tb_box_tel hub /satgw/satlink >"$TB_DIR/$tag-hub-stuck.json" || true
		tb_box_tel term /satgw/satlink >"$TB_DIR/$tag-term-stuck.json" || true
		"$TB_PY" - "$TB_DIR/$tag-hub-stuck.json" "$TB_DIR/$tag-term-stuck.json" <<'PY' >&2 || true
import json, sys
for label, f in (("hub", sys.argv[1]), ("term", sys.argv[2])):
    d = json.load(open(f))
    s = d["0"]
    print("  %s: state %s, peer epoch %s (own %s); rx_refused_bad_frame %s, stale_epoch %s, "
          "dup %s, hello_refused_live %s, status_behind %s, peer_lost %s, peer_restarts %s, "
          "link_downs %s, tx_outstanding %s, frames_rx %s" % (
              label, s["state"], s["peer_epoch"], d["epoch"], s["rx_refused_bad_frame"],
              s["rx_refused_stale_epoch"], s["rx_refused_dup"], s["hello_refused_live"],
              s["status_behind"], s["peer_lost"], s["peer_restarts"], s["link_downs"],
              s["tx_outstanding"], s["frames_rx"]))
PY
		tb_fail "$tag: the session was not back within $ADV_RECOVER_S s of the adversary's last frame (no echo crossed, or a session not up with the real epochs)"
	done
	tb_log "$tag: an echo crossed and both sessions are up with the real epochs $took s after the adversary's last frame (bound $ADV_RECOVER_S s)"
	head -c "$((ADV_AFTER_KB * 1024))" /dev/urandom >"$TB_DIR/$tag-after.bin"
	tb_xfer fh mh "$TB_IP_MH" "$TB_DIR/$tag-after.bin" 40
}

# ==== 1. AES-GCM ===============================================================
tb_log "phase 1: AES-GCM; the adversary forges, replays, cuts and floods at both ends"
tb_box_start emu "$EMU_POLICY" 1
tb_box_start hub "$G/hub.yaml" 0
tb_box_start term "$G/term.yaml" 0
tb_wait_path fh "$TB_IP_MH" 15
attack_during_transfer p1 keys
stop_boxes p1 hub term

# ==== 2. no keys, the peer live ================================================
tb_log "phase 2: no keys; forged HELLO / STATUS, replays, cuts, a flood, the real peer live"
tb_box_start hub "$HUB_POLICY" 0
tb_box_start term "$TERM_POLICY" 0
tb_wait_path fh "$TB_IP_MH" 15
attack_during_transfer p2 clear

# ==== 3. no keys, a takeover during an outage ==================================
tb_log "phase 3: no keys; the terminal falls silent, a forger takes its place, then goes silent"
snap hub "$TB_DIR/p3-hub-before.json"
loops_start p3 hub emu   # the terminal is frozen for part of it
tb_bg emu adv-p3 "${ADV[@]}" takeover --out "$TB_DIR/adv-p3.json" --ready "$TB_DIR/adv-p3.ready" \
	--adopted "$TB_DIR/adv-p3.adopted" --timeout 15 --hold "$ADV_HOLD_S"
ADVP=$TB_LAST_PID
wait_file "$TB_DIR/adv-p3.ready" 20 "$ADVP" adv-p3
learned_right "$TB_DIR/adv-p3.ready"
kill -STOP "${TB_BOX_PID[term]}"
tb_log "phase 3: terminal frozen (SIGSTOP); the forger says HELLO as epoch $(jget "$TB_DIR/adv-p3.ready" forged_epoch)"
for _ in $(seq 1 150); do
	[ -s "$TB_DIR/adv-p3.adopted" ] || ! tb__alive "$ADVP" && break
	sleep 0.1
done
kill -CONT "${TB_BOX_PID[term]}"
[ -s "$TB_DIR/adv-p3.adopted" ] || { cat "$TB_DIR/adv-p3.log" >&2;
	tb_fail "phase 3: the hub did not take the forger for a restarted terminal (silent for 15 s)"; }
tb_log "phase 3: the hub adopted the forged epoch; terminal thawed; the forger holds it ${ADV_HOLD_S} s"
tb_wait_pid "$ADVP" 30 || { cat "$TB_DIR/adv-p3.log" >&2; tb_fail "the adversary failed (adv-p3)"; }
recovered p3 "$TB_DIR/adv-p3.json"
loops_check p3
snap hub "$TB_DIR/p3-hub-after.json"
restarts=$(($(jget "$TB_DIR/p3-hub-after.json" satlink.0.peer_restarts) - \
	$(jget "$TB_DIR/p3-hub-before.json" satlink.0.peer_restarts)))
[ "$restarts" -ge 2 ] ||
	tb_fail "phase 3: the hub counted $restarts peer restart(s); want the forger's and the real terminal's"
tb_log "phase 3: hub peer_restarts +$restarts (the forger, then the real terminal)"

# ==== 4. no keys, forged DATA and acks =========================================
tb_log "phase 4: no keys; $ADV_DATA forged DATA frames at each end, forged acks, then silence"
loops_start p4 hub term emu
tb_bg emu adv-p4 "${ADV[@]}" hostile --out "$TB_DIR/adv-p4.json" --ready "$TB_DIR/adv-p4.ready" \
	--data "$ADV_DATA" --pps "$ADV_PPS"
ADVP=$TB_LAST_PID
wait_file "$TB_DIR/adv-p4.ready" 20 "$ADVP" adv-p4
learned_right "$TB_DIR/adv-p4.ready"
tb_wait_pid "$ADVP" 60 || { cat "$TB_DIR/adv-p4.log" >&2; tb_fail "the adversary failed (adv-p4)"; }
adv_log "$TB_DIR/adv-p4.json" p4
recovered p4 "$TB_DIR/adv-p4.json"
loops_check p4
stop_boxes p234 hub term
stop_boxes all emu
tb_pass
