#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e: LIFT (issue 8, docs/lift.md) across the satellite chain with the Linux
# kernel's own ESP at the fixed host: real Linux TCP inside real ESP, the
# kernel's xfrm at one end, the MH-LIFT agent at the other.
#
#   VM (QEMU TCG) --tap-- bridge lkb0 --fh0-- [satgw hub, lift:] ==satlink AES-GCM==
#     Debian cloud kernel,  (netns lk-fh)       [emulator, GE forward link] == [terminal] -- mh
#     ip xfrm transport rfc4106                                                 mh_lift --lift on
#
# test_lift_chain.sh is the same chain with a second mh_lift standing in for
# the fixed host's ESP (this machine's kernel has none); here the fixed host is
# the VM of test_esp_kernel.sh (tests/e2e/qemu/vm.sh): its eth0 takes fh0's
# MAC and address (the hub's next hop and the mobile host's peer do not
# change), fh0 becomes a port of a bridge with the VM's tap.
#
#   1. satgw boxes from testbed.sh's chain with test_lift_chain.sh's policies
#      (lift_hub.yaml: satlink AES-256 and lift on, the seed's fixed 0.98 s
#      timer; lift_terminal.yaml; lift_emulator_ge.yaml: Gilbert-Elliott on the
#      forward link, good 4 s, bad 1 s losing everything). The VM: the key
#      file's lines given to `ip xfrm state add` as they are, transport-mode
#      policies for 10.10.0.1 <-> 10.20.1.1, the route to 10.20.1.0/24 via the
#      hub (one `ip -batch`). The agent on mh with the same key file.
#   2. A LK_FILE_KB (1024) KB download VM -> mh over one Linux TCP connection
#      (busybox nc in the VM, xfer.py on mh), inside the kernel's ESP and the
#      agent's: sha256 equal at mh.
#   3. Waiting on conditions (agent JSON by SIGUSR1): the agent's Setup and,
#      after the close, its Teardown acknowledged by the hub; pairs sent.
#   4. LK_INJECT (10) LIFT packets injected at fh0 toward the hub's
#      terrestrial port: drops.lift_not_from_satellite moves by exactly that.
#   5. The hub's exit JSON: the entry built, every FrACK and TCP-ACK header
#      the agent sent received, held ACKs all released, to_fixed_host == TCP
#      ACKs + untouched + freezes, nothing held, control taken == sent.
#      The VM: the uplink SA decrypted exactly the agent's plain ESP + what
#      the hub forwarded (when the tap dropped nothing), every
#      /proc/net/xfrm_stat counter 0 (a LIFT packet reaching the VM would fail
#      the inbound policy: XfrmInTmplMismatch), the SAs' replay-window /
#      replay / integrity-failed 0, Ip InUnknownProtos 0. A capture at fh0
#      (what the hub sent toward the VM) holds only ESP from mh, no LIFT.
#      Accounting identity at hub and terminal.
# Usage: test_lift_kernel.sh /path/to/satgw [/path/to/mh_lift]
# Missing pieces (QEMU, the kernel in the cache, busybox-static) fail the test:
# setup.sh installs and fetches them.
set -euo pipefail
export TB_BUDGET=${TB_BUDGET:-390}   # ctest: TIMEOUT 400 (TCG on a loaded machine)
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"
# shellcheck source=qemu/vm.sh
source "$TB_E2E_DIR/qemu/vm.sh"

P=$TB_E2E_DIR/policies
LK_FILE_KB=${LK_FILE_KB:-1024}
LK_INJECT=${LK_INJECT:-10}
LIFT_PROTO=253
MARK=0x1e50
SPI_UP=0x1e5a0001      # mh -> fh (the VM), AES-128
SPI_DOWN=0x1e5a0002    # fh -> mh, AES-256
IP=/usr/sbin/ip        # in the VM: iproute2 (a bare `ip` is busybox's applet)
MAC_FH0=02:00:00:00:01:0f   # fh0 once the VM has taken TB_MAC_FH

fail() { tb_fail "$*"; }   # vm.sh's

