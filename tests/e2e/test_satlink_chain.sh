#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e: the reliable satellite link (satlink, docs/satlink.md) between a hub and
# a terminal across the emulated GEO link.
#
#   fh --- [satgw hub] ==satlink== [satgw emulator] ==satlink== [satgw terminal] --- mh
#
# testbed.sh's chain (each satgw in its own namespace, hub and terminal on
# lcore 0, the emulator on lcore 1, --no-huge, net_af_packet over veths).
# Hub and terminal carry every IP packet between them in satlink frames
# (policies/chain-hub-satlink.yaml, chain-terminal-satlink.yaml).
#
#   1. Reliable service, frames in clear, link policies/chain-emulator-satlink.yaml
#      (270 ms each way, 20 Mbit/s forward with ber 1e-5: 11% of the full-size
#      frames are lost; 2 Mbit/s return; a 1 s outage on both every OUT_EVERY s
#      from OUT_AT s of the emulator's clock). A SL_FILE_KB (1536) KB file
#      fh -> mh over one Linux TCP connection, started SL_LEAD_S s before an
#      outage (emulator clock) and sent again at the next one if the outage
#      lost none of its frames: the sha256 matches; the emulator lost frames to
#      bit errors and to the outage, and the hub retransmitted (tx_retx > 0,
#      losses found); then the test's own datagrams both ways inside the next
#      window (chain.py probe), and the emulator's outage counters against its
#      samples (chain.py link, as in e2e_geo_chain); the terminal delivered
#      at least one packet per TCP segment of the file; no link down (the
#      outage is shorter than link_down); the satellite segment carried no
#      IPv4 frame, only satlink frames, in clear (the file's bytes are seen
#      there, the control for phase 2); every box exits 0 with no mbuf in use;
#      every port agrees with the kernels' veths.
#   2. AES-GCM: a key file per end (mode 0600, a fresh random AES-256 key for
#      terminal 1001, generated in the work dir), policies naming it; a key
#      file that others can read is refused. Link chain-emulator-ber.yaml (no
#      outage). A SL_GCM_FILE_KB (512) KB transfer arrives intact; both ends
#      sealed every DATA frame they sent and opened what they received, no
#      crypto drop; on the satellite segment every satlink frame is
#      ENCRYPTED and none of the file's bytes appear.
#   3. The same hub, a terminal with the WRONG key for 1001: echoes and UDP
#      from fh get no answer; the terminal opened nothing, dropped the hub's
#      frames in the crypto layer, delivered nothing, and sent nothing to
#      mh (mh0 received no frame); the session never came up; both exit 0.
# Usage: test_satlink_chain.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

P=$TB_E2E_DIR/policies
EMU_POLICY=${SL_EMU_POLICY:-$P/chain-emulator-satlink.yaml}
EMU2_POLICY=${SL_EMU2_POLICY:-$P/chain-emulator-ber.yaml}
HUB_POLICY=${SL_HUB_POLICY:-$P/chain-hub-satlink.yaml}
TERM_POLICY=${SL_TERM_POLICY:-$P/chain-terminal-satlink.yaml}
SL_FILE_KB=${SL_FILE_KB:-1536}         # phase 1 transfer
SL_LEAD_S=${SL_LEAD_S:-2.5}            # start it this long before an outage
SL_TRIES=${SL_TRIES:-3}                # windows the transfer and the probes may each use
SL_GCM_FILE_KB=${SL_GCM_FILE_KB:-512}  # phase 2 transfer
SL_MSS=1448                            # TCP payload per segment (MTU 1500, timestamps)

tb_init "${1:-}"
tb_topology chain
SLPY=("$TB_PY" "$TB_E2E_DIR/satlink.py")

eval "$("$TB_PY" "$TB_E2E_DIR/chain.py" params "$EMU_POLICY")"
[ -n "${OUT_AT:-}" ] || tb_fail "$EMU_POLICY: the forward link has no outage"
awk -v b="$FWD_BER" 'BEGIN { exit !(b > 0) }' || tb_fail "$EMU_POLICY: no bit errors on the forward link"
EMU=$(tb_box_prefix emu)
for f in "$HUB_POLICY" "$TERM_POLICY" "$EMU_POLICY" "$EMU2_POLICY"; do
	"$TB_SATGW" --check-config "$f" >"$TB_DIR/check.out" 2>&1 ||
		{ cat "$TB_DIR/check.out" >&2; tb_fail "$(basename "$f") does not validate"; }
done

