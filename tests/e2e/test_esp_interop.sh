#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# test_esp_interop.sh MH_LIFT: the MH-LIFT agent's ESP against another ESP.
#
#  netns le-fh-*                                   netns le-mh-*
#  10.61.0.1 lef<pid> ========= veth ========= lem<pid> 10.61.0.2
#  fixed host's ESP:                               host TCP -> TUN let<pid> -> mh_lift
#   FH_ESP=kernel: Linux xfrm (ip xfrm state +      -> ESP via raw socket (SO_MARK 0x1e50,
#     policy, transport, rfc4106(gcm(aes)))            routed by `fwmark lookup main`)
#   FH_ESP=userspace: esp_peer.py (scapy's ESP)     ESP in: raw socket proto 50 -> TUN
#     over a TUN the same way
#
# One key file, lines of `ip xfrm state add` arguments, configures both ends
# (AES-128 one way, AES-256 the other). Phases:
#  1. good: ping both ways, a 1 MiB TCP transfer each way (Linux TCP, sha256 at
#     both ends); then the counters at rest: every ESP packet one end sent was
#     decrypted by the other (agent JSON vs `ip -s xfrm state` or the peer's
#     JSON), no error counter moved (agent's per-reason drops,
#     /proc/net/xfrm_stat), no ICMP unreachable from either host;
#  2. bytes: every ESP packet the peer sent, decrypted by the agent and
#     encrypted again by it at the same sequence number and IV, is identical
#     byte for byte (mh_lift --check-reencrypt); in userspace mode also the
#     reverse (scapy re-encrypts the agent's packets). The kernel's IV is
#     seqiv's (seq XOR a random per-SA value), so the kernel cannot be made to
#     encrypt at the agent's IV: toward the kernel the proof is the kernel's
#     decryption and its counters;
#  3. adversary: toward each side, injected at layer 2 from the other side's
#     veth (AF_PACKET: no routing, no xfrm): the last genuine packet again
#     (replay inside the window), the first one again (behind the window), and
#     a forged one (a fresh sequence number, so the ICV cannot match). Each is
#     refused and counted exactly once: agent replay/too_old/auth_fail; kernel
#     XfrmInStateSeqError +2 and XfrmInStateProtoError +1; the windows did not
#     move (ping still works both ways afterwards).
#
# FH_ESP=auto (default) uses the kernel when it can create an rfc4106 SA, else
# userspace, and says so. FH_ESP=kernel exits 77 (ctest: skipped) on a kernel
# without ESP/GCM: that half cannot run there.
set -euo pipefail

MH_LIFT=$(readlink -f "${1:?usage: test_esp_interop.sh MH_LIFT}")
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
FH_ESP=${FH_ESP:-auto}
BUDGET=${TB_BUDGET:-160}
T0=$(date +%s.%N)
TAG=$$$RANDOM
TAG=${TAG:0:8}
NS_FH=le-fh-$TAG
NS_MH=le-mh-$TAG
V_FH=lef$TAG
V_MH=lem$TAG
T_MH=let$TAG
T_FH=lep$TAG
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
T6_MH=le6$TAG
T6_FH=lq6$TAG
DIR=$(mktemp -d /tmp/le-esp.XXXXXX)
trap 'rm -rf "$DIR"' EXIT   # until cleanup (below) takes over
PIDS=()

