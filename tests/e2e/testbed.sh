# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: BSD-3-Clause
#
# testbed.sh: a sourceable library that builds the satgw end-to-end testbed
# out of network namespaces and veth pairs, runs satgw in it on net_af_packet,
# and tears everything down again (also on failure, Ctrl-C and SIGTERM).
#
#   netns fh (server, Linux TCP)          netns gw (satgw)                 netns mh (client)
#   fh0 10.10.0.1/24 ---veth--- terr0 [net_af_packet0]  satgw  [net_af_packet1] sat0 ---veth--- mh0
#
#   routed:      mh0 10.20.1.1/24; fh routes 10.20.1.0/24 via 10.10.0.254 and mh routes
#                10.10.0.0/24 via 10.20.1.254; both gateway addresses are static (permanent)
#                neighbours whose MAC is satgw's veth (terr0 / sat0). satgw rewrites MACs with
#                next hops carrying the fh0 and mh0 MACs.
#   transparent: mh0 10.10.0.2/24 and 10.10.0.3/24 on fh's subnet; satgw forwards every frame
#                to the peer port untouched, ARP crosses it.
#
#   chain (three boxes, DESIGN.md's testbed; each satgw in its own namespace):
#   fh0 --veth-- terr0 [hub] sat0 --veth-- hub0 [emu] term0 --veth-- sat0 [term] lan0 --veth-- mh0
#                routed like `routed`: fh and mh reach each other through static neighbours
#                (fh's gateway = the hub's terr0, mh's gateway = the terminal's lan0); the hub
#                forwards to the terminal's sat0 MAC and the terminal to the hub's sat0 MAC
#                (next hops; the emulator passes frames untouched). Boxes are started with
#                tb_box_start hub|emu|term POLICY [LCORES], each with its own --file-prefix
#                ($TB_PREFIX-BOX), log, and stats JSON.
#
# Usage (from a test script, which should `set -euo pipefail`):
#   source testbed.sh
#   tb_init /path/to/satgw          # root check, names, work dir, traps
#   tb_topology routed              # or transparent
#   tb_satgw_start policy.yaml 0    # lcores "0" or "0-1"; waits until telemetry answers
#   tb_ns fh ping -c 3 10.20.1.1    # run in a namespace (fh, gw, mh)
#   tb_tel /satgw/stats             # one telemetry command, JSON of its value
#   tb_satgw_stop                   # SIGINT; TB_SATGW_RC, stats in $TB_STATS_JSON
#   tb_pass                         # prints PASS and the time taken
# Everything is removed by the EXIT trap; set TB_KEEP=1 to keep the work dir.
#
# Chain (test_geo_chain.sh):
#   tb_topology chain
#   tb_box_start emu policies/chain-emulator-geo.yaml 1   # one lcore each; emu on the other core
#   tb_box_start hub policies/chain-hub.yaml 0
#   tb_box_start term policies/chain-terminal.yaml 0
#   tb_box_tel emu /satgw/link                            # telemetry of one box
#   tb_box_stop emu                                       # TB_BOX_RC[emu], $(tb_box_json emu)
#   tb_chain_check_wire                                   # every port against the kernel's veths
#   tb_boxes_stop hub term                                # several boxes at once
#   tb_wait_path fh 10.20.1.1 15                          # until an echo crosses (a satlink
#                                                         # session is up)
#   tb_xfer_timed fh mh 10.20.1.1 FILE 12                 # a 12 s download, checked against the
#                                                         # sha256 of the file's first bytes
#
# Every name carries a per-run suffix (the shell's pid and a random number),
# so parallel or repeated runs never collide.

TB_E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB_PY=/usr/bin/python3          # Debian's python3-scapy loads only here

# MACs are fixed: each veth pair is its own L2 segment inside private
# namespaces, so fixed addresses cannot collide across runs, and policies can
# name them statically.
TB_MAC_FH=02:00:00:00:01:01     # fh0, the server's interface
TB_MAC_GT=02:00:00:00:01:fe     # terr0, satgw's terrestrial port (net_af_packet0)
TB_MAC_MH=02:00:00:00:02:01     # mh0, the client's interface
TB_MAC_GS=02:00:00:00:02:fe     # sat0, satgw's satellite port (net_af_packet1)
# Chain topology: four L2 segments. fh0 and mh0 keep their MACs; the hub's terr0
# keeps TB_MAC_GT and the terminal's lan0 takes TB_MAC_GS (the gateways' MACs).
TB_MAC_HS=02:00:00:00:03:01     # hub's sat0 (net_af_packet1), towards the emulator
TB_MAC_EH=02:00:00:00:03:fe     # emulator's hub0 (net_af_packet0, port hub-side)
TB_MAC_ET=02:00:00:00:04:fe     # emulator's term0 (net_af_packet1, port term-side)
TB_MAC_TS=02:00:00:00:04:01     # terminal's sat0 (net_af_packet0), from the emulator
TB_MAC_TL=$TB_MAC_GS            # terminal's lan0 (net_af_packet1): mh's gateway

TB_IP_FH=10.10.0.1
TB_IP_MH=10.20.1.1              # routed mode
TB_GW_FH=10.10.0.254            # fh's gateway: neighbour entry -> terr0's MAC
TB_GW_MH=10.20.1.254            # mh's gateway: neighbour entry -> sat0's MAC
TB_IP_MH_T=10.10.0.2            # transparent mode
TB_IP_MH_T2=10.10.0.3           # transparent mode, second address (second terminal)

TB_NAMESPACES=()
TB_BOXES=(hub emu term)         # chain topology: the three satgw boxes
declare -gA TB_BOX_PID=() TB_BOX_RC=()
TB_BG_PIDS=()
TB_SATGW_PID=
TB_SATGW_RC=
TB_HP_ORIG=
TB_HP_MOUNTED=

tb_log() { printf '[%s %6.1fs] %s\n' "${TB_NAME:-e2e}" "$(tb_elapsed)" "$*" >&2; }

tb_elapsed() {
	local now
	now=$(date +%s.%N)
	awk -v a="$now" -v b="${TB_T0:-$now}" 'BEGIN { printf "%.1f", a - b }'
}

tb_fail() {
	printf '[%s] FAIL: %s\n' "${TB_NAME:-e2e}" "$*" >&2
	exit 1
}

# tb_check COND_DESCRIPTION command...: run a command, fail the test with the description if it fails.
tb_check() {
	local what=$1
	shift
	if ! "$@"; then
		tb_fail "$what"
	fi
}

tb_require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		tb_fail "end-to-end tests need root (network namespaces, veth, af_packet): run them as root (sudo ctest -L e2e)"
	fi
}

tb_require_tools() {
	local t
	for t in ip ethtool iperf3 "$TB_PY"; do
		command -v "$t" >/dev/null 2>&1 || tb_fail "missing tool: $t (apt-get install iproute2 ethtool iperf3 python3)"
	done
}

