#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Time series for the XCP chain test and experiments.

  xcp_sample.py E2E_DIR PREFIX T0 UNTIL OUT [--agent PID JSONFILE] [--period S]

Every PERIOD s (0.5) from now until T0 + UNTIL (CLOCK_MONOTONIC): the hub's
/satgw/xcp telemetry (satgw file prefix PREFIX), satlink's first session's
queue_held and pacer_held (packets, /satgw/satlink: the queue also without
the XCP stage) and, with --agent, the sender
agent's JSON (SIGUSR1 makes it write JSONFILE): its live flows' cwnd_xcp.
Writes OUT: [{"t": seconds from T0, "xcp": {...}, "cwnd": {flow: cwnd_xcp}}].
"""
import json
import os
import signal
import sys
import time


def main():
    e2e, prefix, t0, until, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), \
        float(sys.argv[4]), sys.argv[5]
    rest = sys.argv[6:]
    agent = None
    period = 0.5
    while rest:
        if rest[0] == "--agent":
            agent = (int(rest[1]), rest[2])
            rest = rest[3:]
        elif rest[0] == "--period":
            period = float(rest[1])
            rest = rest[2:]
        else:
            sys.exit("unknown option " + rest[0])
    sys.path.insert(0, e2e)
    from sgwtel import Telemetry
    series = []
    with Telemetry(prefix) as tel:
        nxt = time.monotonic()
        while time.monotonic() < t0 + until:
            rec = {"t": time.monotonic() - t0}
            try:
                rec["xcp"] = tel.cmd("/satgw/xcp")
            except Exception as e:  # noqa: BLE001 - a sample lost is reported, not fatal
                rec["err"] = str(e)
            try:
                s0 = tel.cmd("/satgw/satlink").get("0", {})
                rec["sl"] = {k: s0.get(k, 0) for k in ("queue_held", "pacer_held", "tx_bytes")}
            except Exception as e:  # noqa: BLE001
                rec["err_sl"] = str(e)
            if agent:
                try:
                    os.unlink(agent[1])
                except OSError:
                    pass
                try:
                    os.kill(agent[0], signal.SIGUSR1)
                    for _ in range(20):
                        if os.path.exists(agent[1]):
                            break
                        time.sleep(0.01)
                    d = json.load(open(agent[1]))
                    rec["cwnd"] = {"%s:%s" % (f.get("lport", i), f.get("rport", "")):
                                   f["cwnd_xcp"] for i, f in enumerate(d.get("flows", []))}
                    rec["agent_ctr"] = d.get("counters", {})
                except (OSError, ValueError, KeyError):
                    pass
            series.append(rec)
            nxt += period
            time.sleep(max(0.0, nxt - time.monotonic()))
    with open(out, "w") as f:
        json.dump(series, f)


if __name__ == "__main__":
    main()
