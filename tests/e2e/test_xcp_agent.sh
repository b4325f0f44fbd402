#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# test_xcp_agent.sh: the XCP host agent (control/agent/xcp_agent) between two
# unmodified Linux hosts running CUBIC (issue 9, "Senders"; docs/xcp.md).
#
#   netns xa-s (sender)          netns xa-r (router)           netns xa-d (receiver)
#   xatun [agent: sender]        plain kernel forwarding       xatun [agent: receiver]
#   xas0 10.91.1.1/24 ===veth=== xar0 10.91.1.254  xar1 10.91.2.254 ===veth=== xad0 10.91.2.1/24
#   fd91:1::1/64                 fd91:1::fe        fd91:2::fe                  fd91:2::1/64
#
# On each host: the peer's prefix is routed into the agent's TUN (MTU 1480, so
# the 20-byte header fits), the agent's raw sockets carry the mark 0x5843 and
# `ip rule fwmark 0x5843 lookup 100` sends them by the real interface.
#
# Checks:
#  1. a 4 MB transfer (IPv4) and a 1 MB one (IPv6) with CUBIC arrive intact
#     (sha256 at both ends);
#  2. a capture on the router's sender-side port sees every TCP segment inside
#     an XCP header: data with H_rtt > 0 and H_cwnd, ACKs with reverse feedback,
#     no plain TCP;
#  3. the clamp holds the kernel: agents restarted with the sender's initial
#     cwnd_xcp at 3000 bytes and the receiver's lab knob --echo-feedback 0 (the
#     ACKs return zero feedback, so cwnd_xcp stays 3000); during an 8 MB
#     transfer the sender's `ss -ti` shows bytes in flight and snd_wnd at most
#     3000 while the kernel's own cwnd allows more, and the kernel reports
#     itself receive-window limited.
# Usage: test_xcp_agent.sh path/to/xcp_agent    (root; TB_BUDGET: watchdog seconds)
set -euo pipefail

AGENT=${1:?usage: test_xcp_agent.sh path/to/xcp_agent}
PY=/usr/bin/python3
E2E=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T0=$(date +%s)

fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "run as root (network namespaces)"
[ -x "$AGENT" ] || fail "no agent binary at $AGENT"

SUF="$$-$RANDOM"
S=xa-s-$SUF
R=xa-r-$SUF
D=xa-d-$SUF
WORK=$(mktemp -d /tmp/xa-e2e.XXXXXX)
declare -A APID=()
BG=()