# tb_init SATGW_BINARY: checks, names, work directory, traps.
tb_init() {
	TB_SATGW=${1:-}
	TB_NAME=${TB_NAME:-$(basename "${0%.sh}")}
	TB_T0=$(date +%s.%N)
	tb_require_root
	tb_require_tools
	if [ -n "$TB_SATGW" ]; then
		[ -x "$TB_SATGW" ] || tb_fail "satgw binary not found or not executable: '$TB_SATGW'"
		TB_SATGW=$(readlink -f "$TB_SATGW")
	fi
	TB_ID="$$-$(printf '%04x' $((RANDOM)))"
	TB_NS_FH="sgwe2e-fh-$TB_ID"
	TB_NS_GW="sgwe2e-gw-$TB_ID"
	TB_NS_MH="sgwe2e-mh-$TB_ID"
	TB_NS_HUB="sgwe2e-hub-$TB_ID"   # chain topology only
	TB_NS_EMU="sgwe2e-emu-$TB_ID"
	TB_NS_TERM="sgwe2e-term-$TB_ID"
	TB_PREFIX="sgwe2e-$TB_ID"
	TB_DIR=$(mktemp -d "/tmp/satgw-e2e-$TB_NAME.XXXXXX")
	TB_SATGW_LOG="$TB_DIR/satgw.log"
	TB_STATS_JSON="$TB_DIR/stats.json"
	trap tb__on_exit EXIT
	trap 'tb__on_signal INT 130' INT
	trap 'tb__on_signal TERM 143' TERM
	tb__sweep_stale
	tb__watchdog "${TB_BUDGET:-150}"
	tb_log "work dir $TB_DIR, namespaces $TB_NS_FH $TB_NS_GW $TB_NS_MH"
}

# Namespaces left by an earlier run that was killed outright (SIGKILL, e.g. a
# ctest timeout, gives no chance to clean up): their owner pid is gone. Every
# test names them TAG-ROLE-PID-HEX (TAG sgwe2e, or the test's own: xc, sf, ...;
# its DPDK prefix TAG-PID-HEX), so the sweep knows them all by that shape.
tb__sweep_stale() {
	local ns tag owner id pid
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' |
		grep -E '^[a-z0-9]+-(fh|gw|mh|hub|emu|term|termb|mhb|br)-[0-9]+-[0-9a-f]{4}$'); do
		tag=$(echo "$ns" | cut -d- -f1)
		owner=$(echo "$ns" | cut -d- -f3)
		id=$(echo "$ns" | cut -d- -f3-4)
		if ! kill -0 "$owner" 2>/dev/null; then
			for pid in $(ip netns pids "$ns" 2>/dev/null); do
				kill -KILL "$pid" 2>/dev/null || true
			done
			ip netns del "$ns" 2>/dev/null || true
			rm -rf "/var/run/dpdk/$tag-$id" "/var/run/dpdk/$tag-$id"-* 2>/dev/null || true
			tb_log "removed stale namespace $ns (its run, pid $owner, is gone)"
		fi
	done
}

# A time budget for the whole run: past it the script gets SIGTERM and its trap
# tears everything down (before ctest's TIMEOUT, which kills without a trap).
tb__watchdog() {
	local budget=$1 me=$$
	[ "$budget" -gt 0 ] 2>/dev/null || return 0
	(
		exec >/dev/null 2>&1
		sleep "$budget" &
		s=$!
		trap 'kill $s 2>/dev/null; exit 0' TERM
		wait "$s" || exit 0
		echo "$budget" >"$TB_DIR/.budget-exceeded"
		kill -TERM "$me"
		# bash runs its trap only once its foreground command returns: end that
		# command (the test's own children, by pid; not this watchdog).
		sleep 1
		for c in $(ps -o pid= --ppid "$me"); do
			[ "$c" = "$BASHPID" ] || kill -TERM "$c" 2>/dev/null
		done
	) &
	TB_BG_PIDS+=("$!")
}

tb__on_signal() {
	trap - INT TERM
	tb_log "caught SIG$1: tearing down"
	exit "$2"
}

tb__on_exit() {
	local rc=$? i
	trap - EXIT INT TERM
	set +e
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ] && [ -n "${TB_SATGW_LOG:-}" ] && [ -s "$TB_SATGW_LOG" ]; then
		echo "---- satgw log (last 40 lines of $TB_SATGW_LOG) ----" >&2
		tail -n 40 "$TB_SATGW_LOG" >&2
		echo "----" >&2
	fi
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ] && [ "${TB_MODE:-}" = chain ]; then
		for i in "${TB_BOXES[@]}"; do
			[ -s "$TB_DIR/satgw-$i.log" ] || continue
			echo "---- satgw $i log (last 25 lines of $TB_DIR/satgw-$i.log) ----" >&2
			tail -n 25 "$TB_DIR/satgw-$i.log" >&2
		done
		echo "----" >&2
	fi
	tb_cleanup
	if [ -n "${TB_DIR:-}" ] && [ -e "$TB_DIR/.budget-exceeded" ]; then
		rc=1
		echo "[${TB_NAME:-e2e}] FAILED: time budget of ${TB_BUDGET:-150} s exceeded (TB_BUDGET); testbed removed, logs kept in $TB_DIR" >&2
	elif [ "$rc" -eq 130 ] || [ "$rc" -eq 143 ]; then
		echo "[${TB_NAME:-e2e}] interrupted after $(tb_elapsed) s; testbed removed, logs kept in ${TB_DIR:-?}" >&2
	elif [ "$rc" -ne 0 ]; then
		echo "[${TB_NAME:-e2e}] FAILED (exit $rc) after $(tb_elapsed) s; logs kept in ${TB_DIR:-?}" >&2
	elif [ "${TB_KEEP:-0}" = 1 ]; then
		echo "[${TB_NAME:-e2e}] work dir kept: $TB_DIR" >&2
	elif [ -n "${TB_DIR:-}" ] && [ -d "$TB_DIR" ]; then
		rm -rf "$TB_DIR"
	fi
	exit "$rc"
}

# Idempotent: stops what this run started and deletes what it created.
tb_cleanup() {
	local pid ns i
	set +e
	if [ -n "$TB_SATGW_PID" ] && kill -0 "$TB_SATGW_PID" 2>/dev/null; then
		kill -INT "$TB_SATGW_PID" 2>/dev/null
		for i in $(seq 1 50); do
			tb__alive "$TB_SATGW_PID" || break
			sleep 0.1
		done
		tb__alive "$TB_SATGW_PID" && kill -KILL "$TB_SATGW_PID" 2>/dev/null
		wait "$TB_SATGW_PID" 2>/dev/null
	fi
	TB_SATGW_PID=
	tb__boxes_kill
	for pid in "${TB_BG_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${TB_BG_PIDS[@]}"; do
		for i in 1 2 3 4 5 6 7 8 9 10; do
			tb__alive "$pid" || break
			sleep 0.1
		done
		tb__alive "$pid" && kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	TB_BG_PIDS=()
	for ns in "${TB_NAMESPACES[@]}"; do
		# Anything still inside one of our namespaces was started by this run.
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	TB_NAMESPACES=()
	if [ -n "${TB_PREFIX:-}" ]; then
		rm -rf "/var/run/dpdk/$TB_PREFIX" "/var/run/dpdk/$TB_PREFIX"-* 2>/dev/null
	fi
	tb_hugepages_restore
}

# True while PID runs (a zombie counts as gone).
tb__alive() {
	local st
	[ -r "/proc/$1/stat" ] || return 1
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# tb_ns fh|gw|mh command...: run a command in one of the namespaces.
tb_ns() {
	local ns
	ns=$(tb__nsname "$1")
	shift
	ip netns exec "$ns" "$@"
}

tb__nsname() {
	case "$1" in
	fh) echo "$TB_NS_FH" ;;
	gw) echo "$TB_NS_GW" ;;
	mh) echo "$TB_NS_MH" ;;
	hub) echo "$TB_NS_HUB" ;;
	emu) echo "$TB_NS_EMU" ;;
	term) echo "$TB_NS_TERM" ;;
	termb) echo "$TB_NS_TERMB" ;; # tb_topology_chain_sites only (termb, mhb, br)
	mhb) echo "$TB_NS_MHB" ;;
	br) echo "$TB_NS_BR" ;;
	*) tb_fail "unknown namespace '$1' (fh, gw or mh; chain: fh, hub, emu, term, mh; chain_sites: also termb, mhb, br)" ;;
	esac
}

