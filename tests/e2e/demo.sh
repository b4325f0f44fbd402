#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/e2e/demo.sh SATGW: the demo, run by `./setup.sh demo` once satgw is
# built (needs root).
#
#   fh (server 10.10.0.1) -- [hub] -- [emulator: GEO link] -- [terminal] -- mh (client 10.20.1.1)
#
# testbed.sh's three-box chain: five network namespaces joined by veth pairs,
# three satgw processes on net_af_packet (no NIC, no hugepages): a hub and a
# terminal that route, and between them an emulator imitating a GEO satellite
# link (policies/chain-emulator-ber.yaml): 270 ms each way (a round trip of
# about 541 ms), 20 Mbit/s forward and 2 Mbit/s return, bit errors at 1e-5 on
# the forward link (11.4% of full-size frames lost).
#
# The client downloads a file of random bytes from the server over one Linux
# TCP connection (CUBIC) for DEMO_SECONDS (12) s, three times:
#   without  hub and terminal just route (policies/chain-hub.yaml,
#            chain-terminal.yaml): TCP alone faces the losses;
#   with     hub and terminal carry IP over satlink, the reliable link layer
#            (policies/chain-hub-satlink.yaml, chain-terminal-satlink.yaml):
#            lost frames are found and resent across the link, TCP sees none;
#   split    the same satlink, and the connection split at hub and terminal
#            (policies/chain-hub-split.yaml, chain-terminal-split.yaml): the
#            server's connection ends at the hub, the client's at the
#            terminal, the bytes cross as a satlink stream; neither Linux
#            CUBIC sees the satellite's round trip or its repairs. Nothing is
#            NATed: each end sees the other's own address and port.
# For each: goodput, whether the bytes received are exactly the file's first
# bytes (sha256), the sender's TCP retransmissions, the link's counters
# (emulator: offered, delivered, dropped by cause; satlink: frames,
# retransmissions, delivered), then a one-line comparison. Everything is torn
# down at the end, also on Ctrl-C or failure. Exit 0 when both downloads
# worked and their checksums match. DEMO_RUNS="without" (or "with", "split", or
# any list of them) runs those.
set -euo pipefail

