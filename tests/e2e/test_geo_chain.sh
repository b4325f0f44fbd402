#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e: the three-box testbed over an emulated GEO link.
#
#   fh --- [satgw hub] --- [satgw emulator] --- [satgw terminal] --- mh
#
# Each satgw runs in its own namespace with its own file prefix, one lcore each
# (hub and terminal on lcore 0, the emulator on lcore 1), --no-huge, on
# net_af_packet over veth pairs; hub and terminal route (testbed.sh chain).
# The link (policies/chain-emulator-geo.yaml): 270 ms each way, 20 Mbit/s
# forward (hub -> terminal) with bit errors (ber 1e-6), 2 Mbit/s return, one
# 1 s outage on both directions at OUT_AT s of the emulator's clock.
#   (b) first, a 1 MB file fh -> mh over one Linux TCP connection, started so
#       that the outage hits it (the test waits on the emulator's own clock,
#       read over telemetry), arrives with a matching sha256; the sender's
#       kernel counters (nstat) are logged;
#   (a) then RTT: ping.py's echo, one at a time; the median must be within 1% of
#       2 x 270 ms + the echo frames' serialisation at both rates;
#   (c) the emulator's counters: offered = delivered + drops by cause, bit-error
#       losses as many as the ber predicts, outage drops > 0 since the sampler
#       saw traffic offered during the outage (and none before it), ports ==
#       model; every box exits 0 with mempool in_use 0, and every port agrees
#       with the kernels' veth counters.
# Usage: test_geo_chain.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

GEO_POLICY=${GEO_POLICY:-$TB_E2E_DIR/policies/chain-emulator-geo.yaml}
GEO_PINGS=${GEO_PINGS:-9}          # RTT samples (one echo at a time, ~0.65 s apiece)
GEO_FILE_KB=${GEO_FILE_KB:-1024}   # the transfer
GEO_LEAD_S=${GEO_LEAD_S:-2.0}      # start the transfer this long before the outage
PING_BYTES=98                      # ping.py's echo: 56 bytes of data + ICMP 8 + IPv4 20 + Ethernet 14

tb_init "${1:-}"
tb_topology chain

eval "$("$TB_PY" "$TB_E2E_DIR/chain.py" params "$GEO_POLICY")"
[ -n "${OUT_AT:-}" ] || tb_fail "$GEO_POLICY: the forward link has no outage"
EMU=$(tb_box_prefix emu)

# The emulator first: its clock (and the outage schedule) starts with it.
tb_box_start emu "$GEO_POLICY" 1
tb_box_start hub "$TB_E2E_DIR/policies/chain-hub.yaml" 0
tb_box_start term "$TB_E2E_DIR/policies/chain-terminal.yaml" 0
tb_log "emulator clock $("$TB_PY" "$TB_E2E_DIR/chain.py" clock "$EMU") s; outage at ${OUT_AT} s for ${OUT_FOR} s"

# The transfer comes first: the outage is at a fixed time of the emulator's
# clock, and only the startup and one echo come before it (the RTT echoes,
# whose wall time grows on a loaded machine, come after).
tb_check "ping fh -> mh across the chain" tb_ping fh "$TB_IP_MH" 1

# ---- (b) TCP transfer through bit errors and the outage ----------------------
tb_mkfile "$TB_DIR/geo.bin" 1
[ "$GEO_FILE_KB" = 1024 ] || head -c "$((GEO_FILE_KB * 1024))" /dev/urandom >"$TB_DIR/geo.bin"
start_at=$(awk -v a="$OUT_AT" -v l="$GEO_LEAD_S" 'BEGIN { printf "%.3f", a - l }')
now=$("$TB_PY" "$TB_E2E_DIR/chain.py" clock "$EMU")
awk -v n="$now" -v s="$start_at" 'BEGIN { exit !(n <= s) }' ||
	tb_fail "the emulator's clock is at $now s, past $start_at s: the transfer would start too late for the outage at $OUT_AT s (machine too slow? move the outage later in $GEO_POLICY)"
tb_bg_local sampler "$TB_PY" "$TB_E2E_DIR/chain.py" sample "$EMU" "$TB_DIR/link-samples.jsonl"
SAMPLER=$TB_LAST_PID
now=$("$TB_PY" "$TB_E2E_DIR/chain.py" wait-clock "$EMU" "$start_at" --timeout 60)
tb_log "emulator clock $now s: transfer starts, ${GEO_LEAD_S} s before the outage"
tb_xfer fh mh "$TB_IP_MH" "$TB_DIR/geo.bin" 60
end=$("$TB_PY" "$TB_E2E_DIR/chain.py" clock "$EMU")
tb_log "transfer done at emulator clock $end s: $TB_XFER_BYTES bytes in $TB_XFER_SECONDS s ($(awk -v b="$TB_XFER_BYTES" -v s="$TB_XFER_SECONDS" 'BEGIN { printf "%.2f", b * 8 / s / 1e6 }') Mbit/s goodput)"
awk -v e="$end" -v a="$OUT_AT" -v f="$OUT_FOR" 'BEGIN { exit !(e >= a + f) }' ||
	tb_fail "the transfer ended at $end s, before the outage's end ($OUT_AT + $OUT_FOR s)"