# tb_bg NS LOGNAME command...: start a command in the background in a namespace;
# its output goes to $TB_DIR/LOGNAME.log; sets TB_LAST_PID. Cleanup kills it.
tb_bg() {
	local ns=$1 name=$2
	shift 2
	ns=$(tb__nsname "$ns")
	ip netns exec "$ns" "$@" >"$TB_DIR/$name.log" 2>&1 &
	TB_LAST_PID=$!
	TB_BG_PIDS+=("$TB_LAST_PID")
}

# tb_bg_local LOGNAME command...: like tb_bg, outside the namespaces (telemetry
# clients: the DPDK sockets are files, reachable from anywhere).
tb_bg_local() {
	local name=$1
	shift
	"$@" >"$TB_DIR/$name.log" 2>&1 &
	TB_LAST_PID=$!
	TB_BG_PIDS+=("$TB_LAST_PID")
}

# tb_wait_pid PID TIMEOUT_S: wait for a background command; returns its exit code
# (124 and kills it on timeout).
tb_wait_pid() {
	local pid=$1 timeout=$2 deadline rc=0
	deadline=$(($(date +%s) + timeout))
	while tb__alive "$pid"; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
		sleep 0.1
	done
	wait "$pid" || rc=$?
	return "$rc"
}

# tb_wait_listen NS PORT [TIMEOUT_S]: wait until a TCP server listens on PORT in NS.
tb_wait_listen() {
	local _ n=$((${3:-10} * 10))
	for _ in $(seq 1 "$n"); do
		if tb_ns "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .; then
			return 0
		fi
		sleep 0.1
	done
	tb_fail "nothing listens on TCP port $2 in $1 after ${3:-10} s"
}

# tb_rand_port: a random TCP/UDP port for servers (names and ports differ per run).
tb_rand_port() { echo $((20000 + (RANDOM * 32768 + RANDOM) % 40000)); }

tb__mkns() {
	local ns=$1
	ip netns add "$ns" || tb_fail "cannot create network namespace $ns (need root and CAP_SYS_ADMIN)"
	TB_NAMESPACES+=("$ns")
	ip netns exec "$ns" ip link set lo up
	# No IPv6: no router solicitations or MLD reports to blur the counters.
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null
}

# tb__veth NS_A IF_A MAC_A NS_B IF_B MAC_B
tb__veth() {
	ip link add name "$2" netns "$1" address "$3" type veth \
		peer name "$5" netns "$4" address "$6" ||
		tb_fail "cannot create veth pair $2/$5"
	tb__ifup "$1" "$2"
	tb__ifup "$4" "$5"
}

tb__ifup() {
	local ns=$1 ifn=$2
	# af_packet and veth offloads produce bad checksums or super-frames: all off.
	ip netns exec "$ns" ethtool -K "$ifn" tx off rx off tso off gso off gro off >/dev/null 2>&1 ||
		true
	if ip netns exec "$ns" ethtool -k "$ifn" 2>/dev/null |
		grep -E '^(tx-checksumming|rx-checksumming|tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload): on' >&2; then
		tb_fail "could not turn offloads off on $ifn in $ns"
	fi
	ip netns exec "$ns" ip link set "$ifn" up
}

# tb_topology routed|transparent|chain: namespaces, veth pairs, addresses, routes, neighbours.
tb_topology() {
	TB_MODE=$1
	case "$TB_MODE" in
	routed | transparent) ;;
	chain)
		tb__topology_chain
		return
		;;
	*) tb_fail "tb_topology: routed, transparent or chain" ;;
	esac
	tb__mkns "$TB_NS_FH"
	tb__mkns "$TB_NS_GW"
	tb__mkns "$TB_NS_MH"
	tb__veth "$TB_NS_FH" fh0 "$TB_MAC_FH" "$TB_NS_GW" terr0 "$TB_MAC_GT"
	tb__veth "$TB_NS_MH" mh0 "$TB_MAC_MH" "$TB_NS_GW" sat0 "$TB_MAC_GS"
	# satgw's namespace keeps its kernel out of the way: no addresses, no forwarding.
	tb_ns gw sysctl -qw net.ipv4.ip_forward=0 >/dev/null
	tb_ns fh ip addr add "$TB_IP_FH/24" dev fh0
	if [ "$TB_MODE" = routed ]; then
		TB_DST_MH=$TB_IP_MH
		tb_ns mh ip addr add "$TB_IP_MH/24" dev mh0
		tb_ns fh ip neigh replace "$TB_GW_FH" lladdr "$TB_MAC_GT" nud permanent dev fh0
		tb_ns fh ip route add 10.20.1.0/24 via "$TB_GW_FH" dev fh0
		tb_ns mh ip neigh replace "$TB_GW_MH" lladdr "$TB_MAC_GS" nud permanent dev mh0
		tb_ns mh ip route add 10.10.0.0/24 via "$TB_GW_MH" dev mh0
	else
		TB_DST_MH=$TB_IP_MH_T
		tb_ns mh ip addr add "$TB_IP_MH_T/24" dev mh0
		tb_ns mh ip addr add "$TB_IP_MH_T2/24" dev mh0
	fi
	tb_log "topology $TB_MODE: fh $TB_IP_FH <-> [terr0 satgw sat0] <-> mh $TB_DST_MH"
}

# tb_chain_ipv6: IPv6 on the chain's two hosts' veths only (the testbed turns it
# off everywhere): fh TB_IP6_FH and mh TB_IP6_MH in /64s of their own, routed
# through their gateways (satgw's ports) by permanent neighbour entries, as the
# chain does for IPv4; no DAD, no router solicitations. The satgw policies must
# route fd00:10::/64 (fh) and fd00:20:1::/64 (mh).
TB_IP6_FH=fd00:10::1 TB_IP6_MH=fd00:20:1::1
tb_chain_ipv6() {
	local h
	for h in fh mh; do
		tb_ns "$h" sysctl -qw "net.ipv6.conf.${h}0.disable_ipv6=0" \
			"net.ipv6.conf.${h}0.router_solicitations=0" >/dev/null
	done
	tb_ns fh ip -6 addr add "$TB_IP6_FH/64" dev fh0 nodad
	tb_ns mh ip -6 addr add "$TB_IP6_MH/64" dev mh0 nodad
	tb_ns fh ip -6 neigh replace fd00:10::fe lladdr "$TB_MAC_GT" nud permanent dev fh0
	tb_ns fh ip -6 route add fd00:20:1::/64 via fd00:10::fe dev fh0
	tb_ns mh ip -6 neigh replace fd00:20:1::fe lladdr "$TB_MAC_TL" nud permanent dev mh0
	tb_ns mh ip -6 route add fd00:10::/64 via fd00:20:1::fe dev mh0
}

# tb_hugepages_reserve N: reserve N 2 MB hugepages (restored at exit) and mount
# hugetlbfs on /dev/hugepages if nothing is mounted there.
tb_hugepages_reserve() {
	local want=$1 have
	TB_HP_ORIG=$(cat /proc/sys/vm/nr_hugepages)
	if [ "$TB_HP_ORIG" -lt "$want" ]; then
		echo "$want" >/proc/sys/vm/nr_hugepages || tb_fail "cannot reserve $want hugepages"
	fi
	have=$(cat /proc/sys/vm/nr_hugepages)
	[ "$have" -ge "$want" ] || tb_fail "asked for $want hugepages, the kernel gave $have"
	if ! grep -q ' /dev/hugepages hugetlbfs ' /proc/mounts; then
		mkdir -p /dev/hugepages
		mount -t hugetlbfs nodev /dev/hugepages || tb_fail "cannot mount hugetlbfs on /dev/hugepages"
		TB_HP_MOUNTED=1
	fi
	tb_log "hugepages: $have reserved (was $TB_HP_ORIG)"
}