cleanup() {
	local rc=$? n p
	set +e
	for p in "${APID[@]}" "${BG[@]}"; do
		kill "$p" 2>/dev/null
	done
	for n in "$S" "$R" "$D"; do
		if ip netns list | grep -qw "$n"; then
			for p in $(ip netns pids "$n" 2>/dev/null); do
				kill -9 "$p" 2>/dev/null
			done
			ip netns del "$n" 2>/dev/null
		fi
	done
	if [ "$rc" != 0 ]; then
		for f in "$WORK"/agent-*.log; do
			[ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }
		done
	fi
	[ -n "${TB_KEEP:-}" ] || rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Watchdog: fail (with the trap's teardown) before ctest's TIMEOUT kills us.
if [ -n "${TB_BUDGET:-}" ]; then
	# Its own output closed, so nothing waits on a pipe it holds; its sleep
	# is ended with it.
	( exec >/dev/null 2>&1; sleep "$TB_BUDGET" & sp=$!
	  trap 'kill $sp; exit 0' TERM; wait $sp; kill -TERM $$ ) &
	BG+=($!)
fi

# Sweep namespaces of earlier runs whose shell is gone.
for n in $(ip netns list | awk '/^xa-[srd]-[0-9]+-[0-9]+/{print $1}'); do
	pid=${n#xa-?-}
	pid=${pid%%-*}
	kill -0 "$pid" 2>/dev/null || ip netns del "$n" 2>/dev/null || true
done

# wait_for DEADLINE_S CMD...: poll until CMD succeeds, fail at the deadline.
wait_for() {
	local limit=$1 end
	shift
	end=$(( $(date +%s%N) + limit * 1000000000 ))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s%N)" -lt "$end" ] || fail "timed out (${limit}s) waiting for: $*"
		sleep 0.05
	done
}

# ---- topology ----
for n in "$S" "$R" "$D"; do
	ip netns add "$n"
	ip -n "$n" link set lo up
done
ip link add xas0 netns "$S" type veth peer name xar0 netns "$R"
ip link add xad0 netns "$D" type veth peer name xar1 netns "$R"
ip -n "$S" addr add 10.91.1.1/24 dev xas0
ip -n "$S" addr add fd91:1::1/64 dev xas0 nodad
ip -n "$R" addr add 10.91.1.254/24 dev xar0
ip -n "$R" addr add fd91:1::fe/64 dev xar0 nodad
ip -n "$R" addr add 10.91.2.254/24 dev xar1
ip -n "$R" addr add fd91:2::fe/64 dev xar1 nodad
ip -n "$D" addr add 10.91.2.1/24 dev xad0
ip -n "$D" addr add fd91:2::1/64 dev xad0 nodad
for l in "$S xas0" "$R xar0" "$R xar1" "$D xad0"; do
	set -- $l
	ip -n "$1" link set "$2" up
	ip netns exec "$1" ethtool -K "$2" tx off rx off tso off gso off gro off \
		>/dev/null 2>&1 || true
done
ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1

# host NS LOCAL4 PEER4 ROUTER4 LOCAL6 PEER6 ROUTER6: the agent's routes and rule
host_routes() {
	local ns=$1
	ip -n "$ns" route replace "$3" dev xatun src "$2"
	ip -n "$ns" route replace "$3" via "$4" table 100
	ip -n "$ns" rule add fwmark 0x5843 lookup 100 pref 100 2>/dev/null || true
	ip -n "$ns" -6 route replace "$6" dev xatun src "$5"
	ip -n "$ns" -6 route replace "$6" via "$7" table 100
	ip -n "$ns" -6 rule add fwmark 0x5843 lookup 100 pref 100 2>/dev/null || true
}

# start_agent NAME NS ROLE [OPTIONS...]
start_agent() {
	local name=$1 ns=$2 role=$3
	shift 3
	rm -f "$WORK/agent-$name.json"
	ip netns exec "$ns" "$AGENT" --role "$role" --tun xatun \
		--stats-json "$WORK/agent-$name.json" "$@" >"$WORK/agent-$name.log" 2>&1 &
	APID[$name]=$!
	wait_for 10 grep -q "ready" "$WORK/agent-$name.log"
}

stop_agent() {
	local name=$1
	kill -TERM "${APID[$name]}"
	wait "${APID[$name]}" || fail "agent $name exited with $?"
	unset "APID[$name]"
	[ -s "$WORK/agent-$name.json" ] || fail "agent $name wrote no exit JSON"
}

# jq-free JSON reads: jget FILE EXPR (python expression on d)
jget() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

start_agents() {
	start_agent snd "$S" sender "${SND_OPTS[@]}"
	start_agent rcv "$D" receiver "${RCV_OPTS[@]}"
	# The TUN is re-created with each agent: routes through it go with it.
	host_routes "$S" 10.91.1.1 10.91.2.0/24 10.91.1.254 fd91:1::1 fd91:2::/64 fd91:1::fe
	host_routes "$D" 10.91.2.1 10.91.1.0/24 10.91.2.254 fd91:2::1 fd91:1::/64 fd91:2::fe
}

# xfer FILE PORT: an IPv4 transfer with xfer.py (CUBIC on both sockets)
xfer4() {
	local file=$1 port=$2 tag=$3
	ip netns exec "$D" "$PY" "$E2E/xfer.py" recv --port "$port" --cc cubic --timeout 60 \
		--result "$WORK/recv-$tag.json" >/dev/null &
	local rp=$!
	ip netns exec "$S" "$PY" "$E2E/xfer.py" send --host 10.91.2.1 --port "$port" \
		--cc cubic --file "$file" --timeout 60 --result "$WORK/send-$tag.json" >/dev/null
	wait "$rp" || fail "receiver of $tag failed"
	local want got
	want=$(sha256sum "$file" | cut -d' ' -f1)
	got=$(jget "$WORK/recv-$tag.json" 'd["sha256"]')
	[ "$got" = "$want" ] || fail "$tag: sha256 $got != $want"
	echo "$tag: $(stat -c %s "$file") bytes intact in $(jget "$WORK/recv-$tag.json" \
		'round(d["seconds"], 2)') s"
}

# The IPv6 transfer (xfer.py is IPv4 only): same checks, inline.
xfer6() {
	local file=$1 port=$2
	ip netns exec "$D" "$PY" - "$port" "$WORK/recv6.txt" <<'EOF' &
import hashlib, socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("fd91:2::1", int(sys.argv[1])))
s.listen(1)
s.settimeout(60)
c, _ = s.accept()
c.settimeout(60)
h = hashlib.sha256()
while True:
    b = c.recv(1 << 16)
    if not b:
        break
    h.update(b)
c.close()
open(sys.argv[2], "w").write(h.hexdigest() + "\n")
EOF
	local rp=$!
	ip netns exec "$S" "$PY" - "$port" "$file" <<'EOF'
import socket, sys, time
end = time.monotonic() + 30
while True:
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
    try:
        s.connect(("fd91:2::1", int(sys.argv[1])))
        break
    except OSError:
        s.close()
        if time.monotonic() > end:
            raise
        time.sleep(0.1)
s.settimeout(60)
s.sendall(open(sys.argv[2], "rb").read())
s.shutdown(socket.SHUT_WR)
while s.recv(4096):
    pass
EOF
	wait "$rp" || fail "IPv6 receiver failed"
	[ "$(cat "$WORK/recv6.txt")" = "$(sha256sum "$file" | cut -d' ' -f1)" ] ||
		fail "IPv6: sha256 differs"
	echo "ipv6: $(stat -c %s "$file") bytes intact"
}

head -c 4000000 /dev/urandom >"$WORK/f4"
head -c 1000000 /dev/urandom >"$WORK/f1"
head -c 8000000 /dev/urandom >"$WORK/f8"

# ---- 1 + 2: transfers through the agents, captured on the router ----
SND_OPTS=()
RCV_OPTS=()
start_agents
ip netns exec "$R" "$PY" "$E2E/xcp_capture.py" --iface xar0 --proto 254 \
	--receiver 10.91.2.1 --receiver fd91:2::1 \
	--result "$WORK/cap.json" --ready "$WORK/cap.ready" &
CAP=$!
BG+=($CAP)
wait_for 10 test -e "$WORK/cap.ready"
xfer4 "$WORK/f4" 5001 ipv4
xfer6 "$WORK/f1" 5002
kill -INT "$CAP"
wait "$CAP" || fail "capture failed"
# Diagnostics: XCP packets the receiver's raw socket could not queue.
ip netns exec "$D" nstat -az IpInUnknownProtos Ip6InUnknownProtos | tail -n +2 || true
cat "$WORK/cap.json"
"$PY" - "$WORK/cap.json" <<'EOF' || fail "capture checks"
import json, sys
c = json.load(open(sys.argv[1]))
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok &= bool(cond)
check(c["plain_tcp"] == 0, "no TCP segment crossed without an XCP header (%d)" % c["plain_tcp"])
check(c["xcp_bad"] == 0, "every XCP header parses as version 2")
# 5 MB in segments of at most 1428 bytes: at least 3500 data packets.
check(c["xcp_data"] >= 3500, "data segments carry the XCP header (%d)" % c["xcp_data"])
check(c["xcp_data_rtt"] > 0 and c["rtt_us_max"] > 0, "data headers carry H_rtt > 0")
check(c["cwnd_max"] >= 1428, "data headers carry H_cwnd (max %d)" % c["cwnd_max"])
check(c["feedback_pos"] > 0, "data headers ask for an increase (H_feedback > 0)")
check(c["xcp_reverse"] > 0 and c["xcp_reverse"] == c["rcv_xcp"] == c["rcv_pkts"],
      "every packet from the receiver carries reverse feedback (%d of %d)"
      % (c["xcp_reverse"], c["rcv_pkts"]))
# No XCP router on this path: the feedback comes back as the sender asked.
check(c["reverse_pos"] > 0, "positive reverse feedback returned (%d ACKs)" % c["reverse_pos"])
sys.exit(0 if ok else 1)
EOF
stop_agent snd
stop_agent rcv
NZ='json.dumps({k: v for k, v in d["counters"].items() if v})'
jget "$WORK/agent-snd.json" '"sender: " + '"$NZ"
jget "$WORK/agent-rcv.json" '"receiver: " + '"$NZ"
C='d["counters"]'
IO='d["io"]'
[ "$(jget "$WORK/agent-snd.json" "$C['feedback_applied'] > 0 and $C['rtt_samples'] > 0 \
	and $IO['in_dropped'] == 0 and $IO['wire_tx_err'] == 0")" = True ] ||
	fail "sender agent counters"
[ "$(jget "$WORK/agent-rcv.json" "$C['acks_echoed'] > 0 and $C['data_segs_summed'] > 0 \
	and $IO['in_dropped'] == 0")" = True ] ||
	fail "receiver agent counters"

# ---- 3: the clamp holds the kernel to cwnd_xcp ----
CW=3000
SND_OPTS=(--init-cwnd "$CW")
RCV_OPTS=(--echo-feedback 0)   # lab knob: the ACKs return zero feedback
start_agents
rm -f "$WORK/xfer8.done"
# One sampler process for the whole transfer (no ip netns exec per sample).
ip netns exec "$S" bash -c '
	for i in $(seq 20000); do
		[ -e "$1" ] && break
		ss -tinH dst 10.91.2.1:5003 | tr "\n" " "; echo
	done' _ "$WORK/xfer8.done" >"$WORK/ss.txt" &
SSP=$!
BG+=($SSP)
xfer4 "$WORK/f8" 5003 clamp
touch "$WORK/xfer8.done"
wait "$SSP" || true
stop_agent snd
stop_agent rcv
"$PY" - "$WORK/ss.txt" "$CW" "$WORK/agent-snd.json" <<'EOF' || fail "clamp checks"
import json, re, sys
cw = int(sys.argv[2])
agent = json.load(open(sys.argv[3]))["counters"]
samples = []
for line in open(sys.argv[1]):
    if "bytes_acked:" not in line or "ESTAB" not in line:
        continue
    v = lambda k: int(re.search(r"\b" + k + r":(\d+)", line).group(1)) \
        if re.search(r"\b" + k + r":(\d+)", line) else 0
    samples.append({"inflight": v("bytes_sent") - v("bytes_retrans") - v("bytes_acked"),
                    "snd_wnd": v("snd_wnd"), "cwnd": v("cwnd"), "mss": v("mss"),
                    "rwnd_limited": "rwnd_limited" in line})
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok &= bool(cond)
check(len(samples) >= 3, "%d ss samples during the transfer" % len(samples))
if samples:
    mi = max(s["inflight"] for s in samples)
    mw = max(s["snd_wnd"] for s in samples)
    ck = max(s["cwnd"] * s["mss"] for s in samples)
    print("max bytes in flight %d, max snd_wnd %d, kernel cwnd up to %d bytes, "
          "cwnd_xcp %d" % (mi, mw, ck, cw))
    check(mi <= cw, "bytes in flight <= cwnd_xcp")
    check(0 < mw <= cw, "the window the kernel was given <= cwnd_xcp")
    check(ck > cw, "the kernel's own cwnd would allow more (the clamp is what holds it)")
    check(any(s["rwnd_limited"] for s in samples), "the kernel reports rwnd_limited")
check(agent["rwnd_clamped"] > 0, "agent lowered %d ACK windows" % agent["rwnd_clamped"])
check(agent["feedback_applied"] > 0 and agent["feedback_pos_bytes"] == 0
      and agent["feedback_neg_bytes"] == 0, "zero feedback applied (lab knob)")
sys.exit(0 if ok else 1)
EOF

echo "PASS ($(( $(date +%s) - T0 )) s)"
