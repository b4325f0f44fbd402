#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e: LIFT (issue 8, docs/lift.md) across the satellite chain, real Linux TCP
# inside ESP done by two host agents.
#
#   fh --- [satgw hub, lift:] ==satlink AES-GCM== [emulator, GE downlink] ==== [terminal] --- mh
#   mh_lift --lift off                                                            mh_lift --lift on
#
# The fixed host's ESP: a second mh_lift with --lift off. This machine's kernel
# has no ESP (CONFIG_INET_ESP off: `ip xfrm` cannot make rfc4106 SAs), and the
# brief allows scapy's esp_peer.py or a second agent; the agent is chosen
# because the test is about LIFT, not ESP interop (e2e_esp_interop covers that
# against scapy's ESP), and a C agent keeps up under load where a per-packet
# python ESP would add its own delays to the RTT LIFT's timer is about. Its
# ESP is the same code as the MH's: nothing here proves interop.
#
#   1. satgw boxes from testbed.sh's chain, policies lift_hub.yaml (satlink
#      with a fresh AES-256 key, lift on), lift_terminal.yaml,
#      lift_emulator_ge.yaml (Gilbert-Elliott on the forward link: good 4 s,
#      bad 1 s losing everything). The agents on fh and mh with one key file
#      (static SAs, replay window 64); host routes send fh <-> mh traffic into
#      the agents' TUNs (MTU 1300), their ESP out by fwmark.
#   2. A LIFT_FILE_KB (2048) KB download fh -> mh over one Linux TCP
#      connection inside that ESP: sha256 equal.
#   3. Then, waiting on conditions: the MH agent's Setup was acknowledged
#      (mh.ctrl_why.setup_ok >= 1) and, after the connection closed, its
#      Teardown (teardown_ok >= 1); the agent sent pairs and TCP-ACK headers.
#      The hub's exit JSON: the lift stage received LIFT packets (rx), built
#      the entry (setups >= 1), forwarded to the fixed host, noted the
#      downlink ESP; nothing untrusted. A capture at fh0 (everything it
#      received from mh) holds ESP (protocol 50) only, no LIFT (253).
#   4. LIFT_INJECT (10) LIFT packets injected at fh0 toward the hub's
#      terrestrial port (half Setups, half TCP-ACK headers, source the MH):
#      drops.lift_not_from_satellite moves by exactly that many (telemetry
#      waited on, then the exit JSON); the hub's control counters equal what
#      the agent sent (the injected Setups built nothing).
#   5. Accounting: what the hub forwarded to fh is every TCP ACK plus the
#      FrACKs of its freezes; fh's agent decrypted exactly that plus the plain
#      ESP; the capture agrees (when the capture socket dropped nothing);
#      stats.py's accounting identity at hub and terminal.
# LIFT_FAMILY=6 (ctest e2e_lift_chain6): the same over IPv6. fh and mh get
# IPv6 addresses on their veths (fd00:10::1, fd00:20:1::1, as in
# test_split_chain.sh), the agents' SAs, TUN routes, the download, the
# injected LIFT packets and the checks are IPv6; the satgw boxes carry both
# families (the policies' prefixes and rules name both).
# Usage: test_lift_chain.sh /path/to/satgw [/path/to/mh_lift]
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

P=$TB_E2E_DIR/policies
LIFT_FILE_KB=${LIFT_FILE_KB:-2048}
LIFT_INJECT=${LIFT_INJECT:-10}
LIFT_PROTO=253
MARK=0x1e50
LIFT_FAMILY=${LIFT_FAMILY:-4}