tb_hugepages_restore() {
	# Our primary's hugepage files (kept for secondaries such as dpdk-dumpcap).
	if [ -n "${TB_HP_ORIG:-}" ] && [ -n "${TB_PREFIX:-}" ]; then
		rm -f /dev/hugepages/"${TB_PREFIX}"map_* 2>/dev/null
	fi
	if [ -n "${TB_HP_MOUNTED:-}" ]; then
		umount /dev/hugepages 2>/dev/null
		TB_HP_MOUNTED=
	fi
	if [ -n "${TB_HP_ORIG:-}" ]; then
		echo "$TB_HP_ORIG" >/proc/sys/vm/nr_hugepages 2>/dev/null
		TB_HP_ORIG=
	fi
}

# tb_satgw_start POLICY [LCORES] [EXTRA EAL OPTIONS...]: start satgw in netns gw
# on net_af_packet0 (terr0) and net_af_packet1 (sat0); wait until telemetry
# answers. Without hugepages reserved (tb_hugepages_reserve), runs --no-huge.
# Extra satgw options may be given in TB_SATGW_OPTS (an array).
tb_satgw_start() {
	local policy=$1 lcores=${2:-0} mem
	shift 2 || shift $#
	local -a eal
	if [ -n "${TB_HP_ORIG:-}" ]; then
		mem=(-m 256)
	else
		mem=(--no-huge -m 512)
	fi
	# af_packet RX ring: 2048 frames (the PMD's default 512 overflows under a
	# single TCP stream at Gbit/s when satgw shares 2 cores with both endpoints).
	local af=${TB_AF_PACKET_ARGS-,framecnt=2048}
	eal=("${mem[@]}" --no-pci --file-prefix "$TB_PREFIX" -l "$lcores"
		--vdev "net_af_packet0,iface=terr0$af" --vdev "net_af_packet1,iface=sat0$af" "$@")
	TB_POLICY=$policy
	rm -f "$TB_STATS_JSON"
	tb_log "starting satgw -l $lcores, policy $policy"
	echo "+ ip netns exec $TB_NS_GW $TB_SATGW ${eal[*]} -- -c $policy --stats-json $TB_STATS_JSON -q ${TB_SATGW_OPTS[*]:-}" >"$TB_SATGW_LOG"
	ip netns exec "$TB_NS_GW" "$TB_SATGW" "${eal[@]}" -- -c "$policy" \
		--stats-json "$TB_STATS_JSON" -q ${TB_SATGW_OPTS[@]+"${TB_SATGW_OPTS[@]}"} >>"$TB_SATGW_LOG" 2>&1 &
	TB_SATGW_PID=$!
	if ! "$TB_PY" "$TB_E2E_DIR/sgwtel.py" --wait "${TB_READY_S:-20}" --pid "$TB_SATGW_PID" "$TB_PREFIX" \
		/satgw/stats >/dev/null 2>"$TB_DIR/wait.err"; then
		cat "$TB_DIR/wait.err" >&2
		tb_fail "satgw did not become ready (log: $TB_SATGW_LOG)"
	fi
	tb_log "satgw ready (pid $TB_SATGW_PID, file prefix $TB_PREFIX)"
}

# tb_satgw_stop: SIGINT, wait (TB_STOP_S, 20 s, at most), TB_SATGW_RC = exit code. The stats
# JSON is in $TB_STATS_JSON.
tb_satgw_stop() {
	local pid=$TB_SATGW_PID
	[ -n "$pid" ] || tb_fail "tb_satgw_stop: satgw is not running"
	kill -INT "$pid" 2>/dev/null || true
	TB_SATGW_RC=0
	tb_wait_pid "$pid" "${TB_STOP_S:-20}" || TB_SATGW_RC=$?
	TB_SATGW_PID=
	[ "$TB_SATGW_RC" -ne 124 ] || tb_fail "satgw did not stop within ${TB_STOP_S:-20} s of SIGINT"
	tb_log "satgw stopped, exit code $TB_SATGW_RC"
	tb__ring_drops
}

# Frames the kernel delivered to terr0/sat0 that never reached satgw: they
# overflowed the af_packet ring. DPDK 22.11's net_af_packet does not report
# them (dev_imissed stays 0), so compare the kernel's counters with
# dev_ipackets. Sets TB_RING_DROPS (sum) and logs it when not 0.
tb__ring_drops() {
	local k0 k1
	TB_RING_DROPS=
	[ -s "$TB_STATS_JSON" ] || return 0
	k0=$(tb_ns gw cat /sys/class/net/terr0/statistics/rx_packets 2>/dev/null) || return 0
	k1=$(tb_ns gw cat /sys/class/net/sat0/statistics/rx_packets 2>/dev/null) || return 0
	TB_RING_DROPS=$("$TB_PY" - "$TB_STATS_JSON" "$k0" "$k1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
dev = {p["device"].split(",")[0]: p["dev_ipackets"] for p in d["ports"]}
print(max(0, int(sys.argv[2]) - dev.get("net_af_packet0", 0)) +
      max(0, int(sys.argv[3]) - dev.get("net_af_packet1", 0)))
PY
	) || TB_RING_DROPS=
	if [ -n "$TB_RING_DROPS" ] && [ "$TB_RING_DROPS" != 0 ]; then
		tb_log "note: $TB_RING_DROPS frame(s) overflowed the af_packet RX rings before satgw saw them (kernel rx_packets of terr0/sat0 > dev_ipackets)"
	fi
}

# tb_check_wire: after tb_satgw_stop, hold satgw's per-port counters against the
# kernel's counters of the endpoints' veths (fh0, mh0), the independent judge of
# what crossed: every frame satgw says it sent on terr/sat arrived at fh0/mh0,
# and every frame fh0/mh0 sent reached satgw or overflowed the af_packet ring.
tb_check_wire() {
	local f
	f="$TB_DIR/wire.txt"
	{
		echo "fh0 $(tb_ns fh cat /sys/class/net/fh0/statistics/rx_packets) $(tb_ns fh cat /sys/class/net/fh0/statistics/tx_packets)"
		echo "mh0 $(tb_ns mh cat /sys/class/net/mh0/statistics/rx_packets) $(tb_ns mh cat /sys/class/net/mh0/statistics/tx_packets)"
		echo "terr0 $(tb_ns gw cat /sys/class/net/terr0/statistics/rx_packets) 0"
		echo "sat0 $(tb_ns gw cat /sys/class/net/sat0/statistics/rx_packets) 0"
	} >"$f"
	"$TB_PY" - "$TB_STATS_JSON" "$f" <<'PY' || tb_fail "satgw's port counters disagree with the endpoints' kernels"
import json, sys
d = json.load(open(sys.argv[1]))
k = {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(sys.argv[2]) if l.strip()}
ports = {p["device"].split(",")[0]: p for p in d["ports"]}
bad = 0
for dev, host, gwif in (("net_af_packet0", "fh0", "terr0"), ("net_af_packet1", "mh0", "sat0")):
    p = ports[dev]
    ring = k[gwif][0] - p["dev_ipackets"]
    checks = [
        ("%s: tx_packets %d == %s rx_packets %d" % (p["name"], p["tx_packets"], host, k[host][0]),
         p["tx_packets"] == k[host][0]),
        ("%s: rx_packets %d + ring overflow %d == %s tx_packets %d" % (
            p["name"], p["rx_packets"], ring, host, k[host][1]),
         p["rx_packets"] + ring == k[host][1] and ring >= 0),
    ]
    for what, ok in checks:
        print("  %s %s" % ("ok  " if ok else "FAIL", what))
        bad += not ok
sys.exit(1 if bad else 0)
PY
}