log() {
	printf '[esp_interop %6.1fs] %s\n' \
		"$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN { print a - b }')" "$*" >&2
}
fail() {
	log "FAIL: $*"
	for f in "$DIR"/*.log; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
	done
	exit 1
}

cleanup() {
	local p
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
	ip netns del "le-pr-$TAG" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$DIR"
}
trap cleanup EXIT
trap 'fail "interrupted (budget ${BUDGET}s?)"' INT TERM
# The watchdog sleeps in 1 s steps so that killing it leaves nothing behind
# holding ctest's output pipe.
(
	end=$((SECONDS + BUDGET))
	while [ $SECONDS -lt $end ]; do sleep 1; done
	kill -TERM $$
) >/dev/null 2>&1 &
WATCHDOG=$!
PIDS+=("$WATCHDOG")

[ "$(id -u)" -eq 0 ] || fail "needs root (namespaces, raw sockets, xfrm)"
[ -x "$MH_LIFT" ] || fail "no mh_lift at $MH_LIFT"

# wait_until SECONDS DESCRIPTION command...: poll a condition with a deadline.
wait_until() {
	local secs=$1 what=$2 end
	shift 2
	end=$(($(date +%s%N) + secs * 1000000000))
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || fail "timed out after ${secs}s: $what"
		sleep 0.05
	done
}

# ------------------------------------------------------------ which ESP
kernel_has_esp() {
	local ok=0
	ip netns add "le-pr-$TAG"
	ip -n "le-pr-$TAG" xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x100 \
		mode transport aead 'rfc4106(gcm(aes))' 0x0000000000000000000000000000000000000000 \
		128 2>/dev/null || ok=1
	ip netns del "le-pr-$TAG"
	return $ok
}
if [ "$FH_ESP" != userspace ]; then
	if kernel_has_esp; then
		FH_ESP=kernel
	elif [ "$FH_ESP" = kernel ]; then
		log "SKIP: this kernel cannot create an rfc4106(gcm(aes)) ESP SA" \
			"(CONFIG_INET_ESP / CONFIG_CRYPTO_GCM off): the Linux-interop half cannot run here"
		exit 77
	else
		log "NOTE: the kernel has no ESP/GCM; the fixed host's ESP is scapy's (userspace)"
		FH_ESP=userspace
	fi
fi
log "fixed host ESP: $FH_ESP"

# ------------------------------------------------------------ keys (one source)
KEYS=$DIR/esp.keys
umask 077
cat >"$KEYS" <<EOF
# ip xfrm state add <line>   (both ends read this file)
src $MH dst $FH proto esp spi $SPI_UP mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6573702d75702d6b657921cafe0001 128
src $FH dst $MH proto esp spi $SPI_DOWN mode transport replay-window 64 aead 'rfc4106(gcm(aes))' 0x6c6966742d6573702d646f776e2d6b65792d3235362d626974732d6f6b212121cafe0002 128
src $MH6 dst $FH6 proto esp spi $SPI6_UP mode transport replay-window 128 aead 'rfc4106(gcm(aes))' 0x6c6966742d657370362d75702d6b6579cafe0003 128
src $FH6 dst $MH6 proto esp spi $SPI6_DOWN mode transport replay-window 128 aead 'rfc4106(gcm(aes))' 0x6c6966742d657370362d646f776e2d6b65792d3235362d626974732d6f6b2121cafe0004 128
EOF
umask 022
# The agent refuses what would configure the two ends differently or unsafely.
refused() {
	local what=$1 want=$2 out
	shift 2
	if out=$("$MH_LIFT" --tun lex0 --local $MH --peer $FH "$@" 2>&1); then
		fail "mh_lift accepted $what"
	fi
	grep -q -- "$want" <<<"$out" || fail "mh_lift on $what: '$out', want '$want'"
}
cp "$KEYS" "$DIR/open.keys"
chmod 644 "$DIR/open.keys"
refused "a key file others can read" "chmod 600" --keys "$DIR/open.keys"
LINE1=$(grep -m1 "^src $MH " "$KEYS")
LINE2=$(grep -m1 "^src $FH " "$KEYS")
refused "no replay window" "replay-window 32..1024 required" \
	--sa "${LINE1/replay-window 64 /}" --sa "$LINE2"
refused "tunnel mode" "only transport" --sa "${LINE1/transport/tunnel}" --sa "$LINE2"
refused "an 8-byte ICV" "only 128" --sa "${LINE1% 128} 64" --sa "$LINE2"
refused "--lift maybe" "on or off" --sa "$LINE1" --sa "$LINE2" --lift maybe
log "key lines: refused with a reason (mode, no replay window, tunnel, ICV, --lift maybe)"

# ------------------------------------------------------------ namespaces
ip netns add "$NS_FH"
ip netns add "$NS_MH"
for ns in "$NS_FH" "$NS_MH"; do
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0
done
ip link add "$V_FH" address $MAC_FH netns "$NS_FH" type veth peer name "$V_MH" \
	address $MAC_MH netns "$NS_MH"
ip -n "$NS_FH" addr add $FH/24 dev "$V_FH"
ip -n "$NS_MH" addr add $MH/24 dev "$V_MH"
for x in "$NS_FH:$V_FH" "$NS_MH:$V_MH"; do
	ip netns exec "${x%%:*}" ethtool -K "${x##*:}" tx off rx off tso off gso off gro off \
		>/dev/null 2>&1 || true
	ip -n "${x%%:*}" link set "${x##*:}" up
done
# IPv6 on the veths only (the TUNs of the IPv4 agents stay quiet).
ip netns exec "$NS_FH" sysctl -qw "net.ipv6.conf.$V_FH.disable_ipv6=0"
ip netns exec "$NS_MH" sysctl -qw "net.ipv6.conf.$V_MH.disable_ipv6=0"
ip -n "$NS_FH" addr add $FH6/64 dev "$V_FH" nodad
ip -n "$NS_MH" addr add $MH6/64 dev "$V_MH" nodad
# No ARP or ND in the counters' way.
ip -n "$NS_FH" neigh add $MH lladdr $MAC_MH dev "$V_FH" nud permanent
ip -n "$NS_MH" neigh add $FH lladdr $MAC_FH dev "$V_MH" nud permanent
ip -n "$NS_FH" neigh add $MH6 lladdr $MAC_MH dev "$V_FH" nud permanent
ip -n "$NS_MH" neigh add $FH6 lladdr $MAC_FH dev "$V_MH" nud permanent

tun_up() { ip -n "$1" link show "$2" 2>/dev/null | grep -q ',UP'; }
# tun_side NS TUN LOCAL PEER: route the host's packets to PEER into TUN, except
# those carrying MARK (the ESP endpoint's own), which take the main table.
tun_side() {
	local ns=$1 tun=$2 local=$3 peer=$4
	ip -n "$ns" rule add fwmark $MARK lookup main pref 100
	ip -n "$ns" rule add to "$peer" lookup 161 pref 110
	wait_until 10 "TUN $tun up in $ns" tun_up "$ns" "$tun"
	ip netns exec "$ns" sysctl -qw "net.ipv4.conf.$tun.rp_filter=0"
	ip -n "$ns" route add "$peer" dev "$tun" src "$local" table 161
}

# tun_side6 NS TUN LOCAL PEER: the same for IPv6.
tun_side6() {
	local ns=$1 tun=$2 local=$3 peer=$4
	wait_until 10 "TUN $tun up in $ns" tun_up "$ns" "$tun"
	ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$tun.router_solicitations=0" \
		"net.ipv6.conf.$tun.disable_ipv6=0"
	ip -n "$ns" -6 rule add fwmark $MARK lookup main pref 100
	ip -n "$ns" -6 rule add to "$peer" lookup 161 pref 110
	ip -n "$ns" -6 route add "$peer" dev "$tun" src "$local" table 161
}

# The agent on mh.
ip netns exec "$NS_MH" "$MH_LIFT" --tun "$T_MH" --mtu 1400 --local $MH --peer $FH \
	--keys "$KEYS" --mark $MARK --lift off --stats-json "$DIR/mh.json" \
	--dump-rx "$DIR/mh-rx.hex" --dump-tx "$DIR/mh-tx.hex" --dump-max 1000000 \
	>"$DIR/mh_lift.log" 2>&1 &
AGENT=$!
PIDS+=("$AGENT")
tun_side "$NS_MH" "$T_MH" $MH $FH
# Its IPv6 instance (one address family per agent).
ip netns exec "$NS_MH" "$MH_LIFT" --tun "$T6_MH" --mtu 1400 --local $MH6 --peer $FH6 \
	--keys "$KEYS" --mark $MARK --lift off --stats-json "$DIR/mh6.json" \
	--dump-rx "$DIR/mh6-rx.hex" --dump-max 1000000 >"$DIR/mh_lift6.log" 2>&1 &
AGENT6=$!
PIDS+=("$AGENT6")
tun_side6 "$NS_MH" "$T6_MH" $MH6 $FH6

# The fixed host's ESP.
if [ "$FH_ESP" = kernel ]; then
	grep -v '^#' "$KEYS" | while read -r line; do
		eval "ip -n $NS_FH xfrm state add $line"
	done
	ip -n "$NS_FH" xfrm policy add src $FH/32 dst $MH/32 dir out \
		tmpl src $FH dst $MH proto esp mode transport
	ip -n "$NS_FH" xfrm policy add src $MH/32 dst $FH/32 dir in \
		tmpl src $MH dst $FH proto esp mode transport
	ip -n "$NS_FH" xfrm policy add src $FH6/128 dst $MH6/128 dir out \
		tmpl src $FH6 dst $MH6 proto esp mode transport
	ip -n "$NS_FH" xfrm policy add src $MH6/128 dst $FH6/128 dir in \
		tmpl src $MH6 dst $FH6 proto esp mode transport
else
	ip netns exec "$NS_FH" $PY "$HERE/esp_peer.py" run --tun "$T_FH" --local $FH --peer $MH \
		--keys "$KEYS" --mark $MARK --stats-json "$DIR/fh.json" >"$DIR/esp_peer.log" 2>&1 &
	PEER=$!
	PIDS+=("$PEER")
	wait_until 20 "esp_peer up" grep -q "esp_peer: up" "$DIR/esp_peer.log"
	ip -n "$NS_FH" link set "$T_FH" mtu 1400 up
	tun_side "$NS_FH" "$T_FH" $FH $MH
	# IPv6: scapy's side is IPv4 only here; a second mh_lift stands in. This
	# exercises the agent's IPv6 path (raw socket, rebuilt header), it is not
	# an interop check.
	ip netns exec "$NS_FH" "$MH_LIFT" --tun "$T6_FH" --mtu 1400 --local $FH6 --peer $MH6 \
		--keys "$KEYS" --mark $MARK --lift off --stats-json "$DIR/fh6.json" \
		>"$DIR/fh_lift6.log" 2>&1 &
	PEER6=$!
	PIDS+=("$PEER6")
	tun_side6 "$NS_FH" "$T6_FH" $FH6 $MH6
fi
kill -0 "$AGENT" 2>/dev/null || fail "mh_lift exited"

# ------------------------------------------------------------ counters
# snap PID FILE: ask for a fresh JSON (SIGUSR1) and wait for it.
snap() {
	rm -f "$2"
	kill -USR1 "$1"
	wait_until 10 "counters from pid $1" test -s "$2"
	cp "$2" "$2.log"    # the last counters, shown by fail()
}
jget() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d = d[k]
print(d)' "$1" "$2"; }
# The kernel's packet count of an SA ("lifetime current: B(bytes), P(packets)").
xfrm_pkts() {
	ip -n "$NS_FH" -s xfrm state | awk -v spi="$(printf '0x%08x' "$1")" '
		$0 ~ "spi " spi { on = 1 } on && /lifetime current:/ { getline; sub(/\(packets\)/, "", $2);
		print $2; exit }'
}
xfrm_stat() { ip netns exec "$NS_FH" awk -v k="$1" '$1 == k { print $2 }' /proc/net/xfrm_stat; }
xfrm_errors() { ip netns exec "$NS_FH" awk '$2 != 0 { printf "%s=%s ", $1, $2 }' /proc/net/xfrm_stat; }
icmp_unreach() {
	ip netns exec "$1" awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) n[$i] = i; h = 1 }
		else print $(n["OutDestUnreachs"]) }' /proc/net/snmp
}
# Packets sent by the fixed host's ESP (down) and decrypted by it (up).
fh_sent() {
	if [ "$FH_ESP" = kernel ]; then xfrm_pkts $SPI_DOWN; else jget "$DIR/fh.json" encrypted; fi
}
fh_decrypted() {
	if [ "$FH_ESP" = kernel ]; then xfrm_pkts $SPI_UP; else jget "$DIR/fh.json" decrypted; fi
}
snap_all() {
	snap "$AGENT" "$DIR/mh.json"
	[ "$FH_ESP" = kernel ] || snap "$PEER" "$DIR/fh.json"
}
# Both directions balanced: all sent ESP was decrypted on the other side.
balanced() {
	snap_all
	[ "$(jget "$DIR/mh.json" in_sa.packets)" = "$(fh_sent)" ] &&
		[ "$(jget "$DIR/mh.json" out_sa.packets)" = "$(fh_decrypted)" ]
}

# ------------------------------------------------------------ 1. good phase
ping_ok() {
	ip netns exec "$1" $PY "$HERE/ping.py" -c 5 -i 0.1 -W 3 "$2" >>"$DIR/ping.log" 2>&1
}
ping_ok "$NS_MH" $FH || fail "ping mh -> fh through ESP"
ping_ok "$NS_FH" $MH || fail "ping fh -> mh through ESP"
log "ping both ways ok"

FILE=$DIR/data.bin
$PY -c 'import random, sys; random.seed(8); sys.stdout.buffer.write(random.randbytes(1 << 20))' \
	>"$FILE"
SUM=$(sha256sum "$FILE" | cut -d' ' -f1)
# xfer FROM_NS TO_NS TO_ADDR NAME
xfer() {
	local port=$((20000 + RANDOM % 20000))
	ip netns exec "$2" $PY "$HERE/xfer.py" recv --bind "$3" --port $port --timeout 60 \
		--result "$DIR/$4-recv.json" >"$DIR/$4-recv.log" 2>&1 &
	local rp=$!
	PIDS+=("$rp")
	ip netns exec "$1" $PY "$HERE/xfer.py" send --host "$3" --port $port --file "$FILE" \
		--timeout 60 --result "$DIR/$4-send.json" >"$DIR/$4-send.log" 2>&1 ||
		fail "$4: sender failed"
	wait "$rp" || fail "$4: receiver failed"
	[ "$(jget "$DIR/$4-recv.json" sha256)" = "$SUM" ] || fail "$4: sha256 differs at the receiver"
	[ "$(jget "$DIR/$4-recv.json" bytes)" = $((1 << 20)) ] || fail "$4: byte count"
	log "$4: 1 MiB intact (sha256), $(jget "$DIR/$4-recv.json" seconds) s"
}
xfer "$NS_FH" "$NS_MH" $MH download
xfer "$NS_MH" "$NS_FH" $FH upload

wait_until 15 "every ESP packet decrypted on the other side" balanced
UP=$(jget "$DIR/mh.json" out_sa.packets)
DOWN=$(jget "$DIR/mh.json" in_sa.packets)
log "ESP packets: mh->fh $UP (fixed host decrypted $(fh_decrypted)), fh->mh $DOWN" \
	"(agent decrypted; fixed host sent $(fh_sent))"
[ "$UP" -gt 500 ] && [ "$DOWN" -gt 500 ] || fail "too few ESP packets ($UP, $DOWN)"
$PY - "$DIR/mh.json" <<'EOF' || fail "agent counters in the good phase"
import json, sys
d = json.load(open(sys.argv[1]))
bad = {k: v for k, v in d["in_sa"]["dropped"].items() if v}
bad.update({"out." + k: v for k, v in d["out_sa"]["refused"].items() if v})
for k in ("esp_tx_err", "raw_err", "tun_tx_err", "raw_drop_other", "dummy"):
    if d[k]:
        bad[k] = d[k]
if d["esp_tx"] != d["out_sa"]["packets"] or d["tun_tx"] != d["in_sa"]["packets"]:
    bad["identity"] = (d["esp_tx"], d["out_sa"]["packets"], d["tun_tx"], d["in_sa"]["packets"])
if bad:
    sys.exit("agent: %s" % bad)
EOF
if [ "$FH_ESP" = kernel ]; then
	[ -z "$(xfrm_errors)" ] || fail "kernel xfrm errors in the good phase: $(xfrm_errors)"
else
	$PY - "$DIR/fh.json" <<'EOF' || fail "peer counters in the good phase"
import json, sys
d = json.load(open(sys.argv[1]))
bad = {k: d[k] for k in ("auth_fail", "replay", "too_old", "bad_seq", "bad_spi", "other") if d[k]}
if bad:
    sys.exit("esp_peer: %s" % bad)
EOF
fi
for ns in "$NS_MH" "$NS_FH"; do
	[ "$(icmp_unreach "$ns")" = 0 ] || fail "$ns sent ICMP unreachable: $(icmp_unreach "$ns")"
done
log "good phase counters: no errors, every packet accounted for"
if [ "$FH_ESP" = kernel ]; then
	# The mobile host's kernel has ESP too but no state for these SAs: it drops
	# its copy of each packet (docs/lift.md). Logged, not asserted.
	log "mh kernel: XfrmInNoStates $(ip netns exec "$NS_MH" awk '$1 == "XfrmInNoStates" \
		{ print $2 }' /proc/net/xfrm_stat), agent raw_rx $(jget "$DIR/mh.json" raw_rx)"
fi

# ------------------------------------------------------------ 2. bytes
NRX=$(wc -l <"$DIR/mh-rx.hex")
[ "$NRX" = "$DOWN" ] || fail "agent dumped $NRX packets, decrypted $DOWN"
ip netns exec "$NS_MH" "$MH_LIFT" --check-reencrypt "$DIR/mh-rx.hex" --local $MH --peer $FH \
	--keys "$KEYS" >"$DIR/reenc.jsonl" || fail "agent re-encryption differs: $(grep -m3 false \
	"$DIR/reenc.jsonl")"
[ "$(grep -c '"equal":true' "$DIR/reenc.jsonl")" = "$NRX" ] || fail "re-encryption count"
log "byte for byte: all $NRX ESP packets of the fixed host ($FH_ESP) re-encrypted by the" \
	"agent at their seq and IV are identical"
if [ "$FH_ESP" = userspace ]; then
	head -n 300 "$DIR/mh-tx.hex" >"$DIR/mh-tx-head.hex"
	$PY "$HERE/esp_peer.py" check-reencrypt --local $FH --peer $MH --keys "$KEYS" \
		"$DIR/mh-tx-head.hex" >"$DIR/reenc-peer.jsonl" 2>"$DIR/reenc-peer.log" ||
		fail "scapy's re-encryption of the agent's packets differs"
	log "byte for byte: the agent's first 300 ESP packets re-encrypted by scapy are identical"
fi

# ------------------------------------------------------------ 3. adversary
# inject NS IFACE DST_MAC HEXFILE ARGS...
inject() {
	local ns=$1 ifc=$2 mac=$3 hex=$4
	shift 4
	ip netns exec "$ns" $PY "$HERE/esp_peer.py" inject --iface "$ifc" --dst-mac "$mac" "$@" \
		"$hex" >>"$DIR/inject.log" 2>&1 || fail "inject $*"
}
counts_mh() {
	snap "$AGENT" "$DIR/mh.json"
	echo "$(jget "$DIR/mh.json" in_sa.dropped.replay) $(jget "$DIR/mh.json" \
		in_sa.dropped.too_old) $(jget "$DIR/mh.json" in_sa.dropped.auth_fail)" \
		"$(jget "$DIR/mh.json" in_sa.packets) $(jget "$DIR/mh.json" in_sa.rx_top)"
}
counts_fh() {
	if [ "$FH_ESP" = kernel ]; then
		echo "$(xfrm_stat XfrmInStateSeqError) $(xfrm_stat XfrmInStateProtoError)" \
			"$(xfrm_pkts $SPI_UP)"
	else
		snap "$PEER" "$DIR/fh.json"
		echo "$(($(jget "$DIR/fh.json" replay) + $(jget "$DIR/fh.json" too_old)))" \
			"$(jget "$DIR/fh.json" auth_fail) $(jget "$DIR/fh.json" decrypted)" \
			"$(jget "$DIR/fh.json" replay) $(jget "$DIR/fh.json" too_old)"
	fi
}

read -r r0 o0 a0 p0 top0 <<<"$(counts_mh)"
[ "$top0" -gt 70 ] || fail "the agent's window top $top0 is too low for a too-old replay"
inject "$NS_FH" "$V_FH" $MAC_MH "$DIR/mh-rx.hex" --line -1            # replay, in window
inject "$NS_FH" "$V_FH" $MAC_MH "$DIR/mh-rx.hex" --line 0             # replay, too old
inject "$NS_FH" "$V_FH" $MAC_MH "$DIR/mh-rx.hex" --line -1 --seq $((top0 + 5)) --flip-icv
mh_moved() {
	read -r r1 o1 a1 p1 top1 <<<"$(counts_mh)"
	[ $((r1 + o1 + a1)) -ge $((r0 + o0 + a0 + 3)) ]
}
wait_until 10 "the agent counted the three injected packets" mh_moved
[ $((r1 - r0)) = 1 ] && [ $((o1 - o0)) = 1 ] && [ $((a1 - a0)) = 1 ] ||
	fail "agent: replay +$((r1 - r0)) too_old +$((o1 - o0)) auth_fail +$((a1 - a0)), want 1 1 1"
[ "$p1" = "$p0" ] && [ "$top1" = "$top0" ] || fail "agent: the window or count moved ($p0 -> $p1," \
	"top $top0 -> $top1)"
log "toward the agent: replay +1, too_old +1, auth_fail +1, nothing decrypted, window unmoved"

read -r fs0 fp0 fd0 _ <<<"$(counts_fh)"
inject "$NS_MH" "$V_MH" $MAC_FH "$DIR/mh-tx.hex" --line -1
inject "$NS_MH" "$V_MH" $MAC_FH "$DIR/mh-tx.hex" --line 0
inject "$NS_MH" "$V_MH" $MAC_FH "$DIR/mh-tx.hex" --line -1 --seq $((UP + 5)) --flip-icv
fh_moved() {
	read -r fs1 fp1 fd1 _ <<<"$(counts_fh)"
	[ $((fs1 + fp1)) -ge $((fs0 + fp0 + 3)) ]
}
wait_until 10 "the fixed host counted the three injected packets" fh_moved
[ $((fs1 - fs0)) = 2 ] && [ $((fp1 - fp0)) = 1 ] && [ "$fd1" = "$fd0" ] ||
	fail "fixed host ($FH_ESP): seq errors +$((fs1 - fs0)) (want 2), auth +$((fp1 - fp0))" \
		"(want 1), decrypted $fd0 -> $fd1"
if [ "$FH_ESP" = kernel ]; then
	log "toward the kernel: XfrmInStateSeqError +2, XfrmInStateProtoError +1, nothing decrypted"
	ip -n "$NS_FH" -s xfrm state >"$DIR/xfrm-state.txt"
else
	log "toward esp_peer: replay + too_old +2, auth_fail +1, nothing decrypted"
fi

ping_ok "$NS_MH" $FH || fail "ping mh -> fh after the injections"
ping_ok "$NS_FH" $MH || fail "ping fh -> mh after the injections"
for ns in "$NS_MH" "$NS_FH"; do
	[ "$(icmp_unreach "$ns")" = 0 ] || fail "$ns sent ICMP unreachable"
done
kill -0 "$AGENT" 2>/dev/null || fail "mh_lift died"

# ------------------------------------------------------------ 4. IPv6
# The kernel's error counters now hold the injections above: compare to this.
[ "$FH_ESP" = kernel ] && XE_BEFORE6=$(xfrm_errors)
xfer6() {
	local port=$((20000 + RANDOM % 20000))
	ip netns exec "$2" $PY "$HERE/esp_peer.py" xfer6 recv --bind "$3" --port $port \
		>"$DIR/$4-recv.json" 2>"$DIR/$4-recv.log" &
	local rp=$!
	PIDS+=("$rp")
	ip netns exec "$1" $PY "$HERE/esp_peer.py" xfer6 send --host "$3" --port $port \
		--file "$FILE" >"$DIR/$4-send.json" 2>"$DIR/$4-send.log" || fail "$4: sender failed"
	wait "$rp" || fail "$4: receiver failed"
	[ "$(jget "$DIR/$4-recv.json" sha256)" = "$SUM" ] || fail "$4: sha256 differs"
	log "$4: 1 MiB intact (sha256)"
}
xfer6 "$NS_FH" "$NS_MH" $MH6 download6
xfer6 "$NS_MH" "$NS_FH" $FH6 upload6
fh6_sent() {
	if [ "$FH_ESP" = kernel ]; then xfrm_pkts $SPI6_DOWN; else jget "$DIR/fh6.json" out_sa.packets; fi
}
fh6_decrypted() {
	if [ "$FH_ESP" = kernel ]; then xfrm_pkts $SPI6_UP; else jget "$DIR/fh6.json" in_sa.packets; fi
}
balanced6() {
	snap "$AGENT6" "$DIR/mh6.json"
	[ "$FH_ESP" = kernel ] || snap "$PEER6" "$DIR/fh6.json"
	[ "$(jget "$DIR/mh6.json" in_sa.packets)" = "$(fh6_sent)" ] &&
		[ "$(jget "$DIR/mh6.json" out_sa.packets)" = "$(fh6_decrypted)" ]
}
wait_until 15 "IPv6: every ESP packet decrypted on the other side" balanced6
UP6=$(jget "$DIR/mh6.json" out_sa.packets)
DOWN6=$(jget "$DIR/mh6.json" in_sa.packets)
[ "$UP6" -gt 500 ] && [ "$DOWN6" -gt 500 ] || fail "IPv6: too few ESP packets ($UP6, $DOWN6)"
$PY - "$DIR/mh6.json" <<'EOF' || fail "IPv6 agent counters"
import json, sys
d = json.load(open(sys.argv[1]))
bad = {k: v for k, v in d["in_sa"]["dropped"].items() if v}
bad.update({"out." + k: v for k, v in d["out_sa"]["refused"].items() if v})
for k in ("esp_tx_err", "raw_err", "tun_tx_err", "raw_drop_other"):
    if d[k]:
        bad[k] = d[k]
if bad:
    sys.exit("agent (IPv6): %s" % bad)
EOF
if [ "$FH_ESP" = kernel ]; then
	[ "$(xfrm_errors)" = "$XE_BEFORE6" ] ||
		fail "kernel xfrm errors in the IPv6 phase: $XE_BEFORE6 -> $(xfrm_errors)"
fi
ip netns exec "$NS_MH" "$MH_LIFT" --check-reencrypt "$DIR/mh6-rx.hex" --local $MH6 \
	--peer $FH6 --keys "$KEYS" >"$DIR/reenc6.jsonl" || fail "IPv6 re-encryption differs"
[ "$(grep -c '"equal":true' "$DIR/reenc6.jsonl")" = "$DOWN6" ] || fail "IPv6 re-encryption count"
if [ "$FH_ESP" = kernel ]; then WHO6=kernel; else WHO6="mh_lift as the fixed host"; fi
log "IPv6 ($WHO6): mh->fh $UP6, fh->mh $DOWN6 ESP packets, all decrypted, no errors," \
	"byte-for-byte re-encryption"

log "PASS ($FH_ESP): ESP interop both ways, $UP + $DOWN packets, byte-for-byte," \
	"forged and replayed packets refused on both sides; IPv6 $UP6 + $DOWN6 packets"