tb_init "${1:-}"
# This test's namespaces and DPDK file prefixes carry "le2" (unique to it, so
# it can run next to other chain tests); cleanup is testbed.sh's trap as usual.
T=le2
[ "$LIFT_FAMILY" = 4 ] || T=le6
TB_NS_FH="$T-fh-$TB_ID" TB_NS_MH="$T-mh-$TB_ID" TB_NS_HUB="$T-hub-$TB_ID"
TB_NS_EMU="$T-emu-$TB_ID" TB_NS_TERM="$T-term-$TB_ID" TB_PREFIX="$T-$TB_ID"
MH_LIFT=${2:-$(dirname "$TB_SATGW")/../control/agent/mh_lift}
[ -x "$MH_LIFT" ] || tb_fail "no mh_lift at $MH_LIFT (give it as the second argument)"
MH_LIFT=$(readlink -f "$MH_LIFT")
tb_topology chain
# The hosts' addresses the agents and the download use.
A_FH=$TB_IP_FH A_MH=$TB_IP_MH IP=(ip)
if [ "$LIFT_FAMILY" = 6 ]; then
	# IPv6 on the two hosts' veths (testbed.sh's tb_chain_ipv6).
	A_FH=$TB_IP6_FH A_MH=$TB_IP6_MH IP=(ip -6)
	tb_chain_ipv6
elif [ "$LIFT_FAMILY" != 4 ]; then
	tb_fail "LIFT_FAMILY is 4 or 6, not $LIFT_FAMILY"
fi
SLPY=("$TB_PY" "$TB_E2E_DIR/satlink.py")
WIRE=("$TB_PY" "$TB_E2E_DIR/lift_wire.py")

# ---- policies and keys in the work dir ---------------------------------------
"${SLPY[@]}" keyfile "$TB_DIR/lift.keys" 1001
cp "$P/lift_hub.yaml" "$P/lift_terminal.yaml" "$TB_DIR/"
for f in "$TB_DIR/lift_hub.yaml" "$TB_DIR/lift_terminal.yaml" "$P/lift_emulator_ge.yaml"; do
	"$TB_SATGW" --check-config "$f" >"$TB_DIR/check.out" 2>&1 ||
		{ cat "$TB_DIR/check.out" >&2; tb_fail "$(basename "$f") does not validate"; }
done
# ESP: one key file for both agents (the syntax of `ip xfrm state add`).
umask 077
cat >"$TB_DIR/esp.keys" <<KEYS
src $A_MH dst $A_FH proto esp spi 0x1e5a0001 mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6532652d75702d6b657921cafe0001 128
src $A_FH dst $A_MH proto esp spi 0x1e5a0002 mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6532652d646f776e2d6b65792d3235362d626974732d6f6b212121cafe0002 128
KEYS
umask 022

# ---- boxes --------------------------------------------------------------------
tb_box_start emu "$P/lift_emulator_ge.yaml" 1
tb_box_start hub "$TB_DIR/lift_hub.yaml" 0
tb_box_start term "$TB_DIR/lift_terminal.yaml" 0

# ---- agents -------------------------------------------------------------------
# start_agent NS LOCAL PEER MODE: the agent, its TUN le2l0, the routes that put
# the host's traffic to PEER into the TUN and the agent's ESP (fwmark) out.
start_agent() {
	local ns=$1 local=$2 peer=$3 mode=$4
	tb_bg "$ns" "agent-$ns" "$MH_LIFT" --tun le2l0 --mtu 1300 --local "$local" --peer "$peer" \
		--keys "$TB_DIR/esp.keys" --mark "$MARK" --lift "$mode" --lift-proto "$LIFT_PROTO" \
		--stats-json "$TB_DIR/agent-$ns.json"
	eval "AGENT_${ns^^}=$TB_LAST_PID"
	local i
	for i in $(seq 1 100); do
		tb_ns "$ns" ip link show le2l0 >/dev/null 2>&1 && break
		tb__alive "$TB_LAST_PID" || break
		sleep 0.1
	done
	tb_ns "$ns" ip link show le2l0 >/dev/null 2>&1 ||
		{ cat "$TB_DIR/agent-$ns.log" >&2; tb_fail "mh_lift on $ns did not bring its TUN up"; }
	[ "$LIFT_FAMILY" = 4 ] ||
		tb_ns "$ns" sysctl -qw net.ipv6.conf.le2l0.disable_ipv6=0 >/dev/null
	tb_ns "$ns" "${IP[@]}" rule add fwmark "$MARK" lookup main pref 100
	tb_ns "$ns" "${IP[@]}" rule add to "$peer" lookup 161 pref 110
	tb_ns "$ns" "${IP[@]}" route add "$peer" dev le2l0 src "$local" table 161
	# Fail closed: once the agent (and its TUN route) is gone, the host's
	# packets to the peer are dropped, never sent in clear. Without it, in
	# one CI run (stop 27), 1 TCP and 4 ICMPv6 packets left mh in clear after
	# its agent stopped: most likely a TCP close still under way and the
	# kernel's answers to the ESP that followed (its raw socket gone).
	tb_ns "$ns" "${IP[@]}" route add blackhole "$peer" metric 4096 table 161
	tb_ns "$ns" sysctl -qw net.ipv4.conf.le2l0.rp_filter=0 net.ipv4.conf.all.rp_filter=0
}
start_agent fh "$A_FH" "$A_MH" off
start_agent mh "$A_MH" "$A_FH" on
tb_log "agents: fh mh_lift --lift off (the fixed host's ESP), mh mh_lift --lift on (protocol $LIFT_PROTO)"