# tb_tel COMMAND [PARAMS]: one telemetry command over the DPDK socket; prints the JSON value.
tb_tel() {
	"$TB_PY" "$TB_E2E_DIR/sgwtel.py" "$TB_PREFIX" "$*"
}

# tb_stats CHECK...: assertions on the stats JSON (see stats.py).
tb_stats() {
	"$TB_PY" "$TB_E2E_DIR/stats.py" check "$TB_STATS_JSON" "$@" || tb_fail "counter checks failed (stats: $TB_STATS_JSON)"
}

# tb_ping NS ADDR [COUNT]: ICMP echo (ping.py: the machines have no ping(8)); fails unless all answered.
tb_ping() {
	tb_ns "$1" "$TB_PY" "$TB_E2E_DIR/ping.py" -c "${3:-3}" -W 2 "$2"
}

# tb_mkfile PATH MB: a file of random content.
tb_mkfile() {
	head -c "$(($2 * 1024 * 1024))" /dev/urandom >"$1"
}

# tb_xfer FROM_NS TO_NS TO_ADDR FILE [TIMEOUT] [SOURCE_ADDR]: send FILE over one TCP
# connection; the receiver hashes what arrives. Fails unless bytes and sha256 match.
tb_xfer() {
	local from=$1 to=$2 addr=$3 file=$4 timeout=${5:-60} src=${6:-} port name rpid spid want got
	local -a srcopt=()
	[ -z "$src" ] || srcopt=(--source "$src")
	port=$(tb_rand_port)
	name="xfer-$from-$to-$port"
	tb_bg "$to" "$name-recv" "$TB_PY" "$TB_E2E_DIR/xfer.py" recv --bind "$addr" --port "$port" \
		--result "$TB_DIR/$name-recv.json" --timeout "$timeout"
	rpid=$TB_LAST_PID
	tb_bg "$from" "$name-send" "$TB_PY" "$TB_E2E_DIR/xfer.py" send --host "$addr" --port "$port" \
		--file "$file" --result "$TB_DIR/$name-send.json" --timeout "$timeout" ${srcopt[@]+"${srcopt[@]}"}
	spid=$TB_LAST_PID
	tb_wait_pid "$spid" "$((timeout + 5))" || { cat "$TB_DIR/$name-send.log" >&2; tb_fail "sender $from -> $to failed"; }
	tb_wait_pid "$rpid" "$((timeout + 5))" || { cat "$TB_DIR/$name-recv.log" >&2; tb_fail "receiver $from -> $to failed"; }
	want=$(sha256sum "$file" | cut -d' ' -f1)
	got=$("$TB_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["sha256"])' "$TB_DIR/$name-recv.json")
	TB_XFER_SECONDS=$("$TB_PY" -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["seconds"])' "$TB_DIR/$name-recv.json")
	TB_XFER_BYTES=$("$TB_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"])' "$TB_DIR/$name-recv.json")
	[ "$want" = "$got" ] || tb_fail "sha256 mismatch $from -> $to: sent $want, received $got ($TB_XFER_BYTES bytes)"
	tb_log "xfer $from -> $to: $TB_XFER_BYTES bytes in $TB_XFER_SECONDS s, sha256 $got matches"
}

# tb_xfer_timed FROM_NS TO_NS TO_ADDR FILE SECONDS: a download of fixed duration: the
# receiver reads for SECONDS after accepting, then resets the connection; what arrived
# must be the file's first bytes (sha256 of that prefix). Sets TB_XFER_BYTES,
# TB_XFER_SECONDS, TB_XFER_COMPLETE (1: the whole file came before the limit),
# TB_XFER_SHA, TB_XFER_RESULT (the receiver's JSON, with "progress").
tb_xfer_timed() {
	local from=$1 to=$2 addr=$3 file=$4 secs=$5 port name rpid spid want
	local -a r
	port=$(tb_rand_port)
	name="xfer-$from-$to-$port"
	tb_bg "$to" "$name-recv" "$TB_PY" "$TB_E2E_DIR/xfer.py" recv --bind "$addr" --port "$port" \
		--result "$TB_DIR/$name-recv.json" --timeout "$((secs + 30))" --max-seconds "$secs"
	rpid=$TB_LAST_PID
	tb_bg "$from" "$name-send" "$TB_PY" "$TB_E2E_DIR/xfer.py" send --host "$addr" --port "$port" \
		--file "$file" --result "$TB_DIR/$name-send.json" --timeout "$((secs + 30))" --allow-reset
	spid=$TB_LAST_PID
	tb_wait_pid "$rpid" "$((secs + 40))" || { cat "$TB_DIR/$name-recv.log" >&2; tb_fail "receiver $from -> $to failed"; }
	tb_wait_pid "$spid" "$((secs + 40))" || { cat "$TB_DIR/$name-send.log" >&2; tb_fail "sender $from -> $to failed"; }
	TB_XFER_RESULT="$TB_DIR/$name-recv.json"
	mapfile -t r < <("$TB_PY" -c 'import json,sys
j = json.load(open(sys.argv[1]))
print(j["bytes"]); print("%.2f" % j["seconds"]); print(1 if j["complete"] else 0); print(j["sha256"])' \
		"$TB_XFER_RESULT")
	TB_XFER_BYTES=${r[0]} TB_XFER_SECONDS=${r[1]} TB_XFER_COMPLETE=${r[2]} TB_XFER_SHA=${r[3]}
	[ "$TB_XFER_BYTES" -gt 0 ] || tb_fail "xfer $from -> $to: nothing arrived in $secs s"
	want=$(head -c "$TB_XFER_BYTES" "$file" | sha256sum | cut -d' ' -f1)
	[ "$want" = "$TB_XFER_SHA" ] ||
		tb_fail "sha256 mismatch $from -> $to: the file's first $TB_XFER_BYTES bytes are $want, received $TB_XFER_SHA"
	tb_log "xfer $from -> $to: $TB_XFER_BYTES bytes in $TB_XFER_SECONDS s ($([ "$TB_XFER_COMPLETE" = 1 ] && echo complete || echo "stopped at the time limit")), sha256 of the file's first $TB_XFER_BYTES bytes matches"
}

tb_pass() {
	echo "[$TB_NAME] PASS in $(tb_elapsed) s" >&2
}

# ---------------------------------------------------------------------------
# Chain topology: hub, emulator and terminal, each satgw in its own namespace.
#
#   fh0 --- terr0 [hub] sat0 --- hub0 [emu] term0 --- sat0 [term] lan0 --- mh0
#   .01:01  .01:fe     .03:01    .03:fe    .04:fe    .04:01      .02:fe    .02:01
#
# Routed: fh 10.10.0.1/24 routes 10.20.1.0/24 via 10.10.0.254 (permanent
# neighbour: the hub's terr0); mh 10.20.1.1/24 routes 10.10.0.0/24 via
# 10.20.1.254 (permanent neighbour: the terminal's lan0). No ARP ever crosses
# the emulated link. The hub's and the terminal's policies carry next hops to
# each other's satellite-side MAC and to fh0 / mh0 (policies/chain-*.yaml).

# tb__box_ifs BOX: the interfaces of BOX's net_af_packet0 and net_af_packet1.
tb__box_ifs() {
	case "$1" in
	hub) echo "terr0 sat0" ;;
	emu) echo "hub0 term0" ;;
	term | termb) echo "sat0 lan0" ;;
	*) tb_fail "unknown box '$1' (hub, emu, term; chain_sites: termb)" ;;
	esac
}