kill -TERM "$SAMPLER" 2>/dev/null || true
tb_wait_pid "$SAMPLER" 5 || true
tb_log "sender's kernel (fh) TCP counters:"
tb_nstat fh TcpOutSegs TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPLossProbes \
	TcpExtTCPSackRecovery TcpExtTCPLostRetransmit | sed 's/^/    /' >&2
tb_log "receiver's kernel (mh):"
tb_nstat mh TcpInSegs TcpExtTCPOFOQueue TcpExtTCPSACKReorder | sed 's/^/    /' >&2

# ---- (a) RTT ----------------------------------------------------------------
# Echoes one at a time (chain.py ping: ping.py's code, each echo answered
# before the next is sent), the link idle again (the transfer's last frames
# left it 270 ms after its end).
sleep 1
tb_ns fh "$TB_PY" "$TB_E2E_DIR/chain.py" ping "$TB_IP_MH" -c "$GEO_PINGS" -i 0.1 -W 3 \
	>"$TB_DIR/rtt.txt" || { cat "$TB_DIR/rtt.txt" >&2; tb_fail "an echo across the chain went unanswered"; }
read -r RTT_EXP RTT_TOL < <(awk -v fd="$FWD_DELAY_MS" -v rd="$RET_DELAY_MS" -v fr="$FWD_RATE" \
	-v rr="$RET_RATE" -v fo="$FWD_OVERHEAD" -v ro="$RET_OVERHEAD" -v b="$PING_BYTES" 'BEGIN {
	ser = (b + fo) * 8 / fr * 1000 + (b + ro) * 8 / rr * 1000
	printf "%.4f %.4f\n", fd + rd + ser, (fd + rd) * 0.01 }')
tb_log "RTT: expected ${RTT_EXP} ms (2 x delay + ${PING_BYTES}-byte echo frames serialised at both rates), tolerance +-${RTT_TOL} ms (1%)"
"$TB_PY" "$TB_E2E_DIR/chain.py" rtt "$TB_DIR/rtt.txt" "$RTT_EXP" "$RTT_TOL" >&2 ||
	tb_fail "RTT across the emulated GEO link out of bounds"
# The echoes were the last traffic; let the link drain (270 ms) before stopping.
sleep 1

# ---- (c) counters -------------------------------------------------------------
held=$(tb_box_tel emu /satgw/link | "$TB_PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["forward"]["held_now"] + d["return"]["held_now"])')
[ "$held" = 0 ] || tb_fail "the link still holds $held frame(s) 1 s after the last traffic"
for box in emu hub term; do
	tb_box_stop "$box"
	[ "${TB_BOX_RC[$box]}" -eq 0 ] || tb_fail "satgw $box exit code ${TB_BOX_RC[$box]} (3 = mbufs leaked)"
	[ -s "$(tb_box_json "$box")" ] || tb_fail "satgw $box wrote no stats JSON"
done
tb_log "link counters (emulator):"
"$TB_PY" "$TB_E2E_DIR/chain.py" link "$(tb_box_json emu)" --samples "$TB_DIR/link-samples.jsonl" \
	--ber-forward "$FWD_BER" --outage "$OUT_AT" "$OUT_FOR" >&2 ||
	tb_fail "the emulator's link counters disagree with what happened"
for box in hub term; do
	tb_box_stats "$box" --conserve --dev \
		--expect 'drops.* == 0' \
		--expect 'classes.malformed.packets == 0' \
		--expect 'classes.tcp.packets > 700' \
		--expect 'rules.to-core.packets > 300' \
		--expect 'mempool.in_use == 0'
done
tb_box_stats hub --expect 'rules.to-site-a.packets > 700'
tb_box_stats term --expect 'rules.to-lan.packets > 700'
tb_box_stats emu --dev --expect 'mempool.in_use == 0'
tb_log "wire (every box's ports against the kernels' veths):"
tb_chain_check_wire
[ "${TB_RING_DROPS:-0}" = 0 ] || tb_log "note: $TB_RING_DROPS frame(s) overflowed af_packet rings (TCP recovered them)"
tb_pass
