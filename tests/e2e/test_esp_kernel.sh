#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# test_esp_kernel.sh MH_LIFT: the MH-LIFT agent's ESP against the Linux
# kernel's own ESP (xfrm, transport mode, rfc4106(gcm(aes)), static keys),
# the kernel being a real Debian kernel booted under QEMU: the kernel this
# test runs on may have no ESP at all (CONFIG_INET_ESP off).
#
#  netns ke-fh-*: bridge keb* --- tap kek* === QEMU (TCG) === VM eth0 10.61.0.1
#                   |                        Debian cloud kernel, ip xfrm SAs and
#                   | veth kef*/kem*         policies from the key file, busybox
#  netns ke-mh-*: kem* 10.61.0.2, TUN ket* -> mh_lift -> ESP (raw socket, mark)
#
# One key file, lines of `ip xfrm state add` arguments, configures both ends
# (AES-128 up, AES-256 down; IPv6: a second pair, window 128). The VM runs the
# test's commands over its second serial port (tests/e2e/qemu/vm.sh). Phases:
#  1. good: ping both ways, a 1 MiB TCP transfer each way (Linux TCP at both
#     ends: xfer.py on the mobile host, busybox nc in the VM; sha256 at both
#     ends); then at rest every ESP packet one end sent was decrypted by the
#     other (agent JSON vs the VM's `ip -s xfrm state`), no error counter moved
#     (agent's per-reason drops, the VM's /proc/net/xfrm_stat all zero, the
#     SAs' replay/integrity/failed counters zero), no ICMP unreachable;
#  2. bytes: every ESP packet the kernel sent, decrypted by the agent and
#     encrypted again at its sequence number and IV, is identical byte for
#     byte (mh_lift --check-reencrypt);
#  3. adversary: toward each side, injected at layer 2 from the other side
#     (AF_PACKET): the last genuine packet again (replay inside the window),
#     the first one again (behind the window), and a forged one (a fresh
#     sequence number, the ICV flipped). Refused and counted exactly:
#     agent replay/too_old/auth_fail +1 each; kernel XfrmInStateSeqError +2,
#     XfrmInStateProtoError +1, every other xfrm_stat counter unmoved, the
#     SA's stats replay-window + replay +2 (behind and inside the window),
#     integrity_failed +1, its packet count unmoved; pings still answered;
#  4. IPv6: ping and 1 MiB each way over the second pair, all accounted for,
#     byte-for-byte re-encryption, no new kernel errors.
# Missing pieces (QEMU, the kernel in the cache, busybox-static) fail the test:
# setup.sh installs and fetches them.
set -euo pipefail

MH_LIFT=$(readlink -f "${1:?usage: test_esp_kernel.sh MH_LIFT}")
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
BUDGET=${TB_BUDGET:-285}   # ctest: TIMEOUT 300 (a loaded machine: see CMakeLists.txt)
T0=$(date +%s.%N)
TAG=$$$RANDOM
TAG=${TAG:0:8}
NS_FH=ke-fh-$TAG
NS_MH=ke-mh-$TAG
BR=keb$TAG
TAP=kek$TAG
V_FH=kef$TAG
V_MH=kem$TAG
T_MH=ket$TAG
T6_MH=ke6$TAG
FH=10.61.0.1
MH=10.61.0.2
MAC_FH=02:00:00:6c:00:01
MAC_MH=02:00:00:6c:00:02
MARK=0x1e50
SPI_UP=0x1e5a0001     # mh -> fh, AES-128
SPI_DOWN=0x1e5a0002   # fh -> mh, AES-256
FH6=fd00:6c::1
MH6=fd00:6c::2
SPI6_UP=0x1e5a0003
SPI6_DOWN=0x1e5a0004
IP=/usr/sbin/ip       # in the VM: iproute2 (a bare `ip` is busybox's applet)
DIR=$(mktemp -d /tmp/ke-esp.XXXXXX)
trap 'rm -rf "$DIR"' EXIT   # until cleanup (below) takes over
PIDS=()

