#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Telemetry requests while satgw shuts down must not crash it. DPDK 22.11
# cannot unregister telemetry commands, so the telemetry thread outlives the
# dataplane; satgw refuses /satgw/* once shutdown begins. This test polls
# every /satgw/* command (reload included) in a tight loop across the whole
# run and the stop, RUNS times, and wants exit code 0 every time. The poller
# itself stops satgw (SIGINT) once it has had STOP_AFTER answers, and goes on
# polling until satgw is gone: the stop always comes while it polls, however
# long satgw or the poller took to start.
# No namespaces: net_null ports.
set -euo pipefail
SATGW=${1:?usage: $0 SATGW}
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-8}
STOP_AFTER=${STOP_AFTER:-200}
work=$(mktemp -d /tmp/sgw-telshut.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat > "$work/p.yaml" <<'YAML'
version: 1
role: hub
ports:
  - {name: terr-1, device: net_null0, role: terrestrial, peer: sat.1}
  - {name: sat.1, device: net_null1, role: satellite, peer: terr-1}
rules:
  - {name: a-rule, match: {proto: [tcp]}, action: count}
workers: {idle_backoff_us: 100}
YAML

for run in $(seq 1 "$RUNS"); do
	prefix="sgwtelshut-$$-$run"
	"$SATGW" --no-huge -m 256 --no-pci --file-prefix "$prefix" -l 0-1 \
		--vdev net_null0 --vdev net_null1 --log-level=warning \
		-- -c "$work/p.yaml" -q > "$work/log" 2>&1 &
	pid=$!
	answered=$(/usr/bin/python3 - "$prefix" "$pid" "$HERE" "$STOP_AFTER" <<'PY'
import os, signal, sys, time
sys.path.insert(0, sys.argv[3])
import sgwtel
prefix, pid, stop_after = sys.argv[1], int(sys.argv[2]), int(sys.argv[4])
cmds = ["/satgw/stats", "/satgw/workers", "/satgw/ports", "/satgw/rules",
        "/satgw/config", "/satgw/reload"]
answered = 0
stopped = False
deadline = time.time() + 60
while sgwtel.alive(pid) and time.time() < deadline:
    try:
        with sgwtel.Telemetry(prefix, timeout=2) as t:
            while True:
                for c in cmds:
                    v = t.cmd(c)
                    if isinstance(v, dict) and v:
                        answered += 1
                    if answered >= stop_after and not stopped:
                        os.kill(pid, signal.SIGINT)
                        stopped = True
    except (OSError, ValueError):
        time.sleep(0.001)
if not stopped and sgwtel.alive(pid):
    os.kill(pid, signal.SIGINT)
print(answered)
PY
)
	rc=0
	wait "$pid" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL run $run: satgw exited $rc while telemetry was polled"; tail -20 "$work/log"
		exit 1
	fi
	if [ "$answered" -lt "$STOP_AFTER" ]; then
		echo "FAIL run $run: only $answered telemetry answers in 60 s: the poller did not reach satgw"
		exit 1
	fi
	echo "run $run: exit 0 with $answered telemetry answers during the run and the stop"
done
echo "PASS: $RUNS runs, no crash with telemetry polled through shutdown"
