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
# forward (hub -> terminal) with bit errors (ber 1e-6), 2 Mbit/s return, a 1 s
# outage on both directions every OUT_EVERY s from OUT_AT s of the emulator's
# clock. Every wait is on that clock (read over telemetry), never on a sleep,
# and every assertion is on what the test caused or on counters that must be
# exact:
#   (c) the outage: inside the next window the test sends its own UDP
#       datagrams both ways (chain.py probe) until two samples of the
#       emulator's counters inside the window show frames offered between
#       them in both directions (else the next window); at the end the
#       emulator must have counted an outage drop for each such window, and
#       none across any sampled interval that no window overlaps (chain.py
#       link: exact rules on the samples, see check_outages there);
#   (a) RTT: ping.py's echo, one at a time, none sent within 1 s of a window;
#       an echo the emulator counted lost (bit errors) is sent again; the
#       smallest RTT must be within 1% of 2 x 270 ms + the echo frames'
#       serialisation at both rates (none may come early; what the hosts add
#       only lengthens an echo, so GEO_PINGS echoes and more, GEO_PINGS_MAX
#       at most, until one comes within the tolerance);
#   (b) a 1 MB file fh -> mh over one Linux TCP connection, started GEO_LEAD_S
#       before a window, arrives with a matching sha256, and the outage hit
#       it: the emulator counted outage drops while it ran (only it crossed
#       the link then); if none, it is sent again at the next window; the
#       sender's kernel counters (nstat) are logged;
#   and the emulator's counters: offered = delivered + drops by cause,
#   bit-error losses as many as the ber predicts, ports == model; every box
#   exits 0 with mempool in_use 0, and every port agrees with the kernels'
#   veth counters.
# Usage: test_geo_chain.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

GEO_POLICY=${GEO_POLICY:-$TB_E2E_DIR/policies/chain-emulator-geo.yaml}
GEO_PINGS=${GEO_PINGS:-9}          # RTT samples (one echo at a time, ~0.65 s apiece)
GEO_PINGS_MAX=${GEO_PINGS_MAX:-30} # at most, until one is within the tolerance
GEO_FILE_KB=${GEO_FILE_KB:-1024}   # the transfer
GEO_LEAD_S=${GEO_LEAD_S:-2.0}      # start the transfer this long before an outage
GEO_TRIES=${GEO_TRIES:-3}          # windows the probes and the transfer may each use
PING_BYTES=98                      # ping.py's echo: 56 bytes of data + ICMP 8 + IPv4 20 + Ethernet 14

tb_init "${1:-}"
tb_topology chain

eval "$("$TB_PY" "$TB_E2E_DIR/chain.py" params "$GEO_POLICY")"
[ -n "${OUT_AT:-}" ] || tb_fail "$GEO_POLICY: the link has no outage"
EMU=$(tb_box_prefix emu)
CHAIN=("$TB_PY" "$TB_E2E_DIR/chain.py")

# The emulator first: its clock (and the outage schedule) starts with it.
tb_box_start emu "$GEO_POLICY" 1
tb_box_start hub "$TB_E2E_DIR/policies/chain-hub.yaml" 0
tb_box_start term "$TB_E2E_DIR/policies/chain-terminal.yaml" 0
tb_log "emulator clock $("${CHAIN[@]}" clock "$EMU") s; outages of ${OUT_FOR} s from ${OUT_AT} s, every ${OUT_EVERY} s (0: once)"
# The link's counters every 20 ms, with the emulator's clock, for the whole run.
tb_bg_local sampler "${CHAIN[@]}" sample "$EMU" "$TB_DIR/link-samples.jsonl"
SAMPLER=$TB_LAST_PID

tb_ns fh "${CHAIN[@]}" ping "$TB_IP_MH" -c 1 -W 3 --emu "$EMU" --policy "$GEO_POLICY" \
	>"$TB_DIR/ping1.txt" 2>&1 || { cat "$TB_DIR/ping1.txt" >&2; tb_fail "no echo across the chain"; }

# ---- (c) the outage, with the test's own traffic in it ----------------------
"${CHAIN[@]}" probe "$EMU" "$GEO_POLICY" "$TB_DIR/probe-samples.jsonl" \
	--hub-side "$TB_NS_FH" "$TB_IP_FH" --term-side "$TB_NS_MH" "$TB_IP_MH" \
	--windows "$GEO_TRIES" >"$TB_DIR/probe.log" 2>&1 ||
	{ cat "$TB_DIR/probe.log" >&2; tb_fail "no outage window where the emulator saw the probes go in both directions"; }