tb__topology_chain() {
	local ns
	for ns in "$TB_NS_FH" "$TB_NS_HUB" "$TB_NS_EMU" "$TB_NS_TERM" "$TB_NS_MH"; do
		tb__mkns "$ns"
	done
	tb__veth "$TB_NS_FH" fh0 "$TB_MAC_FH" "$TB_NS_HUB" terr0 "$TB_MAC_GT"
	tb__veth "$TB_NS_HUB" sat0 "$TB_MAC_HS" "$TB_NS_EMU" hub0 "$TB_MAC_EH"
	tb__veth "$TB_NS_EMU" term0 "$TB_MAC_ET" "$TB_NS_TERM" sat0 "$TB_MAC_TS"
	tb__veth "$TB_NS_TERM" lan0 "$TB_MAC_TL" "$TB_NS_MH" mh0 "$TB_MAC_MH"
	# The boxes' kernels stay out of the way: no addresses, no forwarding.
	for ns in hub emu term; do
		tb_ns "$ns" sysctl -qw net.ipv4.ip_forward=0 >/dev/null
	done
	TB_DST_MH=$TB_IP_MH
	tb_ns fh ip addr add "$TB_IP_FH/24" dev fh0
	tb_ns mh ip addr add "$TB_IP_MH/24" dev mh0
	tb_ns fh ip neigh replace "$TB_GW_FH" lladdr "$TB_MAC_GT" nud permanent dev fh0
	tb_ns fh ip route add 10.20.1.0/24 via "$TB_GW_FH" dev fh0
	tb_ns mh ip neigh replace "$TB_GW_MH" lladdr "$TB_MAC_TL" nud permanent dev mh0
	tb_ns mh ip route add 10.10.0.0/24 via "$TB_GW_MH" dev mh0
	tb_log "topology chain: fh $TB_IP_FH <-> [hub] <-> [emu] <-> [term] <-> mh $TB_IP_MH (namespaces $TB_NS_FH $TB_NS_HUB $TB_NS_EMU $TB_NS_TERM $TB_NS_MH)"
}

# ---------------------------------------------------------------------------
# Two sites behind one hub (tb_topology_chain_sites; test_xcp_sites.sh): the
# chain, with the emulator's terminal side on a Linux bridge (namespace br,
# no STP, no addresses) that joins it to two terminal boxes, term (site A,
# as in the chain) and termb (site B, its own MACs and prefix):
#
#   fh0 --- terr0 [hub] sat0 --- hub0 [emu] term0 --- e0 \
#                                                     [br0] a0 --- sat0 [term]  lan0 --- mh0  (10.20.1.1)
#                                                           b0 --- sat0 [termb] lan0 --- mhb0 (10.20.2.1)
#
# A satellite forward link is a broadcast medium: the hub's frames (satlink
# peer_mac broadcast) reach both terminals, each keeps its own terminal id's.
# The terminals send to the hub's sat0 MAC, which the bridge has learnt on e0
# (the emulator passes frames untouched). fh routes 10.20.1.0/24 and
# 10.20.2.0/24 via its gateway; mhb routes 10.10.0.0/24 via 10.20.2.254
# (permanent neighbour: termb's lan0). The caller sets TB_NS_TERMB, TB_NS_MHB
# and TB_NS_BR (defaults below) before calling, like the other TB_NS_* names.
TB_MAC_TSB=02:00:00:00:05:01    # termb's sat0 (net_af_packet0), on the bridge
TB_MAC_TLB=02:00:00:00:06:fe    # termb's lan0 (net_af_packet1): mhb's gateway
TB_MAC_MHB=02:00:00:00:06:01    # mhb0, site B's host
TB_MAC_BR_E=02:00:00:00:07:0e   # the bridge's ports: to the emulator,
TB_MAC_BR_A=02:00:00:00:07:0a   # to term,
TB_MAC_BR_B=02:00:00:00:07:0b   # to termb
TB_IP_MHB=10.20.2.1
TB_GW_MHB=10.20.2.254

tb_topology_chain_sites() {
	local ns
	TB_MODE=chain
	TB_BOXES=(hub emu term termb)
	: "${TB_NS_TERMB:=sgwe2e-termb-$TB_ID}" "${TB_NS_MHB:=sgwe2e-mhb-$TB_ID}" "${TB_NS_BR:=sgwe2e-br-$TB_ID}"
	for ns in "$TB_NS_FH" "$TB_NS_HUB" "$TB_NS_EMU" "$TB_NS_BR" "$TB_NS_TERM" "$TB_NS_TERMB" \
		"$TB_NS_MH" "$TB_NS_MHB"; do
		tb__mkns "$ns"
	done
	tb__veth "$TB_NS_FH" fh0 "$TB_MAC_FH" "$TB_NS_HUB" terr0 "$TB_MAC_GT"
	tb__veth "$TB_NS_HUB" sat0 "$TB_MAC_HS" "$TB_NS_EMU" hub0 "$TB_MAC_EH"
	tb__veth "$TB_NS_EMU" term0 "$TB_MAC_ET" "$TB_NS_BR" e0 "$TB_MAC_BR_E"
	tb__veth "$TB_NS_BR" a0 "$TB_MAC_BR_A" "$TB_NS_TERM" sat0 "$TB_MAC_TS"
	tb__veth "$TB_NS_BR" b0 "$TB_MAC_BR_B" "$TB_NS_TERMB" sat0 "$TB_MAC_TSB"
	tb__veth "$TB_NS_TERM" lan0 "$TB_MAC_TL" "$TB_NS_MH" mh0 "$TB_MAC_MH"
	tb__veth "$TB_NS_TERMB" lan0 "$TB_MAC_TLB" "$TB_NS_MHB" mhb0 "$TB_MAC_MHB"
	tb_ns br ip link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0 ||
		tb_fail "cannot create the bridge in $TB_NS_BR"
	for ns in e0 a0 b0; do
		tb_ns br ip link set "$ns" master br0
	done
	tb_ns br ip link set br0 up
	# The boxes' and the bridge's kernels stay out of the way: no addresses, no forwarding.
	for ns in hub emu term termb br; do
		tb_ns "$ns" sysctl -qw net.ipv4.ip_forward=0 >/dev/null
	done
	TB_DST_MH=$TB_IP_MH
	tb_ns fh ip addr add "$TB_IP_FH/24" dev fh0
	tb_ns mh ip addr add "$TB_IP_MH/24" dev mh0
	tb_ns mhb ip addr add "$TB_IP_MHB/24" dev mhb0
	tb_ns fh ip neigh replace "$TB_GW_FH" lladdr "$TB_MAC_GT" nud permanent dev fh0
	tb_ns fh ip route add 10.20.1.0/24 via "$TB_GW_FH" dev fh0
	tb_ns fh ip route add 10.20.2.0/24 via "$TB_GW_FH" dev fh0
	tb_ns mh ip neigh replace "$TB_GW_MH" lladdr "$TB_MAC_TL" nud permanent dev mh0
	tb_ns mh ip route add 10.10.0.0/24 via "$TB_GW_MH" dev mh0
	tb_ns mhb ip neigh replace "$TB_GW_MHB" lladdr "$TB_MAC_TLB" nud permanent dev mhb0
	tb_ns mhb ip route add 10.10.0.0/24 via "$TB_GW_MHB" dev mhb0
	tb_log "topology chain_sites: fh $TB_IP_FH <-> [hub] <-> [emu] <-> bridge <-> [term] <-> mh $TB_IP_MH, [termb] <-> mhb $TB_IP_MHB"
}