tb_init "${1:-}"
# Namespaces and DPDK file prefixes "lk-*" (unique to this test); the bridge
# and the tap live inside lk-fh-*. Cleanup: testbed.sh's trap, which kills
# everything left in the namespaces (QEMU runs in lk-fh-*).
TB_NS_FH="lk-fh-$TB_ID" TB_NS_MH="lk-mh-$TB_ID" TB_NS_HUB="lk-hub-$TB_ID"
TB_NS_EMU="lk-emu-$TB_ID" TB_NS_TERM="lk-term-$TB_ID" TB_PREFIX="lk-$TB_ID"
MH_LIFT=${2:-$(dirname "$TB_SATGW")/../control/agent/mh_lift}
[ -x "$MH_LIFT" ] || tb_fail "no mh_lift at $MH_LIFT (give it as the second argument)"
MH_LIFT=$(readlink -f "$MH_LIFT")
vm_check
# shellcheck disable=SC1091
. "$VM_CACHE/current/kernel.env"
tb_topology chain
SLPY=("$TB_PY" "$TB_E2E_DIR/satlink.py")
WIRE=("$TB_PY" "$TB_E2E_DIR/lift_wire.py")

# ---- the fixed host becomes the VM --------------------------------------------
# fh0 gives up its address, routes and MAC; the VM's NIC takes the MAC (the
# hub's next hop to-fh) and the address. The fh namespace's kernel then has no
# address at all: everything the hub sees from the terrestrial side is the
# VM's (and this test's injection).
tb_ns fh ip route flush dev fh0
tb_ns fh ip neigh flush dev fh0
tb_ns fh ip addr flush dev fh0
tb_ns fh ip link set fh0 down
tb_ns fh ip link set fh0 address "$MAC_FH0"
tb_ns fh ip link add lkb0 type bridge
tb_ns fh ip tuntap add dev lkt0 mode tap
for d in lkt0 fh0; do
	tb_ns fh ip link set "$d" master lkb0 up
done
tb_ns fh ip link set lkb0 up

# ---- policies and keys in the work dir ---------------------------------------
"${SLPY[@]}" keyfile "$TB_DIR/lift.keys" 1001
cp "$P/lift_hub.yaml" "$P/lift_terminal.yaml" "$TB_DIR/"
for f in "$TB_DIR/lift_hub.yaml" "$TB_DIR/lift_terminal.yaml" "$P/lift_emulator_ge.yaml"; do
	"$TB_SATGW" --check-config "$f" >"$TB_DIR/check.out" 2>&1 ||
		{ cat "$TB_DIR/check.out" >&2; tb_fail "$(basename "$f") does not validate"; }
done
# ESP: one key file for the agent and the VM's kernel (`ip xfrm state add` lines).
umask 077
cat >"$TB_DIR/esp.keys" <<KEYS
# ip xfrm state add <line>   (the agent and the VM's kernel read this file)
src $TB_IP_MH dst $TB_IP_FH proto esp spi $SPI_UP mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6b726e2d75702d6b657921cafe0001 128
src $TB_IP_FH dst $TB_IP_MH proto esp spi $SPI_DOWN mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6b726e2d646f776e2d6b65792d3235362d626974732d6f6b212121cafe0002 128
KEYS
umask 022
head -c "$((LK_FILE_KB * 1024))" /dev/urandom >"$TB_DIR/lift.bin"
SUM=$(sha256sum "$TB_DIR/lift.bin" | cut -d' ' -f1)
# The VM's network and xfrm set-up, one ip process (process start-up is what
# costs under TCG): the operator's commands of docs/lift.md, "The key file".
{
	echo "addr add $TB_IP_FH/24 dev eth0"
	echo "neigh add $TB_GW_FH lladdr $TB_MAC_GT dev eth0 nud permanent"
	echo "route add 10.20.1.0/24 via $TB_GW_FH dev eth0"
	echo "xfrm policy add src $TB_IP_FH/32 dst $TB_IP_MH/32 dir out tmpl src $TB_IP_FH" \
		"dst $TB_IP_MH proto esp mode transport"
	echo "xfrm policy add src $TB_IP_MH/32 dst $TB_IP_FH/32 dir in tmpl src $TB_IP_MH" \
		"dst $TB_IP_FH proto esp mode transport"
} >"$TB_DIR/vm-setup.batch"