# agent_wait NS TIMEOUT COND: SIGUSR1 to the agent (it writes its JSON) until
# the python condition on d (the JSON) holds.
agent_wait() {
	local ns=$1 timeout=$2 cond=$3 pid t0 f=$TB_DIR/agent-$1.json
	pid=$(eval echo "\$AGENT_${ns^^}")
	t0=$(date +%s)
	while :; do
		tb__alive "$pid" || tb_fail "mh_lift on $ns died ($TB_DIR/agent-$ns.log)"
		rm -f "$f"
		kill -USR1 "$pid"
		for _ in $(seq 1 20); do [ -s "$f" ] && break; sleep 0.05; done
		if [ -s "$f" ] && "$TB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$f" "$cond"; then
			tb_log "  ok   agent $ns: $cond"
			return 0
		fi
		[ $(($(date +%s) - t0)) -lt "$timeout" ] ||
			{ cat "$f" >&2 || true; tb_fail "agent $ns: not within $timeout s: $cond"; }
		sleep 0.2
	done
}

# Capture what fh receives (from the hub) for the whole run.
rm -f "$TB_DIR/cap.ready"
tb_bg fh capture "${WIRE[@]}" capture fh0 "$TB_DIR/cap.json" --ready "$TB_DIR/cap.ready"
CAP=$TB_LAST_PID
for _ in $(seq 1 100); do [ -e "$TB_DIR/cap.ready" ] && break; sleep 0.1; done
[ -e "$TB_DIR/cap.ready" ] || { cat "$TB_DIR/capture.log" >&2; tb_fail "the capture at fh0 did not start"; }

tb_wait_path fh "$A_MH" 30
tb_log "an echo crossed inside ESP (agents) and satlink (AES-GCM), IPv$LIFT_FAMILY"

# ---- the download ---------------------------------------------------------------
head -c "$((LIFT_FILE_KB * 1024))" /dev/urandom >"$TB_DIR/lift.bin"
tb_xfer fh mh "$A_MH" "$TB_DIR/lift.bin" 90
tb_log "sender's kernel (fh) TCP counters:"
tb_nstat fh TcpOutSegs TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPLossProbes \
	TcpExtTCPSpuriousRTOs TcpExtTCPLossUndo | sed 's/^/    /' >&2

agent_wait mh 30 'd["mh"]["ctrl_why"]["setup_ok"] >= 1'
agent_wait mh 40 'd["mh"]["ctrl_why"]["teardown_ok"] >= 1'
agent_wait mh 5 'd["mh"]["pairs"] > 0 and d["lift_tx"]["pair"] == d["mh"]["pairs"] and d["lift_tx"]["ack"] > d["lift_tx"]["pair"]'
agent_wait mh 5 'd["mh"]["rx_why"]["data"] > 0 and d["lift_rx"]["ctrl"] >= 2 and d["lift_rx"]["drop_other"] == 0'
agent_wait mh 5 'd["in_sa"]["dropped"]["auth_fail"] == 0 and d["out_sa"]["refused"]["no_room"] == 0 and d["lift_tx"]["hdr_err"] == 0'

