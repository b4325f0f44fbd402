#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e (e): drop rule and malformed packets (routed mode). scapy sends from fh,
# straight to satgw's terr MAC: a TCP SYN to port 23 (rule drop-telnet), an
# IPv4 header cut short, an IPv4 header with IHL 3, a TCP option of length 0
# and an MSS option of length 3, plus a valid UDP datagram as the control.
# A sniffer on mh0 must see the control and none of the others; satgw must
# count each malformed packet under its reason and drop it, count the SYN on
# the rule; ARP (who-has across satgw) and ping must still work.
# Usage: test_malformed.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

tb_init "${1:-}"
"$TB_PY" -c 'import scapy' 2>/dev/null || tb_fail "scapy not importable by $TB_PY (apt-get install python3-scapy)"
tb_topology routed
tb_satgw_start "$TB_E2E_DIR/policies/routed.yaml" 0

tb_bg mh sniffer "$TB_PY" "$TB_E2E_DIR/craft.py" sniff --iface mh0 --ready "$TB_DIR/sniff.ready" \
	--out "$TB_DIR/mh.pcap" --seconds 60 --until-end
sniffer=$TB_LAST_PID
for _ in $(seq 1 300); do [ -e "$TB_DIR/sniff.ready" ] && break; tb__alive "$sniffer" || break; sleep 0.1; done
[ -e "$TB_DIR/sniff.ready" ] || { cat "$TB_DIR/sniffer.log" >&2; tb_fail "sniffer on mh0 did not start"; }

tb_ns fh "$TB_PY" "$TB_E2E_DIR/craft.py" send --iface fh0 --dst-mac "$TB_MAC_GT" --src-mac "$TB_MAC_FH" \
	--src "$TB_IP_FH" --dst "$TB_IP_MH" >&2 || tb_fail "scapy could not send"
# ARP across satgw (non-IP goes to the peer port untouched) and a valid ping.
tb_check "ARP who-has $TB_IP_MH from fh answered through satgw" \
	tb_ns fh "$TB_PY" "$TB_E2E_DIR/craft.py" arp --iface fh0 --psrc "$TB_IP_FH" --pdst "$TB_IP_MH"
tb_check "ping fh -> mh" tb_ping fh "$TB_IP_MH" 3
# Last, a datagram that ends the capture when it reaches mh0: satgw forwards in
# order, so the sniffer has then seen everything satgw let through before it.
tb_ns fh "$TB_PY" "$TB_E2E_DIR/craft.py" end --iface fh0 --dst-mac "$TB_MAC_GT" --src-mac "$TB_MAC_FH" \
	--src "$TB_IP_FH" --dst "$TB_IP_MH" >&2 || tb_fail "scapy could not send"
tb_wait_pid "$sniffer" 60 || { cat "$TB_DIR/sniffer.log" >&2; tb_fail "the sniffer on mh0 failed or never saw the end datagram"; }

"$TB_PY" "$TB_E2E_DIR/craft.py" scan "$TB_DIR/mh.pcap" --ignore-src "$TB_MAC_MH" >"$TB_DIR/scan.json"
"$TB_PY" - "$TB_DIR/scan.json" <<'PY' || tb_fail "mh saw what satgw should have dropped, or missed the control packet"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["markers"]
print("  at mh0: %d frames; markers %s" % (d["frames"], json.dumps(m, sort_keys=True)))
leaked = [k for k in ("telnet", "ip4trunc", "badihl", "optlen0", "msslen3") if m[k]]
if leaked:
    print("  FAIL crossed satgw but must be dropped:", ", ".join(leaked))
if m["valid"] != 1:
    print("  FAIL the valid control datagram reached mh %d time(s), want 1" % m["valid"])
sys.exit(1 if leaked or m["valid"] != 1 else 0)
PY

tb_satgw_stop
[ "$TB_SATGW_RC" -eq 0 ] || tb_fail "satgw exit code $TB_SATGW_RC (3 = mbufs leaked)"
tb_check_wire
tb_stats --conserve \
	--expect 'rules.drop-telnet.packets == 1' \
	--expect 'drops.rule == 1' \
	--expect 'actions.drop == 1' \
	--expect 'malformed.ip4_trunc == 1' \
	--expect 'malformed.ip4_bad_ihl == 1' \
	--expect 'malformed.tcp_bad_option == 2' \
	--expect 'malformed.* == 4' \
	--expect 'classes.malformed.packets == 4' \
	--expect 'drops.malformed == 4' \
	--expect 'drops.* == 5' \
	--expect 'classes.non_ip.packets >= 2' \
	--expect 'classes.icmp.packets >= 6' \
	--expect 'classes.udp.packets >= 1' \
	--expect 'mempool.in_use == 0'
tb_pass