# ---- the VM boots while the boxes start ---------------------------------------
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-180}
vm_start "$TB_NS_FH" lkt0 "$TB_MAC_FH" "$TB_DIR" --add "$TB_DIR/esp.keys:/etc/esp.keys" \
	--add "$TB_DIR/lift.bin:/data.bin" --add "$TB_DIR/vm-setup.batch:/etc/vm-setup.batch"
TB_BG_PIDS+=("$VM_PID" "$VM_CAT")
tb_box_start emu "$P/lift_emulator_ge.yaml" 1
tb_box_start hub "$TB_DIR/lift_hub.yaml" 0
tb_box_start term "$TB_DIR/lift_terminal.yaml" 0

# ---- the agent on mh -----------------------------------------------------------
tb_bg mh agent-mh "$MH_LIFT" --tun lkl0 --mtu 1300 --local "$TB_IP_MH" --peer "$TB_IP_FH" \
	--keys "$TB_DIR/esp.keys" --mark "$MARK" --lift on --lift-proto "$LIFT_PROTO" \
	--stats-json "$TB_DIR/agent-mh.json"
AGENT=$TB_LAST_PID
for _ in $(seq 1 100); do
	tb_ns mh ip link show lkl0 >/dev/null 2>&1 && break
	tb__alive "$AGENT" || break
	sleep 0.1
done
tb_ns mh ip link show lkl0 >/dev/null 2>&1 ||
	{ cat "$TB_DIR/agent-mh.log" >&2; tb_fail "mh_lift did not bring its TUN up"; }
tb_ns mh ip rule add fwmark "$MARK" lookup main pref 100
tb_ns mh ip rule add to "$TB_IP_FH" lookup 161 pref 110
tb_ns mh ip route add "$TB_IP_FH" dev lkl0 src "$TB_IP_MH" table 161
# fail closed when the agent stops (test_lift_chain.sh says why)
tb_ns mh ip route add blackhole "$TB_IP_FH" metric 4096 table 161
tb_ns mh sysctl -qw net.ipv4.conf.lkl0.rp_filter=0 net.ipv4.conf.all.rp_filter=0

vm_wait
tb_log "VM up: boot $VM_BOOT_S s (QEMU TCG, 1 vCPU, kernel $KVER)"
vm "{ cat /etc/vm-setup.batch; grep -v '^#' /etc/esp.keys | sed 's/^/xfrm state add /'; } |" \
	"$IP -batch -" >"$TB_DIR/vm-setup.log" 2>&1 ||
	tb_fail "VM: ip -batch: $(cat "$TB_DIR/vm-setup.log")"
[ "$(vm "$IP xfrm state | grep -c 'aead rfc4106(gcm(aes))'")" = 2 ] || tb_fail "VM: 2 SAs"
tb_log "VM: eth0 $TB_IP_FH (MAC $TB_MAC_FH), 2 rfc4106(gcm(aes)) transport SAs and 2 policies" \
	"from the key file; mh: mh_lift --lift on (protocol $LIFT_PROTO)"

# agent_wait TIMEOUT COND: SIGUSR1 to the agent (it writes its JSON) until the
# python condition on d (the JSON) holds.
agent_wait() {
	local timeout=$1 cond=$2 t0 f=$TB_DIR/agent-mh.json
	t0=$(date +%s)
	while :; do
		tb__alive "$AGENT" || tb_fail "mh_lift died ($TB_DIR/agent-mh.log)"
		rm -f "$f"
		kill -USR1 "$AGENT"
		for _ in $(seq 1 40); do [ -s "$f" ] && break; sleep 0.05; done
		if [ -s "$f" ] && "$TB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$f" "$cond"; then
			tb_log "  ok   agent mh: $cond"
			return 0
		fi
		[ $(($(date +%s) - t0)) -lt "$timeout" ] ||
			{ cat "$f" >&2 || true; tb_fail "agent mh: not within $timeout s: $cond"; }
		sleep 0.2
	done
}

# Capture what the hub sends toward the VM (fh0 receives it) for the whole run.
rm -f "$TB_DIR/cap.ready"
tb_bg fh capture "${WIRE[@]}" capture fh0 "$TB_DIR/cap.json" --ready "$TB_DIR/cap.ready"
CAP=$TB_LAST_PID
for _ in $(seq 1 200); do [ -e "$TB_DIR/cap.ready" ] && break; sleep 0.1; done
[ -e "$TB_DIR/cap.ready" ] || { cat "$TB_DIR/capture.log" >&2; tb_fail "the capture at fh0 did not start"; }