# start_sniffer NAME IFACE-ARGS...: satlink.py sniff in netns emu, started once its
# socket is bound (so it sees every frame the test sends after this).
start_sniffer() {
	local name=$1
	shift
	rm -f "$TB_DIR/$name.ready"
	tb_bg emu "$name" "${SLPY[@]}" sniff "$@" --ready "$TB_DIR/$name.ready"
	SNIFF=$TB_LAST_PID
	for _ in $(seq 1 300); do
		[ -e "$TB_DIR/$name.ready" ] && return 0
		tb__alive "$SNIFF" || break
		sleep 0.1
	done
	cat "$TB_DIR/$name.log" >&2
	tb_fail "the sniffer $name did not start"
}
stop_sniffer() {
	kill -TERM "$1" 2>/dev/null || true
	tb_wait_pid "$1" 20 || tb_fail "the sniffer failed (log: $TB_DIR/$2.log)"
	[ -s "$TB_DIR/$2.json" ] || tb_fail "the sniffer wrote nothing ($TB_DIR/$2.log)"
}
# sniff_check JSON PYTHON-CONDITIONS...: conditions on the sniffer's summary s
# (s["satlink"], s["by_ethertype"], s["needles"]).
sniff_check() {
	local f=$1
	shift
	"$TB_PY" - "$f" "$@" <<'PY' || tb_fail "the satellite segment carried what it should not ($f)"
import json, sys
s = json.load(open(sys.argv[1]))
sl, et, nd = s["satlink"], s["by_ethertype"], s.get("needles", {})
print("  satellite segment (emu hub0, from the hub): %d frames: %s; satlink %d (%s), encrypted %d, "
      "clear %d, retx-flagged %d; file pieces seen in clear: %s of %s" % (
          s["frames"], ", ".join("%s %d" % kv for kv in sorted(et.items())), sl["frames"],
          ", ".join("%s %d" % kv for kv in sorted(sl["by_type"].items())), sl["encrypted"],
          sl["clear"], sl["retx"], nd.get("found", "-"), nd.get("count", "-")), file=sys.stderr)
bad = 0
for cond in sys.argv[2:]:
    ok = bool(eval(cond))
    print("  %s %s" % ("ok  " if ok else "FAIL", cond), file=sys.stderr)
    bad += not ok
sys.exit(1 if bad else 0)
PY
}
sl_summary() {
	"${SLPY[@]}" summary "$1" --label "$2" >&2 ||
		tb_fail "no satlink counters for $2 in $1 (is satlink configured and running?)"
}
sl_check() {
	local json=$1 label=$2
	shift 2
	local -a ex=()
	local e
	for e in "$@"; do ex+=(--expect "$e"); done
	"${SLPY[@]}" check "$json" --label "$label" "${ex[@]}" >&2 ||
		tb_fail "satlink counter checks failed for $label ($json; every counter: satlink.py dump $json)"
}
stats_check() {
	local json=$1 label=$2
	shift 2
	"$TB_PY" "$TB_E2E_DIR/stats.py" check "$json" "$@" >&2 ||
		tb_fail "counter checks failed for $label ($json)"
}

# ==== 1. reliable service, in clear, through bit errors and an outage ========
tb_log "phase 1: satlink in clear; link $(basename "$EMU_POLICY"): ber $FWD_BER forward, outages of ${OUT_FOR} s from ${OUT_AT} s every ${OUT_EVERY} s"
tb_box_start emu "$EMU_POLICY" 1
tb_box_start hub "$HUB_POLICY" 0
tb_box_start term "$TERM_POLICY" 0
tb_wait_path fh "$TB_IP_MH" 15
tb_log "an echo crossed the satlink session (emulator clock $("$TB_PY" "$TB_E2E_DIR/chain.py" clock "$EMU") s)"

head -c "$((SL_FILE_KB * 1024))" /dev/urandom >"$TB_DIR/sl.bin"
# The link's counters every 20 ms, with the emulator's clock, until the emulator stops.
tb_bg_local sampler "$TB_PY" "$TB_E2E_DIR/chain.py" sample "$EMU" "$TB_DIR/link-samples.jsonl"
SAMPLER=$TB_LAST_PID
start_sniffer sniff1 hub0 "$TB_DIR/sniff1.json" --needles "$TB_DIR/sl.bin" --needle-every 16384
tb_xfer_through_outage fh mh "$TB_IP_MH" "$TB_DIR/sl.bin" 90 "$EMU_POLICY" "$SL_LEAD_S" "$SL_TRIES"
stop_sniffer "$SNIFF" sniff1
# The outage with the test's own traffic in it: datagrams both ways inside the
# next window, until the emulator's samples show them offered there.
"$TB_PY" "$TB_E2E_DIR/chain.py" probe "$EMU" "$EMU_POLICY" "$TB_DIR/probe-samples.jsonl" \
	--hub-side "$TB_NS_FH" "$TB_IP_FH" --term-side "$TB_NS_MH" "$TB_IP_MH" \
	--windows "$SL_TRIES" >"$TB_DIR/probe.log" 2>&1 ||
	{ cat "$TB_DIR/probe.log" >&2; tb_fail "no outage window where the emulator saw the probes go in both directions"; }