tb_box_prefix() { echo "$TB_PREFIX-$1"; }
tb_box_json() { echo "$TB_DIR/stats-$1.json"; }
tb_box_log() { echo "$TB_DIR/satgw-$1.log"; }

# tb_box_start BOX POLICY [LCORES] [EXTRA EAL OPTIONS...]: start satgw in BOX's
# namespace (hub, emu, term) on net_af_packet0/1 over its two veths, with file
# prefix $TB_PREFIX-BOX, --no-huge -m ${TB_MEM_MB:-512}, its log in
# $TB_DIR/satgw-BOX.log and --stats-json in $TB_DIR/stats-BOX.json; wait until
# its telemetry answers. LCORES defaults to 1 for the emulator, 0 otherwise
# (two cores: the emulator, which holds every frame on the link and releases
# it on time, gets a core of its own). Extra satgw options: TB_SATGW_OPTS.
tb_box_start() {
	local box=$1 policy=$2 lcores=${3:-} ns ifs log json af
	shift 2
	shift || true
	[ -n "$lcores" ] || { [ "$box" = emu ] && lcores=1 || lcores=0; }
	ns=$(tb__nsname "$box")
	read -r -a ifs <<<"$(tb__box_ifs "$box")"
	log=$(tb_box_log "$box")
	json=$(tb_box_json "$box")
	af=${TB_AF_PACKET_ARGS-,framecnt=2048}
	[ -z "${TB_BOX_PID[$box]:-}" ] || tb_fail "tb_box_start: $box is already running"
	local -a eal=(--no-huge -m "${TB_MEM_MB:-512}" --no-pci --file-prefix "$(tb_box_prefix "$box")"
		-l "$lcores" --vdev "net_af_packet0,iface=${ifs[0]}$af"
		--vdev "net_af_packet1,iface=${ifs[1]}$af" "$@")
	rm -f "$json"
	tb_log "starting satgw $box -l $lcores, policy $(basename "$policy")"
	echo "+ ip netns exec $ns $TB_SATGW ${eal[*]} -- -c $policy --stats-json $json -q ${TB_SATGW_OPTS[*]:-}" >"$log"
	ip netns exec "$ns" "$TB_SATGW" "${eal[@]}" -- -c "$policy" --stats-json "$json" -q \
		${TB_SATGW_OPTS[@]+"${TB_SATGW_OPTS[@]}"} >>"$log" 2>&1 &
	TB_BOX_PID[$box]=$!
	TB_BOX_RC[$box]=
	if ! "$TB_PY" "$TB_E2E_DIR/sgwtel.py" --wait "${TB_READY_S:-20}" --pid "${TB_BOX_PID[$box]}" \
		"$(tb_box_prefix "$box")" /satgw/stats >/dev/null 2>"$TB_DIR/wait-$box.err"; then
		cat "$TB_DIR/wait-$box.err" >&2
		tail -n 20 "$log" >&2
		tb_fail "satgw $box did not become ready (log: $log)"
	fi
	tb_log "satgw $box ready (pid ${TB_BOX_PID[$box]}, file prefix $(tb_box_prefix "$box"))"
}

# tb_box_stop BOX: SIGINT, wait (TB_STOP_S, 20 s, at most); TB_BOX_RC[BOX] = exit code.
tb_box_stop() {
	local box=$1 pid rc=0
	pid=${TB_BOX_PID[$box]:-}
	[ -n "$pid" ] || tb_fail "tb_box_stop: satgw $box is not running"
	kill -INT "$pid" 2>/dev/null || true
	tb_wait_pid "$pid" "${TB_STOP_S:-20}" || rc=$?
	TB_BOX_PID[$box]=
	TB_BOX_RC[$box]=$rc
	[ "$rc" -ne 124 ] || tb_fail "satgw $box did not stop within ${TB_STOP_S:-20} s of SIGINT"
	tb_log "satgw $box stopped, exit code $rc"
}

# tb_boxes_stop_keep TAG BOX...: stop the boxes (at once); each must exit 0
# and write its stats JSON, kept as $TB_DIR/BOX-TAG.json.
tb_boxes_stop_keep() {
	local tag=$1 box
	shift
	tb_boxes_stop "$@"
	for box in "$@"; do
		[ "${TB_BOX_RC[$box]}" -eq 0 ] || tb_fail "satgw $box ($tag) exit code ${TB_BOX_RC[$box]} (3 = mbufs leaked)"
		[ -s "$(tb_box_json "$box")" ] || tb_fail "satgw $box ($tag) wrote no stats JSON"
		cp "$(tb_box_json "$box")" "$TB_DIR/$box-$tag.json"
	done
}

# tb_boxes_stop BOX...: SIGINT to all of them at once, then wait for each (TB_STOP_S, 20 s, at most);
# TB_BOX_RC[BOX] = exit code (stopping one by one costs seconds per box).
tb_boxes_stop() {
	local box pid rc
	for box in "$@"; do
		pid=${TB_BOX_PID[$box]:-}
		[ -n "$pid" ] || tb_fail "tb_boxes_stop: satgw $box is not running"
		kill -INT "$pid" 2>/dev/null || true
	done
	for box in "$@"; do
		rc=0
		tb_wait_pid "${TB_BOX_PID[$box]}" "${TB_STOP_S:-20}" || rc=$?
		TB_BOX_PID[$box]=
		TB_BOX_RC[$box]=$rc
		[ "$rc" -ne 124 ] || tb_fail "satgw $box did not stop within ${TB_STOP_S:-20} s of SIGINT"
		tb_log "satgw $box stopped, exit code $rc"
	done
}

# tb_wait_path NS ADDR [TIMEOUT]: wait until an ICMP echo from NS to ADDR is answered
# (every box on the way is up, a satlink session too); fails after TIMEOUT (15) s.
tb_wait_path() {
	local ns=$1 addr=$2 timeout=${3:-15} t0
	t0=$(date +%s)
	until tb_ns "$ns" "$TB_PY" "$TB_E2E_DIR/ping.py" -c 1 -W 2 "$addr" >/dev/null 2>&1; do
		[ $(($(date +%s) - t0)) -lt "$timeout" ] || tb_fail "no echo from $ns to $addr within $timeout s"
	done
}

