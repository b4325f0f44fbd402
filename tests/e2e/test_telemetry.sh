#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# e2e (d): telemetry through the real dpdk-telemetry.py. After N pings and a
# 4 MB TCP transfer (routed mode), /satgw/stats, /satgw/ports, /satgw/rules,
# /satgw/config and /satgw/workers must answer JSON with the expected keys
# and values that agree with the traffic sent (class icmp >= 2N, rule
# counters >= N each way, port counters mirror each other, generation 1).
# Usage: test_telemetry.sh /path/to/satgw
set -euo pipefail
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"

N=${E2E_PINGS:-20}

tb_init "${1:-}"
TEL=$(command -v dpdk-telemetry.py) || tb_fail "dpdk-telemetry.py not found (apt-get install dpdk)"
tb_topology routed
POLICY="$TB_E2E_DIR/policies/routed.yaml"
tb_satgw_start "$POLICY" 0

tb_check "$N pings fh -> mh" tb_ping fh "$TB_IP_MH" "$N" >/dev/null
tb_mkfile "$TB_DIR/f.bin" 4
tb_xfer fh mh "$TB_IP_MH" "$TB_DIR/f.bin" 30
# The counters below must add up: read them once satgw has settled (no packet
# for 20 ms and its TX buffers flushed), not after a guessed sleep.
tb_wait_idle 10

# The real tool, fed commands on stdin: one JSON line per command.
printf '%s\n' /satgw/stats /satgw/ports /satgw/rules /satgw/config /satgw/workers |
	"$TB_PY" "$TEL" -f "$TB_PREFIX" >"$TB_DIR/telemetry.out" 2>"$TB_DIR/telemetry.err" ||
	{ cat "$TB_DIR/telemetry.err" >&2; tb_fail "dpdk-telemetry.py failed"; }

"$TB_PY" - "$TB_DIR/telemetry.out" "$N" "$POLICY" "$TB_XFER_BYTES" <<'PY' || tb_fail "telemetry answers are wrong (see above; raw output in $TB_DIR/telemetry.out)"
import json, sys
path, n, policy, xbytes = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
lines = [l for l in open(path).read().splitlines() if l.strip()]
docs = {}
for l in lines:
    d = json.loads(l)
    docs.update(d)
