#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e (a): TCP through satgw in routed mode. A 20 MB file of random bytes from
# fh to mh and another from mh to fh, each over one TCP connection; the sha256
# must match at both ends, and satgw's counters must agree with what crossed.
# Usage: test_tcp_routed.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

tb_init "${1:-}"
tb_topology routed
tb_satgw_start "$TB_E2E_DIR/policies/routed.yaml" 0

tb_check "ping fh -> mh through satgw" tb_ping fh "$TB_IP_MH" 2

tb_mkfile "$TB_DIR/down.bin" 20
tb_mkfile "$TB_DIR/up.bin" 20
tb_xfer fh mh "$TB_IP_MH" "$TB_DIR/down.bin" 60
tb_xfer mh fh "$TB_IP_FH" "$TB_DIR/up.bin" 60

tb_satgw_stop
[ "$TB_SATGW_RC" -eq 0 ] || tb_fail "satgw exit code $TB_SATGW_RC (3 = mbufs leaked)"
[ -s "$TB_STATS_JSON" ] || tb_fail "no stats JSON written"
tb_check_wire
tb_stats --conserve --dev \
	--expect 'drops.* == 0' \
	--expect 'classes.tcp.packets > 28000' \
	--expect 'classes.malformed.packets == 0' \
	--expect 'rules.to-site-a.packets > 14000' \
	--expect 'rules.to-core.packets > 14000' \
	--expect 'rules.drop-telnet.packets == 0' \
	--expect 'ports.sat.tx_bytes > 20000000' \
	--expect 'ports.terr.tx_bytes > 20000000' \
	--expect 'flows.created >= 2' \
	--expect 'mempool.in_use == 0'
tb_pass