# An echo from mh to the VM: the agent's ESP, satlink (AES-GCM), the kernel's ESP.
tb_wait_path mh "$TB_IP_FH" 60
tb_log "an echo crossed mh -> VM and back inside ESP (agent, kernel) and satlink (AES-GCM)"

# ---- the download: the VM's kernel sends, Linux TCP on mh receives ----------------
PORT=$(tb_rand_port)
tb_bg mh xfer-recv "$TB_PY" "$TB_E2E_DIR/xfer.py" recv --bind "$TB_IP_MH" --port "$PORT" \
	--result "$TB_DIR/xfer-recv.json" --timeout 150
RP=$TB_LAST_PID
tb_wait_listen mh "$PORT" 20
T1=$(date +%s.%N)
VM_TIMEOUT=170 vm "nc $TB_IP_MH $PORT </data.bin" >"$TB_DIR/vm-nc.log" 2>&1 ||
	tb_fail "download: nc in the VM failed: $(cat "$TB_DIR/vm-nc.log")"
tb_wait_pid "$RP" 30 || { cat "$TB_DIR/xfer-recv.log" >&2; tb_fail "download: receiver failed"; }
got=$("$TB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["sha256"], d["bytes"], "%.1f" % d["seconds"])' "$TB_DIR/xfer-recv.json")
read -r got_sum got_bytes got_s <<<"$got"
[ "$got_sum" = "$SUM" ] || tb_fail "download: sha256 $got_sum ($got_bytes bytes), want $SUM"
[ "$got_bytes" = $((LK_FILE_KB * 1024)) ] || tb_fail "download: $got_bytes bytes"
tb_log "download VM kernel -> mh: $got_bytes bytes intact (sha256), $got_s s at the receiver," \
	"$(awk -v a="$(date +%s.%N)" -v b="$T1" 'BEGIN { printf "%.1f", a - b }') s with the VM's nc"
# The sender's (the VM's) TCP counters, for the log (the channel decides them).
vm cat /proc/net/netstat /proc/net/snmp >"$TB_DIR/vm-netstat.txt" 2>&1 || true
tb_log "VM's TCP: $(awk '$1 == "TcpExt:" || $1 == "Tcp:" { if (!(($1) in h)) { h[$1] = 1
	for (i = 2; i <= NF; i++) n[$1, i] = $i; next }
	for (i = 2; i <= NF; i++) if (n[$1, i] ~ /^(OutSegs|RetransSegs|TCPTimeouts|TCPLossProbes|TCPSpuriousRTOs|TCPLossUndo)$/)
		printf "%s %s, ", n[$1, i], $i }' "$TB_DIR/vm-netstat.txt")"

agent_wait 40 'd["mh"]["ctrl_why"]["setup_ok"] >= 1'
agent_wait 60 'd["mh"]["ctrl_why"]["teardown_ok"] >= 1'
agent_wait 10 'd["mh"]["pairs"] > 0 and d["lift_tx"]["pair"] == d["mh"]["pairs"] and d["lift_tx"]["ack"] > d["lift_tx"]["pair"]'
agent_wait 10 'd["mh"]["rx_why"]["data"] > 0 and d["lift_rx"]["ctrl"] >= 2 and d["lift_rx"]["drop_other"] == 0'
agent_wait 10 'd["in_sa"]["dropped"]["auth_fail"] == 0 and d["out_sa"]["refused"]["no_room"] == 0 and d["lift_tx"]["hdr_err"] == 0'