SATGW=${1:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SECS=${DEMO_SECONDS:-12}
FILE_MB=${DEMO_MB:-40}
RUNS=${DEMO_RUNS:-without with split}

die() {
	printf 'demo: %s\n' "$*" >&2
	exit 1
}
[ -n "$SATGW" ] || die "usage: $0 /path/to/satgw"
[ "$(id -u)" -eq 0 ] || die "run me as root: the testbed needs network namespaces"
[ -x "$SATGW" ] || die "no satgw binary at $SATGW (build it first: ./setup.sh demo does)"

TB_NAME=demo
TB_BUDGET=${DEMO_BUDGET:-150}
# shellcheck source=testbed.sh
source "$HERE/testbed.sh"
DEMO_T0=$(date +%s.%N)
tb_init "$SATGW"
P=$TB_E2E_DIR/policies
EMU_POLICY=$P/chain-emulator-ber.yaml
pols=("$EMU_POLICY")
[[ " $RUNS " != *" without "* ]] || pols+=("$P/chain-hub.yaml" "$P/chain-terminal.yaml")
[[ " $RUNS " != *" with "* ]] || pols+=("$P/chain-hub-satlink.yaml" "$P/chain-terminal-satlink.yaml")
[[ " $RUNS " != *" split "* ]] || pols+=("$P/chain-hub-split.yaml" "$P/chain-terminal-split.yaml")
for f in "${pols[@]}"; do
	"$SATGW" --check-config "$f" >"$TB_DIR/check.out" 2>&1 ||
		{ cat "$TB_DIR/check.out" >&2; die "$(basename "$f") does not validate"; }
done
tb_topology chain
eval "$("$TB_PY" "$TB_E2E_DIR/chain.py" params "$EMU_POLICY")"

printf '\nsatgw demo: a TCP download across an emulated GEO satellite link, without and with\n'
printf 'satlink, the reliable link layer between hub and terminal, and split at both.\n\n'
printf '  fh (server) -- [hub] -- [emulator] -- [terminal] -- mh (client)\n'
printf '  link: %s ms each way, %s Mbit/s forward with bit errors at %s (%.1f%% of 1514-byte frames lost),\n' \
	"$FWD_DELAY_MS" "$(awk -v r="$FWD_RATE" 'BEGIN { print r / 1e6 }')" "$FWD_BER" \
	"$(awk -v b="$FWD_BER" 'BEGIN { print (1 - exp(8 * 1514 * log(1 - b))) * 100 }')"
printf '        %s Mbit/s return; one TCP connection (cubic) for %s s per run\n\n' \
	"$(awk -v r="$RET_RATE" 'BEGIN { print r / 1e6 }')" "$SECS"

tb_mkfile "$TB_DIR/file.bin" "$FILE_MB"
RES=$TB_DIR/results.txt
: >"$RES"
NSTAT_KEYS=(TcpOutSegs TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPSackRecovery TcpExtTCPLossProbes)

# run LABEL HUB_POLICY TERMINAL_POLICY
run() {
	local label=$1 hub=$2 term=$3 box k v
	declare -A n0=()
	tb_log "run '$label': starting emulator, hub ($(basename "$hub")), terminal ($(basename "$term"))"
	tb_box_start emu "$EMU_POLICY" 1
	tb_box_start hub "$hub" 0
	tb_box_start term "$term" 0
	tb_wait_path fh "$TB_IP_MH" 15
	while read -r k v; do n0[$k]=$v; done < <(tb_nstat fh "${NSTAT_KEYS[@]}")
	tb_log "run '$label': downloading for $SECS s"
	tb_xfer_timed fh mh "$TB_IP_MH" "$TB_DIR/file.bin" "$SECS"
	{
		echo "$label bytes $TB_XFER_BYTES"
		echo "$label seconds $TB_XFER_SECONDS"
		echo "$label complete $TB_XFER_COMPLETE"
		echo "$label sha256 $TB_XFER_SHA"
		echo "$label result $TB_XFER_RESULT"
		while read -r k v; do echo "$label $k $((v - ${n0[$k]:-0}))"; done < <(tb_nstat fh "${NSTAT_KEYS[@]}")
	} >>"$RES"
	# Hub and terminal first (their keepalives are the last traffic), then the
	# link drains (270 ms), then the emulator: its counters are then final.
	tb_boxes_stop hub term
	sleep 0.8
	tb_box_stop emu
	for box in hub emu term; do
		[ "${TB_BOX_RC[$box]}" = 0 ] || die "satgw $box exited with ${TB_BOX_RC[$box]} in run '$label'"
		cp "$(tb_box_json "$box")" "$TB_DIR/$label-$box.json"
	done
}

for r in $RUNS; do
	case "$r" in
	without) run without "$P/chain-hub.yaml" "$P/chain-terminal.yaml" ;;
	with) run with "$P/chain-hub-satlink.yaml" "$P/chain-terminal-satlink.yaml" ;;
	split) run split "$P/chain-hub-split.yaml" "$P/chain-terminal-split.yaml" ;;
	*) die "DEMO_RUNS: 'without', 'with' and/or 'split', not '$r'" ;;
	esac
done

# ---- results ---------------------------------------------------------------------
echo
"$TB_PY" - "$RES" "$TB_DIR" "$FWD_RATE" "$TB_E2E_DIR/satlink.py" "$RUNS" <<'PY'
import json, os, subprocess, sys
res_file, d, rate, slpy, runs = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5].split()
R = {}
for line in open(res_file):
    label, k, v = line.split(None, 2)
    R.setdefault(label, {})[k] = v.strip()
title = {"without": "WITHOUT satlink: hub and terminal only route; TCP alone faces the losses",
         "with": "WITH satlink: IP rides the reliable link layer between hub and terminal",
         "split": "SPLIT: the connection ends at hub and terminal; its bytes ride a satlink stream"}
