#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/e2e/demo.sh SATGW: the demo testbed, run by `./setup.sh demo` once satgw is
# built (needs root).
#
#   fh (server 10.10.0.1) -- [terr] satgw hub [sat] -- mh (client 10.20.1.1)
#
# Three network namespaces joined by veth pairs, satgw in the middle on
# net_af_packet (no NIC, no hugepages), routing with the policy embedded
# below. Runs iperf3 for DEMO_SECONDS (5) s for goodput, sends a DEMO_MB (8)
# MiB file of random bytes over one TCP connection and compares its sha256 at
# both ends, prints what crossed and satgw's own counters (per port, per
# class, per rule), and tears everything down, also on Ctrl-C or failure.
# Exit 0 when the transfers worked and the checksums match.
set -euo pipefail

SATGW=${1:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SECONDS_IPERF=${DEMO_SECONDS:-5}
FILE_MB=${DEMO_MB:-8}

say() { printf '\n== %s\n' "$*"; }
die() {
	printf 'demo: %s\n' "$*" >&2
	exit 1
}
[ -n "$SATGW" ] || die "usage: $0 /path/to/satgw"
[ "$(id -u)" -eq 0 ] || die "run me as root: the testbed needs network namespaces"
[ -x "$SATGW" ] || die "no satgw binary at $SATGW (build it first: ./setup.sh demo does)"

# ---- testbed ---------------------------------------------------------------------
TB_NAME=demo
TB_BUDGET=${DEMO_BUDGET:-120}
# shellcheck source=testbed.sh
source "$HERE/testbed.sh"
DEMO_T0=$(date +%s.%N)
tb_init "$SATGW"
tb_topology routed

POLICY="$TB_DIR/demo-hub.yaml"
cat >"$POLICY" <<EOF
# The demo hub: core side (port terr, server fh) and satellite side (port sat,
# remote site-a with the client mh). Routed: satgw rewrites MACs towards the
# next hops, which carry the fh0 and mh0 MACs of the testbed.
version: 1
role: hub
ports:
  - {name: terr, device: net_af_packet0, role: terrestrial, peer: sat}
  - {name: sat, device: net_af_packet1, role: satellite, peer: terr}
next_hops:
  - {name: to-mh, port: sat, mac: "$TB_MAC_MH"}
  - {name: to-fh, port: terr, mac: "$TB_MAC_FH"}
terminals:
  - {name: site-a, id: 1001, prefixes: [10.20.1.0/24]}
rules:
  - {name: drop-telnet, match: {proto: [tcp], dst_ports: [23]}, action: drop}
  - {name: to-site-a, match: {dst: [10.20.1.0/24]}, action: forward, next_hop: to-mh}
  - {name: to-core, match: {dst: [10.10.0.0/24]}, action: forward, next_hop: to-fh}
workers: {idle_backoff_us: 100}
EOF
"$SATGW" --check-config "$POLICY" >/dev/null || die "the demo policy does not validate"
tb_satgw_start "$POLICY" 0
tb_check "ping fh -> mh through satgw" tb_ping fh "$TB_IP_MH" 3 >/dev/null

# ---- traffic -------------------------------------------------------------------
say "iperf3: $SECONDS_IPERF s of TCP from the server (fh) to the client (mh), through satgw"
port=$(tb_rand_port)
tb_bg fh iperf3-server iperf3 -s -1 -p "$port" -B "$TB_IP_FH"
tb_wait_listen fh "$port"
tb_ns mh iperf3 -c "$TB_IP_FH" -p "$port" -R -t "$SECONDS_IPERF" -J >"$TB_DIR/iperf3.json" ||
	{ tail -n 20 "$TB_DIR/iperf3.json" >&2; tb_fail "iperf3 failed"; }
read -r IPERF_BYTES IPERF_BPS IPERF_RETR < <("$TB_PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
r, s = d["end"]["sum_received"], d["end"]["sum_sent"]
print(r["bytes"], r["bits_per_second"], s.get("retransmits", 0))' "$TB_DIR/iperf3.json")

say "file: $FILE_MB MiB of random bytes, fh -> mh over one TCP connection"
tb_mkfile "$TB_DIR/file.bin" "$FILE_MB"
XFER_OK=0
if (tb_xfer fh mh "$TB_IP_MH" "$TB_DIR/file.bin" 30); then
	XFER_OK=1
fi
SHA_SENT=$(sha256sum "$TB_DIR/file.bin" | cut -d' ' -f1)
SHA_RECV=$(ls "$TB_DIR"/xfer-fh-mh-*-recv.json >/dev/null 2>&1 &&
	"$TB_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["sha256"])' "$TB_DIR"/xfer-fh-mh-*-recv.json || echo none)
XFER_BYTES=$("$TB_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"])' "$TB_DIR"/xfer-fh-mh-*-recv.json 2>/dev/null || echo 0)
XFER_SECS=$("$TB_PY" -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["seconds"])' "$TB_DIR"/xfer-fh-mh-*-recv.json 2>/dev/null || echo 0)

tb_satgw_stop

# ---- summary -------------------------------------------------------------------
say "results"
"$TB_PY" - "$IPERF_BYTES" "$IPERF_BPS" "$IPERF_RETR" "$SECONDS_IPERF" <<'PY'
import sys
b, bps, retr, secs = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print("  iperf3   %s s, 1 TCP stream fh -> mh: %.1f MB received, goodput %.0f Mbit/s, %d retransmits"
      % (secs, b / 1e6, bps / 1e6, retr))
PY
if [ "$SHA_SENT" = "$SHA_RECV" ]; then
	verdict="MATCH"
else
	verdict="DIFFER"
fi
printf '  file     %s bytes sent, %s bytes received in %s s\n' "$(stat -c %s "$TB_DIR/file.bin")" "$XFER_BYTES" "$XFER_SECS"
printf '           sha256 sent     %s\n           sha256 received %s  -> %s\n' "$SHA_SENT" "$SHA_RECV" "$verdict"
printf '  satgw    exit code %s; %s frame(s) lost in the af_packet RX rings before satgw\n\n' \
	"$TB_SATGW_RC" "${TB_RING_DROPS:-?}"
"$TB_PY" "$TB_E2E_DIR/stats.py" summary "$TB_STATS_JSON" | sed 's/^./  &/'
echo
echo "  live counters while it runs: dpdk-telemetry.py -f <file-prefix>, then /satgw/stats, /satgw/ports, /satgw/rules"

rc=0
if [ "$XFER_OK" != 1 ] || [ "$verdict" != MATCH ]; then
	echo "demo: FAILED: the file did not arrive intact" >&2
	rc=1
fi
if [ "$TB_SATGW_RC" != 0 ]; then
	echo "demo: FAILED: satgw exited with $TB_SATGW_RC" >&2
	rc=1
fi
printf '\ndemo: %s in %.0f s (build not counted); testbed removed\n' \
	"$([ $rc = 0 ] && echo OK || echo FAILED)" \
	"$(awk -v a="$(date +%s.%N)" -v b="$DEMO_T0" 'BEGIN { print a - b }')"
exit "$rc"