# ---- LIFT from the terrestrial side -----------------------------------------------
tb_box_tel hub /satgw/stats >"$TB_DIR/tel-before.json"
before=$("$TB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("drops",{}).get("lift_not_from_satellite",0))' "$TB_DIR/tel-before.json")
tb_ns fh "${WIRE[@]}" inject fh0 "$TB_MAC_FH" "$TB_MAC_GT" "$TB_IP_MH" "$TB_IP_FH" \
	"$LIFT_PROTO" "$LK_INJECT" "$TB_DIR/inject.json"
tb_box_wait_tel hub 30 /satgw/stats "d['drops']['lift_not_from_satellite'] >= $((before + LK_INJECT))"
tb_log "injected $LK_INJECT LIFT packets at fh0 (source the MH): refused at the hub"

# The agent stops first (what it sent is final), then its last packets are let
# arrive before the capture and the boxes stop: the terminal's satlink session
# holds nothing unacknowledged (every reliable packet reached the hub, which
# forwards it toward fh0 in the burst it arrives in). Without this wait a packet
# still crossing the satellite (the connection's last segments) was dropped at the
# stop (drops.shutdown) and the counts below missed it by one: seen in CI.
kill -TERM "$AGENT"
tb_wait_pid "$AGENT" 10 || tb_fail "mh_lift did not exit cleanly"
tb_box_wait_tel term 20 /satgw/satlink 'd["0"]["pkts_queued"] == d["0"]["pkts_acked"]'
kill -TERM "$CAP" 2>/dev/null || true
tb_wait_pid "$CAP" 10 || tb_fail "the capture at fh0 failed ($TB_DIR/capture.log)"
tb_boxes_stop_keep run hub term emu

# ---- the VM at rest ------------------------------------------------------------------
vm "$IP -s xfrm state" >"$TB_DIR/xfrm-state.txt" || tb_fail "VM: ip -s xfrm state"
vm cat /proc/net/xfrm_stat >"$TB_DIR/xfrm_stat.txt" || tb_fail "VM: xfrm_stat"
vm cat /proc/net/snmp >"$TB_DIR/vm-snmp.txt" || tb_fail "VM: snmp"
tb_ns fh cat /sys/class/net/lkt0/statistics/tx_dropped >"$TB_DIR/tap-drops.txt"
# sa_field SPI packets|window|replay|integrity from `ip -s xfrm state` (iproute2
# prints the SA's integrity_failed as "failed" on the stats line).
sa_field() {
	awk -v spi="$(printf '0x%08x' "$1")" -v want="$2" '
		/^src / { on = 0 } index($0, "spi " spi "(") { on = 1 }
		on && /lifetime current:/ { getline; sub(/\(packets\)/, "", $2); v["packets"] = $2 }
		on && /stats:/ { getline; v["window"] = $2; v["replay"] = $4; v["integrity"] = $6 }
		END { print v[want] }' "$TB_DIR/xfrm-state.txt"
}
snmp() {   # snmp GROUP FIELD from the VM's /proc/net/snmp
	awk -v g="$1:" -v f="$2" '$1 == g { if (!h) { for (i = 1; i <= NF; i++) n[$i] = i; h = 1 }
		else print $(n[f]) }' "$TB_DIR/vm-snmp.txt"
}
VM_UP_PKTS=$(sa_field $SPI_UP packets)
VM_DOWN_PKTS=$(sa_field $SPI_DOWN packets)
VM_SA_ERR="$(sa_field $SPI_UP window) $(sa_field $SPI_UP replay) $(sa_field $SPI_UP integrity)"
VM_SA_ERR="$VM_SA_ERR $(sa_field $SPI_DOWN window) $(sa_field $SPI_DOWN replay)"
VM_SA_ERR="$VM_SA_ERR $(sa_field $SPI_DOWN integrity)"
VM_XFRM_NZ=$(awk '$2 != 0 { printf "%s=%s ", $1, $2 }' "$TB_DIR/xfrm_stat.txt")
VM_XFRM_N=$(wc -l <"$TB_DIR/xfrm_stat.txt")
VM_UNKPROTO=$(snmp Ip InUnknownProtos)
VM_UNREACH=$(snmp Icmp OutDestUnreachs)
TAP_DROPS=$(cat "$TB_DIR/tap-drops.txt")
tb_log "VM: uplink SA $SPI_UP decrypted $VM_UP_PKTS, downlink SA $SPI_DOWN sent $VM_DOWN_PKTS;" \
	"xfrm_stat non-zero: '${VM_XFRM_NZ}' (of $VM_XFRM_N); SA window/replay/failed: $VM_SA_ERR;" \
	"Ip InUnknownProtos $VM_UNKPROTO, Icmp OutDestUnreachs $VM_UNREACH; tap tx_dropped $TAP_DROPS"
