#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e (g): dpdk-dumpcap against a running satgw. A DPDK secondary process
# needs hugepages (a --no-huge primary cannot serve one), so this test
# reserves 2 MB hugepages itself (and mounts hugetlbfs when nothing is on
# /dev/hugepages), runs satgw with them, captures N packets of port terr
# (net_af_packet0) while fh pings mh, and reads the pcapng with scapy: N
# packets, all ICMP between fh and mh, the replies already rewritten by the
# to-core next hop (source MAC terr0, destination MAC fh0). Everything,
# nr_hugepages included, is restored at exit.
# Usage: test_dumpcap.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

N=${E2E_DUMPCAP_PACKETS:-20}

tb_init "${1:-}"
command -v dpdk-dumpcap >/dev/null || tb_fail "dpdk-dumpcap not found (apt-get install dpdk)"
tb_topology routed
tb_hugepages_reserve 512
tb_satgw_start "$TB_E2E_DIR/policies/routed.yaml" 0

# Echoes until the capture is complete (not for a guessed time: dpdk-dumpcap's
# start, a secondary process, takes what it takes on a loaded machine).
tb_bg fh pinger "$TB_PY" "$TB_E2E_DIR/ping.py" -c 1000000 -i 0.02 "$TB_IP_MH"
pinger=$TB_LAST_PID
cap="$TB_DIR/terr.pcapng"
if ! timeout 45 ip netns exec "$TB_NS_GW" dpdk-dumpcap --file-prefix "$TB_PREFIX" \
	-i net_af_packet0 -c "$N" -w "$cap" >"$TB_DIR/dumpcap.log" 2>&1; then
	cat "$TB_DIR/dumpcap.log" >&2
	tb_fail "dpdk-dumpcap failed"
fi
tb__alive "$pinger" || { cat "$TB_DIR/pinger.log" >&2; tb_fail "the pinger stopped before the capture was complete"; }
kill -TERM "$pinger" 2>/dev/null || true
tb_wait_pid "$pinger" 10 || true
tb_log "dumpcap: $(grep -E 'Packets received' "$TB_DIR/dumpcap.log" || true)"

"$TB_PY" - "$cap" "$N" "$TB_IP_FH" "$TB_IP_MH" "$TB_MAC_FH" "$TB_MAC_GT" <<'PY' || tb_fail "the capture is not what crossed port terr"
import sys
from scapy.all import rdpcap, Ether, IP, ICMP
path, n, fh, mh, mac_fh, mac_gt = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
pk = rdpcap(path)
print("  %s: %d packets" % (path, len(pk)))
bad = []
req = rep = 0
for p in pk:
    if not (p.haslayer(Ether) and p.haslayer(IP) and p.haslayer(ICMP)):
        bad.append("not ICMP/IPv4: " + p.summary())
        continue
    ip, eth = p[IP], p[Ether]
    if (ip.src, ip.dst) == (fh, mh) and p[ICMP].type == 8:
        req += 1   # received on terr from fh0
        ok = (eth.src, eth.dst) == (mac_fh, mac_gt)
    elif (ip.src, ip.dst) == (mh, fh) and p[ICMP].type == 0:
        rep += 1   # sent on terr after the next-hop rewrite
        ok = (eth.src, eth.dst) == (mac_gt, mac_fh)
    else:
        ok = False
    if not ok:
        bad.append("unexpected: %s %s > %s" % (p.summary(), eth.src, eth.dst))
print("  echo requests (rx) %d, echo replies (tx, rewritten) %d" % (req, rep))
for b in bad[:10]:
    print("  " + b)
# dpdk-dumpcap -c N stops after the burst that reaches N: it may write up to a
# burst (32) more, all of which crossed the port (a CI run wrote 21 of 20)
sys.exit(0 if n <= len(pk) <= n + 32 and not bad and req > 0 and rep > 0 else 1)
PY

tb_satgw_stop
[ "$TB_SATGW_RC" -eq 0 ] || tb_fail "satgw exit code $TB_SATGW_RC (3 = mbufs leaked)"
tb_stats --conserve --expect 'drops.* == 0' --expect 'mempool.in_use == 0' \
	--expect "classes.icmp.packets >= $N"
tb_pass