log() {
	printf '[esp_kernel %6.1fs] %s\n' \
		"$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN { print a - b }')" "$*" >&2
}
fail() {
	log "FAIL: $*"
	for f in "$DIR"/*.log; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
	done
	exit 1
}

# shellcheck source=qemu/vm.sh
. "$HERE/qemu/vm.sh"

cleanup() {
	local p
	vm_stop 2>/dev/null || true
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null || true
	done
	ip netns del "$NS_FH" 2>/dev/null || true
	ip netns del "$NS_MH" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$DIR"
}
trap cleanup EXIT
trap 'fail "interrupted (budget ${BUDGET}s?)"' INT TERM
(
	end=$((SECONDS + BUDGET))
	while [ $SECONDS -lt $end ]; do sleep 1; done
	kill -TERM $$
) >/dev/null 2>&1 &
PIDS+=("$!")

[ "$(id -u)" -eq 0 ] || fail "needs root (namespaces, tap, raw sockets)"
[ -x "$MH_LIFT" ] || fail "no mh_lift at $MH_LIFT"
vm_check
# shellcheck disable=SC1091
. "$VM_CACHE/current/kernel.env"

wait_until() {
	local secs=$1 what=$2 end
	shift 2
	end=$(($(date +%s%N) + secs * 1000000000))
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || fail "timed out after ${secs}s: $what"
		sleep 0.05
	done
}

# ------------------------------------------------------------ keys (one source)
KEYS=$DIR/esp.keys
umask 077
cat >"$KEYS" <<KEYS
# ip xfrm state add <line>   (the agent and the VM's kernel read this file)
src $MH dst $FH proto esp spi $SPI_UP mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6573702d75702d6b657921cafe0001 128
src $FH dst $MH proto esp spi $SPI_DOWN mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6573702d646f776e2d6b65792d3235362d626974732d6f6b212121cafe0002 128
src $MH6 dst $FH6 proto esp spi $SPI6_UP mode transport replay-window 128 aead 'rfc4106(gcm(aes))' 0x6c6966742d657370362d75702d6b6579cafe0003 128
src $FH6 dst $MH6 proto esp spi $SPI6_DOWN mode transport replay-window 128 aead 'rfc4106(gcm(aes))' 0x6c6966742d657370362d646f776e2d6b65792d3235362d626974732d6f6b2121cafe0004 128
KEYS
umask 022
FILE=$DIR/data.bin
$PY -c 'import random, sys; random.seed(8); sys.stdout.buffer.write(random.randbytes(1 << 20))' \
	>"$FILE"
SUM=$(sha256sum "$FILE" | cut -d' ' -f1)

# ------------------------------------------------------------ namespaces, VM
ip netns add "$NS_FH"
ip netns add "$NS_MH"
for ns in "$NS_FH" "$NS_MH"; do
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0
done
ip link add "$V_FH" netns "$NS_FH" type veth peer name "$V_MH" address $MAC_MH netns "$NS_MH"
ip -n "$NS_FH" link add "$BR" type bridge
ip -n "$NS_FH" tuntap add dev "$TAP" mode tap
for d in "$TAP" "$V_FH"; do
	ip -n "$NS_FH" link set "$d" master "$BR" up
done
ip -n "$NS_FH" link set "$BR" up
ip -n "$NS_MH" addr add $MH/24 dev "$V_MH"
ip netns exec "$NS_MH" ethtool -K "$V_MH" tx off rx off tso off gso off gro off \
	>/dev/null 2>&1 || true
ip netns exec "$NS_FH" ethtool -K "$V_FH" tx off rx off tso off gso off gro off \
	>/dev/null 2>&1 || true
ip -n "$NS_MH" link set "$V_MH" up
ip netns exec "$NS_MH" sysctl -qw "net.ipv6.conf.$V_MH.disable_ipv6=0"
ip -n "$NS_MH" addr add $MH6/64 dev "$V_MH" nodad
ip -n "$NS_MH" neigh add $FH lladdr $MAC_FH dev "$V_MH" nud permanent
ip -n "$NS_MH" neigh add $FH6 lladdr $MAC_FH dev "$V_MH" nud permanent

VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-$((BUDGET / 2))}
# One ip process for the whole setup (process start-up is what costs under
# TCG): the addresses, then the SAs from the key file, each line given to
# `xfrm state add` as it is (ip's batch mode honours the quotes), then the
# transport-mode policies: the operator's commands of docs/lift.md.
{
	echo "addr add $FH/24 dev eth0"
	echo "addr add $FH6/64 dev eth0 nodad"
	echo "neigh add $MH lladdr $MAC_MH dev eth0 nud permanent"
	echo "neigh add $MH6 lladdr $MAC_MH dev eth0 nud permanent"
	echo "xfrm policy add src $FH/32 dst $MH/32 dir out tmpl src $FH dst $MH proto esp mode transport"
	echo "xfrm policy add src $MH/32 dst $FH/32 dir in tmpl src $MH dst $FH proto esp mode transport"
	echo "xfrm policy add src $FH6/128 dst $MH6/128 dir out tmpl src $FH6 dst $MH6 proto esp" \
		"mode transport"
	echo "xfrm policy add src $MH6/128 dst $FH6/128 dir in tmpl src $MH6 dst $FH6 proto esp" \
		"mode transport"
} >"$DIR/vm-setup.batch"
# The VM boots while the agents are set up.
vm_start "$NS_FH" "$TAP" $MAC_FH "$DIR" --add "$KEYS:/etc/esp.keys" --add "$FILE:/data.bin" \
	--add "$DIR/vm-setup.batch:/etc/vm-setup.batch"
PIDS+=("$VM_PID")
# ------------------------------------------------------------ the agent on mh
tun_up() { ip -n "$1" link show "$2" 2>/dev/null | grep -q ',UP'; }
ip netns exec "$NS_MH" "$MH_LIFT" --tun "$T_MH" --mtu 1400 --local $MH --peer $FH \
	--keys "$KEYS" --mark $MARK --lift off --stats-json "$DIR/mh.json" \
	--dump-rx "$DIR/mh-rx.hex" --dump-tx "$DIR/mh-tx.hex" --dump-max 1000000 \
	>"$DIR/mh_lift.log" 2>&1 &
AGENT=$!
PIDS+=("$AGENT")
ip -n "$NS_MH" rule add fwmark $MARK lookup main pref 100
ip -n "$NS_MH" rule add to $FH lookup 161 pref 110
wait_until 10 "TUN $T_MH up" tun_up "$NS_MH" "$T_MH"
ip netns exec "$NS_MH" sysctl -qw "net.ipv4.conf.$T_MH.rp_filter=0"
ip -n "$NS_MH" route add $FH dev "$T_MH" src $MH table 161
ip netns exec "$NS_MH" "$MH_LIFT" --tun "$T6_MH" --mtu 1400 --local $MH6 --peer $FH6 \
	--keys "$KEYS" --mark $MARK --lift off --stats-json "$DIR/mh6.json" \
	--dump-rx "$DIR/mh6-rx.hex" --dump-max 1000000 >"$DIR/mh_lift6.log" 2>&1 &
AGENT6=$!
PIDS+=("$AGENT6")
wait_until 10 "TUN $T6_MH up" tun_up "$NS_MH" "$T6_MH"
ip netns exec "$NS_MH" sysctl -qw "net.ipv6.conf.$T6_MH.router_solicitations=0" \
	"net.ipv6.conf.$T6_MH.disable_ipv6=0"
ip -n "$NS_MH" -6 rule add fwmark $MARK lookup main pref 100
ip -n "$NS_MH" -6 rule add to $FH6 lookup 161 pref 110
ip -n "$NS_MH" -6 route add $FH6 dev "$T6_MH" src $MH6 table 161
kill -0 "$AGENT" 2>/dev/null || fail "mh_lift exited"
vm_wait
log "VM up: boot ${VM_BOOT_S} s (QEMU TCG, 1 vCPU, kernel $KVER)"
vm "{ cat /etc/vm-setup.batch; grep -v '^#' /etc/esp.keys | sed 's/^/xfrm state add /'; } |" \
	"$IP -batch -" >"$DIR/vm-setup.log" 2>&1 || fail "VM: ip -batch: $(cat "$DIR/vm-setup.log")"
[ "$(vm "$IP xfrm state | grep -c 'aead rfc4106(gcm(aes))'")" = 4 ] || fail "VM: 4 SAs"
log "VM: 4 rfc4106(gcm(aes)) transport SAs and 4 policies from the key file"


# ------------------------------------------------------------ counters
snap() {
	rm -f "$2"
	kill -USR1 "$1"
	wait_until 10 "counters from pid $1" test -s "$2"
	cp "$2" "$2.log"
}
jget() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d = d[k]
print(d)' "$1" "$2"; }
# The VM's `ip -s xfrm state`, parsed per SA: packets, replay, integrity (iproute2
# prints the SA's integrity_failed as "failed" on the stats line).
xfrm_state() { vm "$IP -s xfrm state" >"$DIR/xfrm-state.txt" || fail "VM: ip -s xfrm state"; }
# sa_field SPI packets|window|replay|integrity (from the last xfrm_state; window:
# packets refused as behind the replay window, replay: as seen already)
sa_field() {
	awk -v spi="$(printf '0x%08x' "$1")" -v want="$2" '
		/^src / { on = 0 } index($0, "spi " spi "(") { on = 1 }
		on && /lifetime current:/ { getline; sub(/\(packets\)/, "", $2); v["packets"] = $2 }
		on && /stats:/ { getline; v["window"] = $2; v["replay"] = $4; v["integrity"] = $6 }
		END { print v[want] }' "$DIR/xfrm-state.txt"
}
xfrm_stat_all() { vm cat /proc/net/xfrm_stat >"$DIR/xfrm_stat.txt" || fail "VM: xfrm_stat"; }
xstat() { awk -v k="$1" '$1 == k { print $2 }' "$DIR/xfrm_stat.txt"; }
icmp_unreach_mh() {
	ip netns exec "$NS_MH" awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) n[$i] = i; h = 1 }
		else print $(n["OutDestUnreachs"]) }' /proc/net/snmp
}
icmp_unreach_vm() {
	vm "awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) n[\$i] = i; h = 1 }" \
		"else print \$(n[\"OutDestUnreachs\"]) }' /proc/net/snmp"
}
balanced() {
	snap "$AGENT" "$DIR/mh.json"
	xfrm_state
	[ "$(jget "$DIR/mh.json" in_sa.packets)" = "$(sa_field $SPI_DOWN packets)" ] &&
		[ "$(jget "$DIR/mh.json" out_sa.packets)" = "$(sa_field $SPI_UP packets)" ]
}
agent_clean() {
	$PY - "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
bad = {k: v for k, v in d["in_sa"]["dropped"].items() if v}
bad.update({"out." + k: v for k, v in d["out_sa"]["refused"].items() if v})
for k in ("esp_tx_err", "raw_err", "tun_tx_err", "raw_drop_other"):
    if d.get(k):
        bad[k] = d[k]
if d["esp_tx"] != d["out_sa"]["packets"] or d["tun_tx"] != d["in_sa"]["packets"]:
    bad["identity"] = (d["esp_tx"], d["out_sa"]["packets"], d["tun_tx"], d["in_sa"]["packets"])
if bad:
    sys.exit("agent: %s" % bad)
PYEOF
}

# ------------------------------------------------------------ 1. good phase
ip netns exec "$NS_MH" $PY "$HERE/ping.py" -c 5 -i 0.1 -W 3 $FH >>"$DIR/ping.log" 2>&1 ||
	fail "ping mh -> VM through ESP"
vm ping -c 5 -W 3 $MH >>"$DIR/ping.log" 2>&1 || fail "ping VM -> mh through ESP"
log "ping both ways ok"

# xfer: VM -> mh (download), then mh -> VM (upload).
T1=$(date +%s.%N)
PORT=$((20000 + RANDOM % 20000))
ip netns exec "$NS_MH" $PY "$HERE/xfer.py" recv --bind $MH --port $PORT --timeout 60 \
	--result "$DIR/download-recv.json" >"$DIR/download-recv.log" 2>&1 &
RP=$!
PIDS+=("$RP")
listening() { ip netns exec "$NS_MH" ss -Hltn "sport = :$2" | grep -q .; }
wait_until 10 "xfer.py listening" listening "$NS_MH" $PORT
vm "nc $MH $PORT </data.bin" >"$DIR/download-send.log" 2>&1 || fail "download: nc in the VM"
wait "$RP" || fail "download: receiver failed"
[ "$(jget "$DIR/download-recv.json" sha256)" = "$SUM" ] || fail "download: sha256 differs"
[ "$(jget "$DIR/download-recv.json" bytes)" = $((1 << 20)) ] || fail "download: byte count"
log "download VM kernel -> agent: 1 MiB intact (sha256), $(jget "$DIR/download-recv.json" \
	seconds) s"
PORT=$((PORT + 1))
# nc_recv NAME PORT: in the VM, receive one connection into /tmp/NAME.bin.
# busybox nc -l alone half-closes at once (its stdin is /dev/null) and stays
# after the sender's FIN; with -e it becomes the program, a cat that ends at
# EOF: the connection closes once the file is whole, and the sender returns
# only then.
nc_recv() {
	vm "printf '#!/bin/sh\\nexec cat >/tmp/$1.bin\\n' >/tmp/$1.sh && chmod 755 /tmp/$1.sh &&" \
		"{ nc -l -p $2 -e /tmp/$1.sh >/tmp/$1.err 2>&1 & }"
}
nc_recv up $PORT || fail "upload: nc -l in the VM"
ip netns exec "$NS_MH" $PY "$HERE/xfer.py" send --host $FH --port $PORT --file "$FILE" \
	--timeout 60 --result "$DIR/upload-send.json" >"$DIR/upload-send.log" 2>&1 ||
	fail "upload: sender failed"
VMSUM=$(vm sha256sum /tmp/up.bin | cut -d' ' -f1)
[ "$VMSUM" = "$SUM" ] || fail "upload: sha256 in the VM $VMSUM, want $SUM"
log "upload agent -> VM kernel: 1 MiB intact (sha256 in the VM), $(jget \
	"$DIR/upload-send.json" seconds) s; both transfers $(awk -v a="$(date +%s.%N)" -v b="$T1" \
	'BEGIN { printf "%.1f", a - b }') s"

wait_until 20 "every ESP packet decrypted on the other side" balanced
UP=$(jget "$DIR/mh.json" out_sa.packets)
DOWN=$(jget "$DIR/mh.json" in_sa.packets)
[ "$UP" -gt 500 ] && [ "$DOWN" -gt 500 ] || fail "too few ESP packets ($UP, $DOWN)"
agent_clean "$DIR/mh.json" || fail "agent counters in the good phase"
xfrm_stat_all
NZ=$(awk '$2 != 0 { printf "%s=%s ", $1, $2 }' "$DIR/xfrm_stat.txt")
[ -z "$NZ" ] || fail "kernel xfrm_stat in the good phase: $NZ"
for s in $SPI_UP $SPI_DOWN; do
	for f in window replay integrity; do
		[ "$(sa_field $s $f)" = 0 ] || fail "SA $s: $f $(sa_field $s $f)"
	done
done
[ "$(icmp_unreach_mh)" = 0 ] || fail "mh sent ICMP unreachable"
[ "$(icmp_unreach_vm)" = 0 ] || fail "the VM sent ICMP unreachable"
log "ESP packets: mh->VM $UP (kernel SA $SPI_UP decrypted $(sa_field $SPI_UP packets))," \
	"VM->mh $DOWN (kernel SA $SPI_DOWN sent $(sa_field $SPI_DOWN packets), agent decrypted all)"
log "kernel at rest: all $(wc -l <"$DIR/xfrm_stat.txt") xfrm_stat counters 0; SA replay-window," \
	"replay, integrity_failed 0; agent: no drop; no ICMP unreachable"
cp "$DIR/xfrm-state.txt" "$DIR/xfrm-state-good.txt"

# ------------------------------------------------------------ 2. bytes
NRX=$(wc -l <"$DIR/mh-rx.hex")
[ "$NRX" = "$DOWN" ] || fail "agent dumped $NRX packets, decrypted $DOWN"
ip netns exec "$NS_MH" "$MH_LIFT" --check-reencrypt "$DIR/mh-rx.hex" --local $MH --peer $FH \
	--keys "$KEYS" >"$DIR/reenc.jsonl" || fail "agent re-encryption differs: $(grep -m3 false \
	"$DIR/reenc.jsonl")"
[ "$(grep -c '"equal":true' "$DIR/reenc.jsonl")" = "$NRX" ] || fail "re-encryption count"
log "byte for byte: all $NRX ESP packets of the kernel re-encrypted by the agent at their" \
	"seq and IV are identical"

# ------------------------------------------------------------ 3. adversary
# inject3 NS IFACE DST_MAC HEXFILE FORGED_SEQ: send at layer 2 (AF_PACKET, no
# routing, no xfrm) the file's last IPv4 ESP packet again (a replay inside the
# window), its first again (behind the window) and the last with FORGED_SEQ
# and its ICV's last bit flipped (a forgery): esp_peer.py inject's packets,
# in one process (scapy's import costs seconds on a loaded machine).
inject3() {
	ip netns exec "$1" $PY - "$2" "$3" "$4" "$5" >>"$DIR/inject.log" 2>&1 <<'PYEOF' ||
import socket, struct, sys
iface, mac, hexfile, forged = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
lines = [ln.strip() for ln in open(hexfile) if ln.strip()]
last, first = bytes.fromhex(lines[-1]), bytes.fromhex(lines[0])
fake = bytearray(last)
hl = (fake[0] & 15) * 4
fake[hl + 4:hl + 8] = struct.pack("!I", forged)
fake[-1] ^= 0x01
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
for p in (last, first, bytes(fake)):
    s.sendto(p, (iface, 0x0800, 0, 0, bytes.fromhex(mac.replace(":", ""))))
    print("sent", len(p), "seq", struct.unpack("!I", p[hl + 4:hl + 8])[0])
PYEOF
		fail "inject3 $*"
}
counts_mh() {
	snap "$AGENT" "$DIR/mh.json"
	$PY -c 'import json, sys; s = json.load(open(sys.argv[1]))["in_sa"]; d = s["dropped"]
print(d["replay"], d["too_old"], d["auth_fail"], s["packets"], s["rx_top"])' "$DIR/mh.json"
}
read -r r0 o0 a0 p0 top0 <<<"$(counts_mh)"
[ "$top0" -gt 70 ] || fail "the agent's window top $top0 is too low for a too-old replay"
# From the bridge's port toward mh: the kernel's own packets, replayed or forged.
inject3 "$NS_FH" "$V_FH" $MAC_MH "$DIR/mh-rx.hex" $((top0 + 5))
mh_moved() {
	read -r r1 o1 a1 p1 top1 <<<"$(counts_mh)"
	[ $((r1 + o1 + a1)) -ge $((r0 + o0 + a0 + 3)) ]
}
wait_until 10 "the agent counted the three injected packets" mh_moved
[ $((r1 - r0)) = 1 ] && [ $((o1 - o0)) = 1 ] && [ $((a1 - a0)) = 1 ] ||
	fail "agent: replay +$((r1 - r0)) too_old +$((o1 - o0)) auth_fail +$((a1 - a0)), want 1 1 1"
[ "$p1" = "$p0" ] && [ "$top1" = "$top0" ] || fail "agent: the window or count moved"
log "toward the agent: replay +1, too_old +1, auth_fail +1, nothing decrypted, window unmoved"

cp "$DIR/xfrm_stat.txt" "$DIR/xfrm_stat-0.txt"
xfrm_state
sp0=$(sa_field $SPI_UP packets)
sr0=$(sa_field $SPI_UP replay)
sw0=$(sa_field $SPI_UP window)
si0=$(sa_field $SPI_UP integrity)
# From mh toward the VM: the agent's packets, replayed or forged.
inject3 "$NS_MH" "$V_MH" $MAC_FH "$DIR/mh-tx.hex" $((UP + 5))
vm_moved() {
	xfrm_stat_all
	[ $(($(xstat XfrmInStateSeqError) + $(xstat XfrmInStateProtoError))) -ge 3 ]
}
wait_until 10 "the kernel counted the three injected packets" vm_moved
xfrm_state
DIFF=$(awk 'NR == FNR { a[$1] = $2; next } $2 != a[$1] { printf "%s +%d ", $1, $2 - a[$1] }' \
	"$DIR/xfrm_stat-0.txt" "$DIR/xfrm_stat.txt")
[ "$DIFF" = "XfrmInStateProtoError +1 XfrmInStateSeqError +2 " ] ||
	fail "kernel xfrm_stat moved by '$DIFF', want XfrmInStateProtoError +1 XfrmInStateSeqError +2"
[ "$(sa_field $SPI_UP packets)" = "$sp0" ] || fail "kernel SA decrypted an injected packet"
SR=$(($(sa_field $SPI_UP replay) - sr0))
SW=$(($(sa_field $SPI_UP window) - sw0))
SI=$(($(sa_field $SPI_UP integrity) - si0))
log "toward the kernel: xfrm_stat $DIFF(nothing else), SA $SPI_UP replay-window +$SW," \
	"replay +$SR, integrity_failed +$SI, packets unmoved ($sp0)"
[ "$SI" = 1 ] || fail "kernel SA integrity_failed +$SI, want +1"
[ $((SR + SW)) = 2 ] || fail "kernel SA replay-window +$SW replay +$SR, want 2 in all"
cp "$DIR/xfrm-state.txt" "$DIR/xfrm-state-adversary.txt"

ip netns exec "$NS_MH" $PY "$HERE/ping.py" -c 5 -i 0.1 -W 3 $FH >>"$DIR/ping.log" 2>&1 ||
	fail "ping mh -> VM after the injections"
vm ping -c 5 -W 3 $MH >>"$DIR/ping.log" 2>&1 || fail "ping VM -> mh after the injections"
[ "$(icmp_unreach_mh)" = 0 ] || fail "mh sent ICMP unreachable"
[ "$(icmp_unreach_vm)" = 0 ] || fail "the VM sent ICMP unreachable"
kill -0 "$AGENT" 2>/dev/null || fail "mh_lift died"
log "pings both ways still answered"

# ------------------------------------------------------------ 4. IPv6
cp "$DIR/xfrm_stat.txt" "$DIR/xfrm_stat-1.txt"
# ping.py is IPv4 only: busybox's ping (busybox-static is installed for the VM).
ip netns exec "$NS_MH" busybox ping -6 -c 3 -W 3 $FH6 >>"$DIR/ping.log" 2>&1 ||
	fail "ping6 mh -> VM"
vm ping -6 -c 3 -W 3 $MH6 >>"$DIR/ping.log" 2>&1 || fail "ping6 VM -> mh"
PORT=$((PORT + 1))
ip netns exec "$NS_MH" $PY "$HERE/esp_peer.py" xfer6 recv --bind $MH6 --port $PORT \
	>"$DIR/download6-recv.json" 2>"$DIR/download6-recv.log" &
RP=$!
PIDS+=("$RP")
wait_until 10 "xfer6 listening" listening "$NS_MH" $PORT
vm "nc $MH6 $PORT </data.bin" >"$DIR/download6-send.log" 2>&1 || fail "download6: nc in the VM"
wait "$RP" || fail "download6: receiver failed"
[ "$(jget "$DIR/download6-recv.json" sha256)" = "$SUM" ] || fail "download6: sha256 differs"
PORT=$((PORT + 1))
nc_recv up6 $PORT || fail "upload6: nc -l in the VM"
ip netns exec "$NS_MH" $PY "$HERE/esp_peer.py" xfer6 send --host $FH6 --port $PORT \
	--file "$FILE" >"$DIR/upload6-send.json" 2>"$DIR/upload6-send.log" || fail "upload6: sender"
[ "$(vm sha256sum /tmp/up6.bin | cut -d' ' -f1)" = "$SUM" ] || fail "upload6: sha256 in the VM"
balanced6() {
	snap "$AGENT6" "$DIR/mh6.json"
	xfrm_state
	[ "$(jget "$DIR/mh6.json" in_sa.packets)" = "$(sa_field $SPI6_DOWN packets)" ] &&
		[ "$(jget "$DIR/mh6.json" out_sa.packets)" = "$(sa_field $SPI6_UP packets)" ]
}
wait_until 20 "IPv6: every ESP packet decrypted on the other side" balanced6
UP6=$(jget "$DIR/mh6.json" out_sa.packets)
DOWN6=$(jget "$DIR/mh6.json" in_sa.packets)
[ "$UP6" -gt 500 ] && [ "$DOWN6" -gt 500 ] || fail "IPv6: too few ESP packets ($UP6, $DOWN6)"
agent_clean "$DIR/mh6.json" || fail "IPv6 agent counters"
xfrm_stat_all
cmp -s "$DIR/xfrm_stat-1.txt" "$DIR/xfrm_stat.txt" || fail "kernel xfrm_stat moved in the IPv6" \
	"phase: $(diff "$DIR/xfrm_stat-1.txt" "$DIR/xfrm_stat.txt" | grep '^>' | tr '\n' ' ')"
ip netns exec "$NS_MH" "$MH_LIFT" --check-reencrypt "$DIR/mh6-rx.hex" --local $MH6 \
	--peer $FH6 --keys "$KEYS" >"$DIR/reenc6.jsonl" || fail "IPv6 re-encryption differs"
[ "$(grep -c '"equal":true' "$DIR/reenc6.jsonl")" = "$DOWN6" ] || fail "IPv6 re-encryption count"
log "IPv6: ping both ways, 1 MiB each way intact; mh->VM $UP6, VM->mh $DOWN6 ESP packets, all" \
	"decrypted, no kernel error, byte-for-byte re-encryption"

echo "--- VM: ip -s xfrm state (end)" >&2
cat "$DIR/xfrm-state.txt" >&2
echo "--- VM: /proc/net/xfrm_stat (non-zero)" >&2
awk '$2 != 0' "$DIR/xfrm_stat.txt" >&2
log "PASS: agent ESP <-> Linux $(vm uname -r) ESP (QEMU, boot ${VM_BOOT_S} s): IPv4 $UP +" \
	"$DOWN packets, IPv6 $UP6 + $DOWN6, byte for byte; replayed and forged packets refused" \
	"and counted by both"