vm_stop

# ---- the checks --------------------------------------------------------------------
tb_log "the agent at exit: $(cut -c1-400 "$TB_DIR/agent-mh.json")"
"$TB_PY" - "$TB_DIR/hub-run.json" "$TB_DIR/agent-mh.json" "$TB_DIR/cap.json" "$before" \
	"$LK_INJECT" "$TB_IP_MH" "$LIFT_PROTO" "$VM_UP_PKTS" "$VM_DOWN_PKTS" "$VM_XFRM_NZ" \
	"$VM_XFRM_N" "$VM_SA_ERR" "$VM_UNKPROTO" "$VM_UNREACH" "$TAP_DROPS" <<'PY' ||
import json, sys
hub, mh, cap = (json.load(open(f)) for f in sys.argv[1:4])
before, inj, mh_ip, proto = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
vm_up, vm_down, xfrm_nz, xfrm_n = int(sys.argv[8]), int(sys.argv[9]), sys.argv[10], int(sys.argv[11])
sa_err = [int(x) for x in sys.argv[12].split()]
unkproto, unreach, tap_drops = int(sys.argv[13]), int(sys.argv[14]), int(sys.argv[15])
L, D = hub["lift"]["counters"], hub["drops"]
m, t = mh["mh"], mh["lift_tx"]
print("  hub lift: " + ", ".join("%s %s" % (k, v) for k, v in sorted(L.items()) if v))
print("  mh agent: flows %d, Setups %d, Teardowns %d, retransmissions %d; segments: %s" % (
    m["flows_created"], m["setups_sent"], m["teardowns_sent"], m["ctrl_retx"],
    ", ".join("%s %d" % kv for kv in m["tx_why"].items() if kv[1])))
from_mh = {k.split("/")[1]: v for k, v in cap["by_src_proto"].items() if k.startswith(mh_ip + "/")}
print("  fh0 received from mh by IP protocol: %s (capture drops %d)" % (from_mh, cap["drops"]))
# What reaches the VM from mh: the plain ESP, every TCP ACK (stripped; the hub
# drops nothing but FrACKs), the untouched ones and the FrACKs of freezes.
fwd = L["acks_rx"] + L["untouched"] + L["freezes"] + L["freezes_spare"]
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
    (L["esp_down_noted"] > 0, "hub: the kernel's downlink ESP noted (%d)" % L["esp_down_noted"]),
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
    # Not equal: satlink may drop downlink ESP under load (TCP repairs it).
    (mh["in_sa"]["dropped"]["auth_fail"] == 0 and 0 < mh["in_sa"]["packets"] <= vm_down,
     "mh agent: decrypted %d of the %d the VM's downlink SA sent, no ICV failure" % (
         mh["in_sa"]["packets"], vm_down)),
    (from_mh.get("50", 0) > 0 and set(from_mh) == {"50"},
     "fh0: only ESP from mh (IP protocols %s)" % sorted(from_mh)),
    (cap["by_proto"].get(proto, 0) == 0, "fh0: no LIFT (protocol %s) toward the VM" % proto),
    (cap["drops"] > 0 or from_mh.get("50", 0) == t["plain"] + fwd,
     "fh0: ESP from mh %d == plain %d + what the hub forwarded %d" % (
         from_mh.get("50", 0), t["plain"], fwd)),
    (tap_drops > 0 or vm_up == t["plain"] + fwd,
     "VM kernel: uplink SA decrypted %d == the agent's plain %d + what the hub forwarded %d "
     "(tap drops %d)" % (vm_up, t["plain"], fwd, tap_drops)),
    (xfrm_n > 20 and xfrm_nz == "", "VM kernel: all %d /proc/net/xfrm_stat counters 0 (%s)" % (
        xfrm_n, xfrm_nz or "none non-zero")),
    (sa_err == [0] * 6, "VM kernel: SAs' replay-window, replay, integrity-failed 0 (%s)" % sa_err),
    (unkproto == 0 and unreach == 0,
     "VM kernel: Ip InUnknownProtos %d, Icmp OutDestUnreachs %d" % (unkproto, unreach)),
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
tb_log "PASS: Linux $KVER's ESP (xfrm) <-> mh_lift --lift on across the hub's LIFT stage"
tb_pass
