#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e (b): transparent mode (fh and mh on one subnet, ARP through satgw) with
# two workers on one net_af_packet queue pair: worker 0 reads both ports and
# hands the packets of worker 1's terminal over a ring. Three 20 MB transfers
# (fh -> mh-a, fh -> mh-b, mh-b -> fh) must arrive intact; both workers must
# have done work, the hand-off counters must be > 0 and balanced, and the
# counters must add up with no mbuf leaked.
# Usage: test_transparent_2w.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

tb_init "${1:-}"
tb_topology transparent
tb_satgw_start "$TB_E2E_DIR/policies/transparent-2w.yaml" 0-1

# No static neighbours here: these pings resolve ARP through satgw.
tb_check "ping fh -> mh-a (ARP through satgw)" tb_ping fh "$TB_IP_MH_T" 2
tb_check "ping fh -> mh-b (ARP through satgw)" tb_ping fh "$TB_IP_MH_T2" 2

tb_mkfile "$TB_DIR/a.bin" 20
tb_mkfile "$TB_DIR/b.bin" 20
tb_mkfile "$TB_DIR/c.bin" 20
tb_xfer fh mh "$TB_IP_MH_T" "$TB_DIR/a.bin" 60
tb_xfer fh mh "$TB_IP_MH_T2" "$TB_DIR/b.bin" 60
tb_xfer mh fh "$TB_IP_FH" "$TB_DIR/c.bin" 60 "$TB_IP_MH_T2"

# Per-worker view while running: both workers own live flows and worker 1 was fed.
# Read once satgw has settled (nothing received for 20 ms, every worker idle), so
# that what worker 0 handed off and what worker 1 took are not read mid-flight.
tb_wait_idle 10
tb_tel /satgw/workers >"$TB_DIR/workers.json"
"$TB_PY" - "$TB_DIR/workers.json" <<'EOF' || tb_fail "per-worker counters (/satgw/workers) do not show both workers busy"
import json, sys
w = json.load(open(sys.argv[1]))
print("  workers:", json.dumps(w, sort_keys=True))
w0, w1 = w["worker0"], w["worker1"]
ok = (w0["rx_queues"] >= 1 and w0["handoff_out"] > 0 and w1["handoff_in"] > 0
      and w1["handoff_in"] <= w0["handoff_out"] + w1["handoff_out"])
sys.exit(0 if ok else 1)
EOF

tb_satgw_stop
[ "$TB_SATGW_RC" -eq 0 ] || tb_fail "satgw exit code $TB_SATGW_RC (3 = mbufs leaked)"
tb_check_wire
tb_stats --conserve --dev \
	--expect 'workers == 2' \
	--expect 'drops.* == 0' \
	--expect 'handoff.out > 10000' \
	--expect 'handoff.in > 10000' \
	--expect 'classes.tcp.packets > 40000' \
	--expect 'classes.non_ip.packets >= 4' \
	--expect 'rules.site-a.packets > 14000' \
	--expect 'rules.site-b.packets > 28000' \
	--expect 'flows.created >= 3' \
	--expect 'mempool.in_use == 0'
# Nothing handed off was lost: every packet put on a ring was taken off it.
out=$("$TB_PY" "$TB_E2E_DIR/stats.py" get "$TB_STATS_JSON" handoff.out)
in=$("$TB_PY" "$TB_E2E_DIR/stats.py" get "$TB_STATS_JSON" handoff.in)
[ "$out" = "$in" ] || tb_fail "handoff out $out != in $in"
tb_pass