sed 's/^/  probe: /' "$TB_DIR/probe.log" >&2
tb_log "sender's kernel (fh) TCP counters (satlink hides the channel's losses from TCP):"
tb_nstat fh TcpOutSegs TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPLossProbes \
	TcpExtTCPSackRecovery TcpExtTCPLostRetransmit | sed 's/^/    /' >&2

# Telemetry while the boxes run: /satgw/satlink answers with the session, up, and the
# stage counters (the exit JSON's numbers are checked below).
tb_box_tel hub /satgw/satlink >"$TB_DIR/tel-satlink-hub.json"
"$TB_PY" - "$TB_DIR/tel-satlink-hub.json" <<'PY' || tb_fail "/satgw/satlink at the hub: $(cat "$TB_DIR/tel-satlink-hub.json")"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["0"]
checks = [
    (d["total"] == 1, "one session"),
    (s["name"] == "site-a" and s["terminal_id"] == 1001, "session 0 is site-a (1001)"),
    (s["state"] == "up", "state up (is %s)" % s["state"]),
    (s["tx_frames"] > 0 and s["tx_retx"] > 0, "frames and retransmissions counted"),
    (d["counters"]["rx_no_session"] == 0, "no frame without a session"),
    ("crypto_drop_bad_tag" in s and d["protected"] == 0, "crypto counters present, not protected"),
]
bad = [w for ok, w in checks if not ok]
for ok, w in checks:
    print("  %s   /satgw/satlink: %s" % ("ok" if ok else "FAIL", w), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
tb_boxes_stop_keep p1 hub term
# Nothing enters the link now: stop the emulator once the last frames left it.
tb_box_wait_link_empty emu 20
kill -TERM "$SAMPLER" 2>/dev/null || true
tb_wait_pid "$SAMPLER" 5 || true
tb_boxes_stop_keep p1 emu

tb_log "phase 1: link counters (emulator):"
"$TB_PY" "$TB_E2E_DIR/chain.py" link "$TB_DIR/emu-p1.json" --policy "$EMU_POLICY" \
	--samples "$TB_DIR/link-samples.jsonl" --samples "$TB_DIR/probe-samples.jsonl" \
	--need-outage-traffic forward,return >&2 ||
	tb_fail "the emulator's link counters disagree with what happened"
read -r FWD_LOST FWD_OUT < <("$TB_PY" -c 'import json,sys; f=json.load(open(sys.argv[1]))["link"]["forward"]; print(f["dropped_loss"], f["dropped_outage"])' "$TB_DIR/emu-p1.json")
tb_log "phase 1: satlink counters:"
sl_summary "$TB_DIR/hub-p1.json" hub
sl_summary "$TB_DIR/term-p1.json" term
segs=$((SL_FILE_KB * 1024 / SL_MSS))
frames=$((SL_FILE_KB * 1024 / 1400))
tb_log "the emulator lost $FWD_LOST forward frame(s) to bit errors and $FWD_OUT to the outage; the hub must have resent"
[ "$FWD_LOST" -gt 0 ] || tb_fail "the emulator lost no forward frame to bit errors (ber $FWD_BER)"
sl_check "$TB_DIR/hub-p1.json" hub \
	"tx_frames >= $frames" \
	"tx_retx > 0" \
	"loss_status+loss_timeout > 0" \
	"pkts_delivered > 0" \
	"link_ups >= 1" \
	"link_downs == 0" \
	"reasm_errors == 0"
sl_check "$TB_DIR/term-p1.json" term \
	"pkts_delivered >= $segs" \
	"bytes_delivered >= $((SL_FILE_KB * 1024))" \
	"rx_frames > $frames" \
	"tx_frames > 0" \
	"link_ups >= 1" \
	"link_downs == 0" \
	"reasm_errors == 0"
for box in hub term; do
	stats_check "$TB_DIR/$box-p1.json" "$box (phase 1)" --dev \
		--expect 'classes.malformed.packets == 0' \
		--expect 'mempool.in_use == 0'
done
stats_check "$TB_DIR/hub-p1.json" "hub (phase 1)" --expect "rules.to-site-a.packets >= $segs"
stats_check "$TB_DIR/term-p1.json" "term (phase 1)" --expect "rules.to-lan.packets >= $segs" \
	--expect "ports.lan.tx_packets >= $segs"
stats_check "$TB_DIR/emu-p1.json" "emu (phase 1)" --dev --expect 'mempool.in_use == 0'
sniff_check "$TB_DIR/sniff1.json" \
	'sl["frames"] > 0' 'et.get("0x0800", 0) == 0' 'sl["encrypted"] == 0' \
	'sl["retx"] > 0' 'nd["found"] >= nd["count"] // 2'
tb_log "wire (every box's ports against the kernels' veths):"
tb_chain_check_wire
[ "${TB_RING_DROPS:-0}" = 0 ] || tb_log "note: $TB_RING_DROPS frame(s) overflowed af_packet rings"

# ==== 2. AES-GCM ==============================================================
G=$TB_DIR/gcm
mkdir -p "$G"
"${SLPY[@]}" keyfile "$G/hub.keys" 1001
cp -p "$G/hub.keys" "$G/term.keys"
"${SLPY[@]}" keyfile "$G/wrong.keys" 1001
cmp -s "$G/hub.keys" "$G/wrong.keys" && tb_fail "the wrong key equals the right one"
[ "$(stat -c %a "$G/hub.keys")" = 600 ] || tb_fail "key file mode $(stat -c %a "$G/hub.keys"), want 600"
# Policies next to their key files: `keys` is relative to the policy's directory.
with_keys() { sed "s|^satlink:\$|satlink:\n  keys: $2|" "$1"; }
with_keys "$HUB_POLICY" hub.keys >"$G/hub.yaml"
with_keys "$TERM_POLICY" term.keys >"$G/term.yaml"
with_keys "$TERM_POLICY" wrong.keys >"$G/term-wrong.yaml"
grep -q '^  keys: hub.keys$' "$G/hub.yaml" || tb_fail "could not add keys to the hub policy"
for f in hub term term-wrong; do
	"$TB_SATGW" --check-config "$G/$f.yaml" >"$TB_DIR/check.out" 2>&1 ||
		{ cat "$TB_DIR/check.out" >&2; tb_fail "$f.yaml (with a 0600 key file) does not validate"; }
done
install -m 0644 "$G/hub.keys" "$G/open.keys"
with_keys "$HUB_POLICY" open.keys >"$G/hub-open.yaml"
if "$TB_SATGW" --check-config "$G/hub-open.yaml" >"$TB_DIR/check.out" 2>&1; then
	tb_fail "--check-config accepted a key file of mode 0644 (readable by others)"
fi
grep -qi 'permission' "$TB_DIR/check.out" ||
	{ cat "$TB_DIR/check.out" >&2; tb_fail "the refusal of a 0644 key file does not say why"; }
tb_log "phase 2: AES-GCM, key files $G/{hub,term}.keys (0600); a 0644 key file is refused: $(head -n 1 "$TB_DIR/check.out")"

tb_box_start emu "$EMU2_POLICY" 1
tb_box_start hub "$G/hub.yaml" 0
tb_box_start term "$G/term.yaml" 0
tb_wait_path fh "$TB_IP_MH" 15
head -c "$((SL_GCM_FILE_KB * 1024))" /dev/urandom >"$TB_DIR/gcm.bin"
start_sniffer sniff2 hub0 "$TB_DIR/sniff2.json" --needles "$TB_DIR/gcm.bin" --needle-every 4096
tb_xfer fh mh "$TB_IP_MH" "$TB_DIR/gcm.bin" 40
stop_sniffer "$SNIFF" sniff2
tb_boxes_stop_keep p2 hub term

tb_log "phase 2: satlink counters:"
sl_summary "$TB_DIR/hub-p2.json" hub
sl_summary "$TB_DIR/term-p2.json" term
segs=$((SL_GCM_FILE_KB * 1024 / SL_MSS))
sl_check "$TB_DIR/hub-p2.json" hub \
	"crypto_sealed|sealed > 0" "crypto_opened|opened > 0" "crypto_drop_bad_tag|bad_tag == 0" \
	"tx_frames >= $((SL_GCM_FILE_KB * 1024 / 1400))" \
	"pkts_delivered > 0" "link_ups >= 1"
sl_check "$TB_DIR/term-p2.json" term \
	"crypto_sealed|sealed > 0" "crypto_opened|opened > 0" "crypto_drop_bad_tag|bad_tag == 0" \
	"pkts_delivered >= $segs" "link_ups >= 1"
# Every DATA frame sent was sealed (a retransmission is a new seal); every
# DATA frame taken was opened first.
"$TB_PY" - "${SLPY[@]:1}" "$TB_DIR/hub-p2.json" "$TB_DIR/term-p2.json" <<'PY' >&2 ||
import subprocess, sys
tool, hub, term = sys.argv[1:4]
def get(f, *names):
    out = subprocess.run(["/usr/bin/python3", tool, "get", f] + list(names), check=True,
                         capture_output=True, text=True).stdout.split()
    return [float(x) for x in out]
bad = 0
for label, f in (("hub", hub), ("term", term)):
    sealed, opened, txf, retx, rxf = get(f, "crypto_sealed|sealed", "crypto_opened|opened", "tx_frames", "tx_retx", "rx_frames")
    for what, ok in (("%s: sealed %d >= tx_frames %d + tx_retx %d" % (label, sealed, txf, retx),
                      sealed >= txf + retx),
                     ("%s: opened %d >= rx_frames %d" % (label, opened, rxf), opened >= rxf)):
        print("  %s %s" % ("ok  " if ok else "FAIL", what))
        bad += not ok
sys.exit(1 if bad else 0)
PY
	tb_fail "the crypto counters do not cover the DATA frames"
for box in hub term; do
	stats_check "$TB_DIR/$box-p2.json" "$box (phase 2)" --expect 'mempool.in_use == 0'
done
sniff_check "$TB_DIR/sniff2.json" \
	'sl["frames"] > 0' 'et.get("0x0800", 0) == 0' 'sl["clear"] == 0' 'sl["encrypted"] == sl["frames"]' \
	'nd["count"] > 100' 'nd["found"] == 0'

# ==== 3. a terminal with the wrong key ========================================
tb_log "phase 3: the hub with the right key, terminal 1001 with a wrong one"
mh_rx0=$(tb_ns mh cat /sys/class/net/mh0/statistics/rx_packets)
tb_box_start hub "$G/hub.yaml" 0
tb_box_start term "$G/term-wrong.yaml" 0
if tb_ns fh "$TB_PY" "$TB_E2E_DIR/ping.py" -c 3 -i 0.5 -W 2 "$TB_IP_MH" >"$TB_DIR/ping3.txt" 2>&1; then
	tb_fail "an echo crossed to a terminal with the wrong key: $(cat "$TB_DIR/ping3.txt")"
fi
tb_ns fh "$TB_PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(200):
    s.sendto(b"satlink-wrong-key-%04d" % i + bytes(1000), (sys.argv[1], 9))
    time.sleep(0.005)' "$TB_IP_MH"
# Stop once the hub has read the 200 datagrams and both ends have refused the
# other's frames (HELLOs sealed with the other key), not after a guessed sleep.
tb_box_wait_tel hub 30 /satgw/ports 'd["terr"]["rx_packets"] >= 200'
tb_box_wait_tel hub 30 /satgw/satlink 'd["0"]["crypto_drop_bad_tag"] > 0'
tb_box_wait_tel term 30 /satgw/satlink 'd["0"]["crypto_drop_bad_tag"] > 0'
tb_boxes_stop_keep p3 hub term
mh_rx1=$(tb_ns mh cat /sys/class/net/mh0/statistics/rx_packets)
tb_log "phase 3: satlink counters:"
sl_summary "$TB_DIR/hub-p3.json" hub
sl_summary "$TB_DIR/term-p3.json" term
[ "$mh_rx1" -eq "$mh_rx0" ] || tb_fail "mh received $((mh_rx1 - mh_rx0)) frame(s) through a terminal with the wrong key"
tb_log "  ok   mh0 received nothing ($mh_rx0 -> $mh_rx1 frames)"
sl_check "$TB_DIR/term-p3.json" term \
	"crypto_drop_bad_tag|bad_tag > 0" "crypto_opened|opened == 0" "rx_frames == 0" "pkts_delivered == 0" "link_ups == 0"
sl_check "$TB_DIR/hub-p3.json" hub \
	"crypto_drop_bad_tag|bad_tag > 0" "crypto_opened|opened == 0" "pkts_delivered == 0" "link_ups == 0"
stats_check "$TB_DIR/term-p3.json" "term (phase 3)" --expect 'ports.lan.tx_packets == 0' \
	--expect 'mempool.in_use == 0'
stats_check "$TB_DIR/hub-p3.json" "hub (phase 3)" --expect 'ports.terr.rx_packets >= 200' \
	--expect 'mempool.in_use == 0'
tb_boxes_stop_keep p23 emu
stats_check "$TB_DIR/emu-p23.json" "emu (phases 2, 3)" --expect 'mempool.in_use == 0'
tb_pass