sed 's/^/  probe: /' "$TB_DIR/probe.log" >&2

# ---- (a) RTT ----------------------------------------------------------------
read -r RTT_EXP RTT_TOL < <(awk -v fd="$FWD_DELAY_MS" -v rd="$RET_DELAY_MS" -v fr="$FWD_RATE" \
	-v rr="$RET_RATE" -v fo="$FWD_OVERHEAD" -v ro="$RET_OVERHEAD" -v b="$PING_BYTES" 'BEGIN {
	ser = (b + fo) * 8 / fr * 1000 + (b + ro) * 8 / rr * 1000
	printf "%.4f %.4f\n", fd + rd + ser, (fd + rd) * 0.01 }')
tb_log "RTT: expected ${RTT_EXP} ms (2 x delay + ${PING_BYTES}-byte echo frames serialised at both rates), tolerance +-${RTT_TOL} ms (1%)"
# Echoes one at a time (chain.py ping: ping.py's code, each echo answered
# before the next is sent), away from the outage windows. What the hosts add
# to an echo (six processes scheduled on two shared cores) only lengthens it:
# GEO_PINGS echoes, and more (GEO_PINGS_MAX at most) until one comes within
# the tolerance; none may come early.
tb_ns fh "${CHAIN[@]}" ping "$TB_IP_MH" -c "$GEO_PINGS" -i 0.1 -W 3 --emu "$EMU" \
	--policy "$GEO_POLICY" --want-below "$(awk -v e="$RTT_EXP" -v t="$RTT_TOL" 'BEGIN { print e + t }')" \
	--max-count "$GEO_PINGS_MAX" >"$TB_DIR/rtt.txt" ||
	{ cat "$TB_DIR/rtt.txt" >&2; tb_fail "an echo across the chain went unanswered, and the link did not lose it"; }
grep lost_on_link "$TB_DIR/rtt.txt" >&2 || true
"${CHAIN[@]}" rtt "$TB_DIR/rtt.txt" "$RTT_EXP" "$RTT_TOL" >&2 ||
	tb_fail "RTT across the emulated GEO link out of bounds"

# ---- (b) TCP transfer through bit errors and an outage -----------------------
tb_mkfile "$TB_DIR/geo.bin" 1
[ "$GEO_FILE_KB" = 1024 ] || head -c "$((GEO_FILE_KB * 1024))" /dev/urandom >"$TB_DIR/geo.bin"
tb_xfer_through_outage fh mh "$TB_IP_MH" "$TB_DIR/geo.bin" 60 "$GEO_POLICY" "$GEO_LEAD_S" "$GEO_TRIES"
tb_log "sender's kernel (fh) TCP counters:"
tb_nstat fh TcpOutSegs TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPLossProbes \
	TcpExtTCPSackRecovery TcpExtTCPLostRetransmit | sed 's/^/    /' >&2
tb_log "receiver's kernel (mh):"
tb_nstat mh TcpInSegs TcpExtTCPOFOQueue TcpExtTCPSACKReorder | sed 's/^/    /' >&2

# ---- counters -------------------------------------------------------------------
# The last frames leave the link 270 ms after they entered it: stop the emulator
# once it holds none (its exit report must show everything delivered as sent).
tb_box_wait_link_empty emu 20
kill -TERM "$SAMPLER" 2>/dev/null || true
tb_wait_pid "$SAMPLER" 5 || true
for box in emu hub term; do
	tb_box_stop "$box"
	[ "${TB_BOX_RC[$box]}" -eq 0 ] || tb_fail "satgw $box exit code ${TB_BOX_RC[$box]} (3 = mbufs leaked)"
	[ -s "$(tb_box_json "$box")" ] || tb_fail "satgw $box wrote no stats JSON"
done
tb_log "link counters (emulator):"
"${CHAIN[@]}" link "$(tb_box_json emu)" --policy "$GEO_POLICY" \
	--samples "$TB_DIR/link-samples.jsonl" --samples "$TB_DIR/probe-samples.jsonl" \
	--need-outage-traffic forward,return >&2 ||
	tb_fail "the emulator's link counters disagree with what happened"
for box in hub term; do
	tb_box_stats "$box" --conserve --dev \
		--expect 'drops.* == 0' \
		--expect 'classes.malformed.packets == 0' \
		--expect 'classes.tcp.packets > 700' \
		--expect 'classes.udp.packets > 0' \
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