# tb_xfer_through_outage FROM TO ADDR FILE TIMEOUT POLICY LEAD TRIES: tb_xfer of FILE,
# started LEAD s before the next outage window of the emulator's POLICY (on the
# emulator's clock), until the outage hit it: the emulator counted outage drops
# while it ran (the test sends nothing else across the link meanwhile). A
# transfer the outage missed (a machine too slow to start it in time) is sent
# again at the next window, TRIES transfers at most. Sets TB_XFER_* (the last
# transfer) and TB_OUTAGE_DROPS ("FORWARD RETURN": drops during it).
tb_xfer_through_outage() {
	local from=$1 to=$2 addr=$3 file=$4 timeout=$5 policy=$6 lead=$7 tries=$8
	local -a chain=("$TB_PY" "$TB_E2E_DIR/chain.py")
	local emu try win start_at now end f0 r0 f1 r1
	emu=$(tb_box_prefix emu)
	for try in $(seq 1 "$tries"); do
		win=$("${chain[@]}" next-window "$emu" "$policy" --lead "$lead") ||
			tb_fail "no outage window left to aim the transfer at ($policy)"
		start_at=$(awk -v w="$win" -v l="$lead" 'BEGIN { printf "%.3f", w - l }')
		now=$("${chain[@]}" wait-clock "$emu" "$start_at" --timeout 60)
		read -r f0 r0 < <("${chain[@]}" drops "$emu")
		tb_log "emulator clock $now s: transfer $try starts, $lead s before the outage at $win s"
		tb_xfer "$from" "$to" "$addr" "$file" "$timeout"
		read -r f1 r1 < <("${chain[@]}" drops "$emu")
		end=$("${chain[@]}" clock "$emu")
		TB_OUTAGE_DROPS="$((f1 - f0)) $((r1 - r0))"
		tb_log "transfer done at emulator clock $end s: $TB_XFER_BYTES bytes in $TB_XFER_SECONDS s ($(awk -v b="$TB_XFER_BYTES" -v s="$TB_XFER_SECONDS" 'BEGIN { printf "%.2f", b * 8 / s / 1e6 }') Mbit/s goodput); outage drops meanwhile: forward $((f1 - f0)), return $((r1 - r0))"
		[ $((f1 + r1)) -gt $((f0 + r0)) ] && return 0
		tb_log "the outage lost none of transfer $try's frames (it ran from $now to $end s): again, at the next window"
	done
	tb_fail "$tries transfers, and the outages lost none of their frames (the emulator dropped nothing in its windows, or the machine never let a transfer run into one)"
}

# tb_box_tel BOX COMMAND: one telemetry command to BOX; prints the JSON value.
tb_box_tel() {
	local box=$1
	shift
	"$TB_PY" "$TB_E2E_DIR/sgwtel.py" "$(tb_box_prefix "$box")" "$*"
}

# tb_tel_wait PREFIX TIMEOUT_S CMD EXPR: poll telemetry CMD of the satgw with file
# prefix PREFIX until the Python expression EXPR holds for its JSON value `d`;
# fails the test after TIMEOUT_S s. For conditions the test causes and that
# must then come about (counters reaching what was sent), instead of a sleep.
tb_tel_wait() {
	local prefix=$1 timeout=$2 cmd=$3 expr=$4
	"$TB_PY" - "$prefix" "$timeout" "$cmd" "$expr" "$TB_E2E_DIR" <<'PY' ||
import sys, time
sys.path.insert(0, sys.argv[5])
from sgwtel import Telemetry
prefix, timeout, cmd, expr = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
deadline = time.monotonic() + timeout
with Telemetry(prefix) as t:
    while True:
        d = t.cmd(cmd)
        try:
            if eval(expr, {}, {"d": d}):
                sys.exit(0)
        except (KeyError, IndexError, TypeError):
            pass
        if time.monotonic() > deadline:
            print("  %s: %s" % (cmd, d), file=sys.stderr)
            sys.exit(1)
        time.sleep(0.05)
PY
		tb_fail "$cmd of $prefix: '$expr' still false after $timeout s"
}

# tb_box_wait_tel BOX TIMEOUT_S CMD EXPR: tb_tel_wait for a box of the chain.
tb_box_wait_tel() { tb_tel_wait "$(tb_box_prefix "$1")" "$2" "$3" "$4"; }

# tb_box_wait_link_empty BOX [TIMEOUT_S]: wait until the emulator BOX holds no
# frame in either direction (/satgw/link held_now: what went in has come out or
# was lost), 20 s at most. Its exit report then shows every delivered frame sent.
tb_box_wait_link_empty() {
	tb_box_wait_tel "$1" "${2:-20}" /satgw/link 'd["forward"]["held_now"] + d["return"]["held_now"] == 0'
}

# tb_wait_idle [TIMEOUT_S]: wait until satgw (tb_satgw_start) has settled: over a
# 20 ms span no worker received a packet and every worker took an idle nap
# (idle_backoff_us > 0), which it does only after flushing its TX buffers: what
# it received has been sent or dropped, and counted. 10 s at most.
tb_wait_idle() {
	"$TB_PY" - "$TB_PREFIX" "${1:-10}" "$TB_E2E_DIR" <<'PY' ||
import sys, time
sys.path.insert(0, sys.argv[3])
from sgwtel import Telemetry
deadline = time.monotonic() + float(sys.argv[2])
with Telemetry(sys.argv[1]) as t:
    a = t.cmd("/satgw/workers")
    while True:
        time.sleep(0.02)
        b = t.cmd("/satgw/workers")
        if all(b[w]["rx_packets"] == a[w]["rx_packets"] and
               b[w]["idle_sleeps"] > a[w]["idle_sleeps"] for w in a):
            sys.exit(0)
        if time.monotonic() > deadline:
            print("  /satgw/workers: %s" % b, file=sys.stderr)
            sys.exit(1)
        a = b
PY
		tb_fail "satgw did not settle (no idle worker for 20 ms) within ${1:-10} s"
}

# tb_box_stats BOX CHECK...: stats.py assertions on BOX's stats JSON.
tb_box_stats() {
	local box=$1
	shift
	"$TB_PY" "$TB_E2E_DIR/stats.py" check "$(tb_box_json "$box")" "$@" ||
		tb_fail "counter checks failed for $box (stats: $(tb_box_json "$box"))"
}

# Cleanup of the chain's boxes (from tb_cleanup): SIGINT, 5 s, SIGKILL.
tb__boxes_kill() {
	local box pid i
	for box in "${!TB_BOX_PID[@]}"; do
		pid=${TB_BOX_PID[$box]}
		[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null
	done
	for box in "${!TB_BOX_PID[@]}"; do
		pid=${TB_BOX_PID[$box]}
		[ -n "$pid" ] || continue
		for i in $(seq 1 50); do
			tb__alive "$pid" || break
			sleep 0.1
		done
		tb__alive "$pid" && kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		TB_BOX_PID[$box]=
	done
}

# tb_chain_check_wire: after every box stopped, hold each box's port counters
# against the kernel's counters of the veths on both sides of it: what a box
# sent on a port is what the far end's kernel received, and what a box's
# kernel received reached the box or overflowed its af_packet ring (logged:
# DPDK 22.11's net_af_packet does not count those). Sets TB_RING_DROPS.
tb_chain_check_wire() {
	local f="$TB_DIR/wire.txt" ns
	: >"$f"
	# One `ip netns exec` per namespace (each one remounts /sys, slow on a loaded VM).
	for ns in "fh fh0" "hub terr0 sat0" "emu hub0 term0" "term sat0 lan0" "mh mh0"; do
		# shellcheck disable=SC2086,SC2016
		tb_ns ${ns%% *} sh -c 'b=$1; shift; for i; do
			echo "$b:$i $(cat /sys/class/net/$i/statistics/rx_packets) $(cat /sys/class/net/$i/statistics/tx_packets)"
			done' sh $ns >>"$f"
	done
	TB_RING_DROPS=$("$TB_PY" "$TB_E2E_DIR/chain.py" wire "$f" \
		"$(tb_box_json hub)" "$(tb_box_json emu)" "$(tb_box_json term)" 2>"$TB_DIR/wire.err") ||
		{ cat "$TB_DIR/wire.err" >&2; tb_fail "the boxes' port counters disagree with the kernels' veths"; }
	cat "$TB_DIR/wire.err" >&2
}

# tb_nstat NS COUNTER...: the kernel's absolute SNMP counters in NS (its own
# namespace, so they count this run only), one "NAME VALUE" line each.
tb_nstat() {
	local ns=$1
	shift
	tb_ns "$ns" nstat -asz "$@" | awk 'NF >= 2 && $1 !~ /^#/ {print $1, $2}'
}