bad = []
def want(cond, what):
    print("  %s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        bad.append(what)
for c in ("/satgw/stats", "/satgw/ports", "/satgw/rules", "/satgw/config", "/satgw/workers"):
    want(isinstance(docs.get(c), dict), "%s answered a JSON object" % c)
if bad:
    sys.exit(1)
st, po, ru, cf, wk = (docs[c] for c in ("/satgw/stats", "/satgw/ports", "/satgw/rules",
                                         "/satgw/config", "/satgw/workers"))

keys = ["rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "class_packets", "class_bytes",
        "malformed", "actions", "drops", "unmatched", "flows_active", "flows_created",
        "handoff_out", "handoff_in", "mbufs_in_use", "mbufs_total", "reloads_ok",
        "reloads_failed", "policy_generation"]
want(all(k in st for k in keys), "stats has all expected keys (missing: %s)" % [k for k in keys if k not in st])
cls = st.get("class_packets", {})
want(cls.get("icmp", 0) >= 2 * n, "stats class icmp %s >= 2N = %d" % (cls.get("icmp"), 2 * n))
want(cls.get("tcp", 0) > xbytes // 1500, "stats class tcp %s > %d" % (cls.get("tcp"), xbytes // 1500))
want(st["rx_packets"] == st["tx_packets"], "stats rx %d == tx %d" % (st["rx_packets"], st["tx_packets"]))
want(sum(st["drops"].values()) == 0, "stats drops all 0: %s" % st["drops"])
want(st["rx_bytes"] > xbytes, "stats rx_bytes %d > transfer %d" % (st["rx_bytes"], xbytes))
want(st["policy_generation"] == 1 and st["reloads_ok"] == 0, "stats generation 1, no reloads")
want(st["flows_created"] >= 1, "stats flows_created %d >= 1" % st["flows_created"])
# The timer wheels: each live flow holds its idle timer; none refused, none deferred.
want(st.get("timers_active", -1) >= st["flows_active"] >= 1,
     "stats timers_active %s >= flows_active %d >= 1" % (st.get("timers_active"), st["flows_active"]))
want(st.get("timers_start_failed") == 0 and st.get("timers_carried") == 0,
     "stats timers_start_failed %s and timers_carried %s are 0" % (
         st.get("timers_start_failed"), st.get("timers_carried")))
want(0 <= st["mbufs_in_use"] <= st["mbufs_total"] and st["mbufs_total"] > 0,
     "stats mbufs in use %d of %d" % (st["mbufs_in_use"], st["mbufs_total"]))

want(set(po) == {"terr", "sat"}, "ports are terr and sat: %s" % sorted(po))
if set(po) == {"terr", "sat"}:
    t, s = po["terr"], po["sat"]
    want((t["device"], t["driver"], t["role"], t["peer"]) == ("net_af_packet0", "net_af_packet", "terrestrial", "sat"),
         "terr: device/driver/role/peer %s" % [t["device"], t["driver"], t["role"], t["peer"]])
    want((s["device"], s["role"], s["peer"]) == ("net_af_packet1", "satellite", "terr"),
         "sat: device/role/peer %s" % [s["device"], s["role"], s["peer"]])
    want(t["rx_packets"] == s["tx_packets"] and s["rx_packets"] == t["tx_packets"],
         "ports mirror: terr rx %d = sat tx %d, sat rx %d = terr tx %d" % (
             t["rx_packets"], s["tx_packets"], s["rx_packets"], t["tx_packets"]))
    want(t["rx_packets"] >= n and s["rx_packets"] >= n, "each port received >= N")
    want(t["rx_bytes"] > xbytes, "terr rx_bytes %d > transfer %d" % (t["rx_bytes"], xbytes))
    for name, p in po.items():
        want(p["dev_ipackets"] == p["rx_packets"] and p["dev_opackets"] == p["tx_packets"],
             "%s: device counters %d/%d == satgw's %d/%d" % (name, p["dev_ipackets"], p["dev_opackets"], p["rx_packets"], p["tx_packets"]))
    want(t["rx_packets"] + s["rx_packets"] == st["rx_packets"], "per-port rx adds up to stats rx")

want(ru.get("total") == 3, "rules total %s == 3" % ru.get("total"))
# Rules are keyed by index (DPDK 22.11 telemetry keys allow only [A-Za-z0-9_/]);
# each carries its policy name.
want(sorted(k for k, v in ru.items() if isinstance(v, dict)) == ["0", "1", "2"],
     "rules keyed by index 0..2: %s" % sorted(ru))
ru = {v["name"]: v for v in ru.values() if isinstance(v, dict)}
names = ("drop-telnet", "to-site-a", "to-core")
for k in names:
    want(isinstance(ru.get(k), dict), "rule '%s' listed by /satgw/rules (keys: %s)" % (k, sorted(ru)))
if all(isinstance(ru.get(k), dict) for k in names):
    want([ru[k]["index"] for k in names] == [0, 1, 2], "rule order as in the file")
    want([ru[k]["action"] for k in names] == ["drop", "forward", "forward"], "rule actions")
    want(ru["drop-telnet"]["packets"] == 0, "drop-telnet packets 0")
    want(ru["to-site-a"]["packets"] >= n, "to-site-a packets %d >= N (echo requests + data)" % ru["to-site-a"]["packets"])
    want(ru["to-core"]["packets"] >= n, "to-core packets %d >= N (echo replies + acks)" % ru["to-core"]["packets"])
    want(ru["to-site-a"]["bytes"] > xbytes, "to-site-a bytes %d > transfer %d" % (ru["to-site-a"]["bytes"], xbytes))
    if set(po) == {"terr", "sat"}:
        want(ru["to-site-a"]["packets"] == po["sat"]["tx_packets"],
             "to-site-a packets == sat tx packets (%d)" % po["sat"]["tx_packets"])

exp = {"file": policy, "generation": 1, "role": "hub", "mode": "pipeline", "workers": 1,
       "ports": 2, "next_hops": 2, "terminals": 1, "rules": 3, "default_action": "forward",
       "malformed": "drop", "idle_backoff_us": 100}
for k, v in exp.items():
    want(cf.get(k) == v, "config %s == %r (is %r)" % (k, v, cf.get(k)))

want(list(wk) == ["worker0"], "one worker: %s" % list(wk))
if "worker0" in wk:
    want(wk["worker0"]["rx_packets"] == st["rx_packets"], "worker0 rx == stats rx")
sys.exit(1 if bad else 0)
PY

tb_satgw_stop
[ "$TB_SATGW_RC" -eq 0 ] || tb_fail "satgw exit code $TB_SATGW_RC (3 = mbufs leaked)"
tb_check_wire
tb_stats --conserve --expect 'mempool.in_use == 0' --expect 'timers.start_failed == 0' --expect 'timers.started >= 1' --expect "classes.icmp.packets >= $((2 * N))"
tb_pass