good = {}
for label in runs:
    r = R[label]
    b, s = int(r["bytes"]), float(r["seconds"])
    bps = b * 8 / s if s > 0 else 0
    good[label] = bps
    prog = json.load(open(r["result"])).get("progress", [])
    half = [p for p in prog if p[0] >= s / 2]
    late = ""
    if len(half) >= 2 and half[-1][0] > half[0][0]:
        late = ", %.2f Mbit/s over its last %.0f s" % (
            (half[-1][1] - half[0][1]) * 8 / (half[-1][0] - half[0][0]) / 1e6, half[-1][0] - half[0][0])
    print("== %s" % title[label])
    print("  download  %.2f MB in %.1f s%s: goodput %.2f Mbit/s (%.1f%% of the %g Mbit/s link)%s" % (
        b / 1e6, s, " (the whole file)" if r["complete"] == "1" else "", bps / 1e6,
        bps / rate * 100, rate / 1e6, late))
    print("  checksum  sha256 of the %d bytes received = sha256 of the file's first %d bytes: MATCH"
          % (b, b))
    print("  sender    TCP: %s segments sent, %s retransmitted, %s timeouts, %s SACK recoveries, "
          "%s loss probes" % (r.get("TcpOutSegs", "?"), r.get("TcpRetransSegs", "?"),
                              r.get("TcpExtTCPTimeouts", "?"), r.get("TcpExtTCPSackRecovery", "?"),
                              r.get("TcpExtTCPLossProbes", "?")))
    link = json.load(open(os.path.join(d, "%s-emu.json" % label)))["link"]
    for dn in ("forward", "return"):
        l = link[dn]
        print("  link %-7s offered %6d frames, delivered %6d, dropped: bit errors %d, queue %d, "
              "outage %d" % (dn, l["offered_packets"], l["delivered_packets"], l["dropped_loss"],
                             l["dropped_queue"], l["dropped_outage"]))
    if label in ("with", "split"):
        for box, what in (("hub", "hub"), ("term", "terminal")):
            out = subprocess.run(["/usr/bin/python3", slpy, "summary",
                                  os.path.join(d, "%s-%s.json" % (label, box)), "--label", what],
                                 capture_output=True, text=True)
            for line in (out.stdout or out.stderr).splitlines():
                print("  satlink   " + line)
    else:
        print("  satlink   (not used)")
    if label == "split":
        for box, what in (("hub", "hub"), ("term", "terminal")):
            sp = json.load(open(os.path.join(d, "split-%s.json" % box))).get("split", {})
            c = sp.get("counters", sp)
            print("  split     %-8s opened %s, accepted %s, bypassed %s, relay overflows %s" % (
                what, c.get("opened", "?"), c.get("accepted", "?"),
                sum(v for k, v in c.items() if k.startswith("bypassed_")),
                c.get("relay_clipped", "?")))
            # The run is the split's only if the connection was split, intact.
            want = "opened" if box == "hub" else "accepted"
            if c.get(want, 0) < 1 or c.get("relay_clipped", 1) != 0:
                print("demo: the split run's %s did not split the download (%s %s, relay "
                      "overflows %s)" % (what, want, c.get(want), c.get("relay_clipped")))
                sys.exit(1)
    print()
if "split" in good and "with" in good:
    s_, w = good["split"], good["with"]
    print("split:   %.2f Mbit/s against %.2f Mbit/s with satlink alone (%.1fx) over the same link; "
          "the server's TCP retransmitted %s segments" % (
              s_ / 1e6, w / 1e6, s_ / w if w > 0 else float("inf"),
              R["split"].get("TcpRetransSegs", "?")))
if "with" in good and "without" in good:
    w, wo = good["with"], good["without"]
    rw, rwo = R["with"].get("TcpRetransSegs", "?"), R["without"].get("TcpRetransSegs", "?")
    print("satlink: %.2f Mbit/s against %.2f Mbit/s without, %s the goodput over the same lossy GEO "
          "link (TCP retransmitted %s segments with, %s without)" % (
              w / 1e6, wo / 1e6, ("%.0fx" % (w / wo)) if wo > 0 else "infinitely more", rw, rwo))
PY
printf '\ndemo: OK in %.0f s (build not counted); testbed removed\n' \
	"$(awk -v a="$(date +%s.%N)" -v b="$DEMO_T0" 'BEGIN { print a - b }')"