# ---- LIFT from the terrestrial side ---------------------------------------------------
tb_box_tel hub /satgw/stats >"$TB_DIR/tel-before.json"
before=$("$TB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("drops",{}).get("lift_not_from_satellite",0))' "$TB_DIR/tel-before.json")
tb_ns fh "${WIRE[@]}" inject fh0 "$TB_MAC_FH" "$TB_MAC_GT" "$A_MH" "$A_FH" \
	"$LIFT_PROTO" "$LIFT_INJECT" "$TB_DIR/inject.json"
tb_box_wait_tel hub 30 /satgw/stats "d['drops']['lift_not_from_satellite'] >= $((before + LIFT_INJECT))"
tb_log "injected $LIFT_INJECT LIFT packets at fh0 (source the MH): refused at the hub"

# The MH's agent stops first (what it sent is final); its last packets are let
# arrive (the terminal's satlink session holds nothing unacknowledged: the hub
# has them and forwarded them) before the capture and the fixed host's agent
# stop, so that the counts below do not miss a packet still crossing the
# satellite (test_lift_kernel.sh met it in CI).
kill -TERM "$AGENT_MH"
tb_wait_pid "$AGENT_MH" 10 || tb_fail "mh_lift on mh did not exit cleanly"
tb_box_wait_tel term 20 /satgw/satlink 'd["0"]["pkts_queued"] == d["0"]["pkts_acked"]'
kill -TERM "$CAP" 2>/dev/null || true
tb_wait_pid "$CAP" 10 || tb_fail "the capture at fh0 failed ($TB_DIR/capture.log)"
kill -TERM "$AGENT_FH"
tb_wait_pid "$AGENT_FH" 10 || tb_fail "mh_lift on fh did not exit cleanly"
tb_boxes_stop_keep run hub term emu

# ---- the checks --------------------------------------------------------------------
tb_log "the MH agent at exit: $(cut -c1-400 "$TB_DIR/agent-mh.json")"
"$TB_PY" - "$TB_DIR/hub-run.json" "$TB_DIR/agent-mh.json" "$TB_DIR/agent-fh.json" \
	"$TB_DIR/cap.json" "$before" "$LIFT_INJECT" "$A_MH" "$LIFT_PROTO" <<'PY' ||
import json, sys
hub, mh, fh, cap = (json.load(open(f)) for f in sys.argv[1:5])
before, inj, mh_ip, proto = int(sys.argv[5]), int(sys.argv[6]), sys.argv[7], sys.argv[8]
L, D = hub["lift"]["counters"], hub["drops"]
m, t = mh["mh"], mh["lift_tx"]
print("  hub lift: " + ", ".join("%s %s" % (k, v) for k, v in sorted(L.items()) if v))
print("  mh agent: flows %d, Setups %d, Teardowns %d, retransmissions %d; segments: %s" % (
    m["flows_created"], m["setups_sent"], m["teardowns_sent"], m["ctrl_retx"],
    ", ".join("%s %d" % kv for kv in m["tx_why"].items() if kv[1])))
from_mh = {k.split("/")[1]: v for k, v in cap["by_src_proto"].items() if k.startswith(mh_ip + "/")}
print("  fh0 received from mh by IP protocol: %s (capture drops %d)" % (from_mh, cap["drops"]))
# What reaches fh from mh: the plain ESP, every TCP ACK (stripped; the hub
# drops nothing but FrACKs), the untouched ones (a flow not yet set up) and the
# FrACKs the hub's timer forwarded (freezes).
fwd = L["acks_rx"] + L["untouched"] + L["freezes"] + L["freezes_spare"]
# Every control packet the agent sent (retransmissions included) and nothing else.
hub_ctrl = sum(L[k] for k in ("setups", "setup_dup", "setup_replaced", "setup_full",
                              "setup_bad_proto", "teardowns", "teardown_unknown"))
agent_ctrl = m["setups_sent"] + m["teardowns_sent"] + m["ctrl_retx"]
checks = [
    (L["setups"] >= 1 and L["ctrl_acks_sent"] >= 2,
     "hub: Setup built the entry (setups %d), acknowledgements sent (%d)" % (
         L["setups"], L["ctrl_acks_sent"])),
    (L["fracks_rx"] > 0 and L["acks_rx"] > 0,
     "hub: pairs received (FrACKs %d, TCP ACKs %d)" % (L["fracks_rx"], L["acks_rx"])),
    (L["acks_fwd_now"] + L["acks_held"] > 0 and L["acks_released"] == L["acks_held"],
     "hub: TCP ACKs forwarded at once %d, held %d, every held one released (%d)" % (
         L["acks_fwd_now"], L["acks_held"], L["acks_released"])),
    (L["acks_rx"] + L["untouched"] == t["ack"],
     "hub: every TCP-ACK header the agent sent arrived (%d + %d untouched == %d)" % (
         L["acks_rx"], L["untouched"], t["ack"])),
    (L["fracks_rx"] == t["pair"], "hub: every FrACK the agent sent arrived (%d)" % t["pair"]),
    (L["to_fixed_host"] == fwd, "hub: to_fixed_host %d == ACKs + untouched + freezes (%d)" % (
        L["to_fixed_host"], fwd)),
    (L["esp_down_noted"] > 0, "hub: downlink ESP noted (%d)" % L["esp_down_noted"]),
    (L["held"] == 0 and L["flows"] == 0, "hub: nothing held, no flow left at exit"),
    (D["lift_not_from_satellite"] == before + inj,
     "hub: drops.lift_not_from_satellite %d == %d + %d injected" % (
         D["lift_not_from_satellite"], before, inj)),
    (D["lift_unauthenticated"] == 0 and hub_ctrl == agent_ctrl,
     "hub: no LIFT unauthenticated; the injected Setups built nothing (control taken by the hub "
     "%d == sent by the agent %d)" % (hub_ctrl, agent_ctrl)),
    (m["ctrl_why"]["setup_ok"] >= 1 and m["setup_gaveup"] == 0, "mh agent: Setup acknowledged"),
    (m["pairs"] > 0 and m["rx_why"]["data"] > 0, "mh agent: %d pairs sent, %d data packets tracked" % (
        m["pairs"], m["rx_why"]["data"])),
    (from_mh.get("50", 0) > 0, "fh0: ESP from mh (%d)" % from_mh.get("50", 0)),
    (set(from_mh) == {"50"}, "fh0: only ESP from mh (IP protocols %s)" % sorted(from_mh)),
    (cap["by_proto"].get(proto, 0) == 0, "fh0: no LIFT (protocol %s) at all" % proto),
    (cap["drops"] > 0 or from_mh.get("50", 0) == t["plain"] + fwd,
     "fh0: ESP from mh %d == plain %d + what the hub forwarded %d" % (
         from_mh.get("50", 0), t["plain"], fwd)),
    (fh["in_sa"]["dropped"]["auth_fail"] == 0 and fh["in_sa"]["packets"] == t["plain"] + fwd,
     "fh agent: decrypted %d == plain + forwarded, no ICV failure" % fh["in_sa"]["packets"]),
]
for ok, w in checks:
    print("  %s %s" % ("ok  " if ok else "FAIL", w))
for d in cap.get("not_esp", []):
    print("  fh0 received, not ESP: %s" % d)
sys.exit(0 if all(ok for ok, _ in checks) else 1)
PY
	tb_fail "LIFT checks failed (hub $TB_DIR/hub-run.json, agent $TB_DIR/agent-mh.json)"
"$TB_PY" "$TB_E2E_DIR/stats.py" check "$TB_DIR/hub-run.json" --expect 'mempool.in_use == 0' >&2 ||
	tb_fail "hub accounting ($TB_DIR/hub-run.json)"
"$TB_PY" "$TB_E2E_DIR/stats.py" check "$TB_DIR/term-run.json" --expect 'mempool.in_use == 0' >&2 ||
	tb_fail "terminal accounting ($TB_DIR/term-run.json)"
tb_pass
