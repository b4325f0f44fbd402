#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Throughput of satgw's pipeline against its own bare forward, on one core, no NIC.

satgw runs on ONE worker lcore between two virtual ports:
  terr = net_pcap0, rx_pcap=<pcap>, infinite_rx=1   the pcap is loaded into mbufs once
         and replayed from memory at full speed; with no tx_pcap/tx_iface the PMD
         counts and drops what is sent to it (DPDK 22.11 pcap_ring guide)
  sat  = net_null0, no-rx=1                          a sink; without no-rx=1 net_null
         would also *receive* made-up 64-byte packets
for --duration seconds, once in pipeline mode and once with --bare-forward (RX
burst straight to the peer's TX buffer), alternating A-B-B-A so slow drifts of a
shared machine hit both modes alike, --runs times each. Mpps of a run is the
satellite port's tx_packets / elapsed_s from --stats-json. Reported: every
run, the medians, and the ratio of the medians pipeline / bare (issue target
>= 0.8), plus the share of the CPU the worker thread really got (from
/proc/PID/task/PID/schedstat), since on a shared 2-core VM a run can lose its
core to other processes.

--callgrind adds instruction counts per packet per stage: satgw runs under
valgrind --tool=callgrind (same ports, infinite_rx) for a few seconds in each
mode, and the inclusive instruction counts of satgw's stage functions are
divided by the packets it forwarded. They do not depend on machine load.

Use Debian's /usr/bin/python3. Example:
  tests/bench/throughput.py --satgw build/dataplane/satgw --runs 5 --duration 10 \\
      --json /tmp/tput.json
"""

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_POLICY = os.path.join(ROOT, "pktgen-scenarios", "satgw-bench.yaml")
GEN = os.path.join(ROOT, "pktgen-scenarios", "gen_traffic.py")

# Stage functions whose inclusive instruction counts callgrind reports (see
# --callgrind). A key is a function name, "file:function" for code inlined from
# another file (callgrind books it under that file), and may end in "*" to take
# the largest of several names (the parser's burst function has had more than one).
CG_STAGES = (
    ("worker loop (RX burst, stages, TX, timers)", ["sgw_worker_iter"]),
    ("pipeline stages (everything after RX)", ["sgw_worker_process"]),
    ("parse + classify (sgw_classify_burst*)", ["sgw_classify_burst*"]),
    ("flow stage (key, lookup, create, rule lookup, emit)", ["flow_burst", "stage_flows"]),
    ("  flow key build (sgw_flow_key_from_info, inlined)",
     ["sgw_flow_key.h:flow_burst", "sgw_flow_key.h:stage_flows"]),
    ("  flow lookup (sgw_flow_lookup_bulk)", ["sgw_flow_lookup_bulk"]),
    ("  flow create (sgw_flow_add)", ["sgw_flow_add"]),
    ("  rule lookup (sgw_rules_lookup)", ["sgw_rules_lookup"]),
    ("terminal lookup (rte_lpm, inlined)", ["rte_lpm.h:sgw_worker_process"]),
    ("timer wheel (sgw_tw_expire)", ["sgw_tw_expire"]),
)


def die(msg):
    sys.exit("throughput.py: " + msg)


def satgw_cmd(a, prefix, pcap, mode, stats, duration):
    cmd = [a.satgw, "--no-huge", "-m", str(a.mem), "--no-pci", "--file-prefix", prefix,
           "-l", str(a.lcore), "--log-level", "warning",
           "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap,
           "--vdev", "net_null0,no-rx=1",
           "--", "-c", a.policy, "--duration", str(duration), "--stats-json", stats, "-q"]
    if mode == "bare":
        cmd.append("--bare-forward")
    return cmd


def read_schedstat(pid):
    """(ns on CPU, ns waiting for a CPU) of the process's main thread, which runs the
    worker loop when the EAL has a single lcore (satgw launches with CALL_MAIN)."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
            run, wait, _ = f.read().split()
        return int(run), int(wait), time.monotonic_ns()
    except (OSError, ValueError):
        return None


def run_timed(cmd, log, duration):
    """Run satgw for its --duration, output to log. Returns (exit code, cpu share):
    the share of the core its worker really had, sampled inside the timed window
    (after EAL init and the pcap load, before shutdown); None when not sampled.
    Exit code None: it did not stop within duration + 60 s (killed)."""
    with open(log, "w") as lf:
        p = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT)
        s0 = s1 = None
        t_start = time.monotonic()
        while p.poll() is None:
            el = time.monotonic() - t_start
            if s0 is None and el >= min(1.5, duration * 0.3):
                s0 = read_schedstat(p.pid)
            if s0 is not None and s1 is None and el >= duration - 0.3:
                s1 = read_schedstat(p.pid)
            time.sleep(0.05)
        try:
            rc = p.wait(timeout=duration + 60)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = None
    share = None
    if s0 and s1 and s1[2] > s0[2]:
        share = (s1[0] - s0[0]) / (s1[2] - s0[2])
    return rc, share


def one_run(a, mode, idx, workdir, pcap):
    prefix = "sgwtput_%d_%s_%d" % (os.getpid(), mode, idx)
    stats = os.path.join(workdir, "%s-%d.json" % (mode, idx))
    log = os.path.join(workdir, "%s-%d.log" % (mode, idx))
    cmd = satgw_cmd(a, prefix, pcap, mode, stats, a.duration)
    load = os.getloadavg()[0]
    rc, share = run_timed(cmd, log, a.duration)
    if rc is None:
        die("satgw did not stop after --duration %s; log: %s" % (a.duration, log))
    if rc != 0:
        tail = open(log).read()[-2000:]
        die("satgw exited with %d (%s run %d)%s\n%s\ncommand: %s" %
            (rc, mode, idx, " (3 = mbufs not returned to the pool)" if rc == 3 else "",
             tail, shlex.join(cmd)))
    with open(stats) as f:
        st = json.load(f)
    ports = {p["name"]: p for p in st["ports"]}
    terr, sat = ports["terr"], ports["sat"]
    el = st["elapsed_s"]
    if el <= 0 or terr["rx_packets"] == 0:
        die("%s run %d forwarded nothing (rx %d in %.3f s); log: %s" %
            (mode, idx, terr["rx_packets"], el, log))
    drops = sum(st.get("drops", {}).values())
    r = {"mode": mode, "run": idx, "elapsed_s": el, "rx_packets": terr["rx_packets"],
         "tx_packets": sat["tx_packets"], "tx_bytes": sat["tx_bytes"], "drops": drops,
         "mpps": sat["tx_packets"] / el / 1e6,
         "gbps": sat["tx_bytes"] * 8 / el / 1e9,
         "cpu_share": share, "loadavg_1m_before": load,
         "flows_created": st.get("flows", {}).get("created"),
         "mempool_in_use": st.get("mempool", {}).get("in_use")}
    r["mpps_per_cpu"] = r["mpps"] / share if share else None
    return r


def run_callgrind(a, mode, workdir, pcap):
    """Instructions per packet per stage, from a short run of satgw under callgrind."""
    out = os.path.join(workdir, "callgrind-%s.out" % mode)
    stats = os.path.join(workdir, "callgrind-%s.json" % mode)
    log = os.path.join(workdir, "callgrind-%s.log" % mode)
    prefix = "sgwcg_%d_%s" % (os.getpid(), mode)
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + \
        satgw_cmd(a, prefix, pcap, mode, stats, a.callgrind_duration)
    with open(log, "w") as lf:
        rc = subprocess.call(cmd, stdout=lf, stderr=subprocess.STDOUT,
                             timeout=a.callgrind_duration * 20 + 120)
    if rc != 0:
        die("satgw under callgrind exited with %d; log: %s" % (rc, log))
    with open(stats) as f:
        st = json.load(f)
    pkts = {p["name"]: p for p in st["ports"]}["sat"]["tx_packets"]
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                         capture_output=True, text=True, check=True).stdout
    incl = {}
    # Lines look like: "762,388,282 (54.11%)  /work/main/dataplane/worker.c:fn [/path/obj]"
    line_re = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S.*?):([A-Za-z_][\w.']*)(?:\s|$)")
    for line in ann.splitlines():
        m = line_re.match(line)
        if not m:
            continue
        fn = m.group(3).split(".")[0].split("'")[0]
        n = int(m.group(1).replace(",", ""))
        # The function's own entry holds its inclusive total; entries under other
        # files are the parts inlined from there: keep both, by name and file:name.
        for key in (fn, os.path.basename(m.group(2)) + ":" + fn):
            incl[key] = max(incl.get(key, 0), n)

    def lookup(keys):
        best = None
        for k in keys:
            if k.endswith("*"):
                vals = [v for name, v in incl.items() if name.startswith(k[:-1]) and
                        ":" not in name]
                v = max(vals) if vals else None
            else:
                v = incl.get(k)
            if v is not None and (best is None or v > best):
                best = v
        return best
    res = {"mode": mode, "packets": pkts, "command": shlex.join(cmd),
           "annotate": "callgrind_annotate --inclusive=yes --threshold=100 " + out,
           "ir_per_packet": {}}
    for label, keys in CG_STAGES:
        v = lookup(keys)
        if v is not None and pkts > 0:
            res["ir_per_packet"][label] = round(v / pkts, 1)
    return res


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--satgw", default=os.path.join("/tmp/build-bench", "dataplane", "satgw"))
    ap.add_argument("--policy", default=DEFAULT_POLICY,
                    help="policy YAML; its ports must be net_pcap0 and net_null0")
    ap.add_argument("--pcap", help="pcap to replay (default: generate --profile)")
    ap.add_argument("--profile", default="hub-imix", help="gen_traffic.py profile")
    ap.add_argument("--count", type=int, default=8192,
                    help="packets in the generated pcap; all of them sit in mbufs, so keep "
                    "it well under limits.mbufs (default 8192)")
    ap.add_argument("--flows", type=int, default=2048)
    ap.add_argument("--runs", type=int, default=5, help="runs per mode (default 5)")
    ap.add_argument("--duration", type=float, default=10, help="seconds per run (default 10)")
    ap.add_argument("--lcore", type=int, default=1, help="the one EAL lcore (default 1)")
    ap.add_argument("--mem", type=int, default=1024, help="EAL -m in MB (default 1024)")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count instructions per packet per stage under callgrind")
    ap.add_argument("--callgrind-duration", type=float, default=4)
    ap.add_argument("--workdir", help="keep logs and stats here (default: a temp dir)")
    ap.add_argument("--json", help="write every figure as JSON here")
    a = ap.parse_args()

    if not os.access(a.satgw, os.X_OK):
        die("no satgw binary at %s (build it, or give --satgw)" % a.satgw)
    if a.runs < 1 or a.duration <= 0:
        die("--runs and --duration must be positive")
    if a.callgrind and not shutil.which("valgrind"):
        die("--callgrind needs valgrind (apt-get install valgrind)")
    a.satgw = os.path.abspath(a.satgw)
    a.policy = os.path.abspath(a.policy)
    workdir = a.workdir or tempfile.mkdtemp(prefix="satgw-tput-")
    os.makedirs(workdir, exist_ok=True)
    pcap = a.pcap
    gen_cmd = None
    if pcap is None:
        pcap = os.path.join(workdir, "%s.pcap" % a.profile)
        gen_cmd = ["/usr/bin/python3", GEN, "--profile", a.profile, "--count", str(a.count),
                   "--flows", str(a.flows), "--out", pcap]
        subprocess.run(gen_cmd, check=True, stdout=subprocess.DEVNULL)
    pcap = os.path.abspath(pcap)

    print("satgw throughput: %s, %d run(s) x %.0f s per mode, lcore %d, pcap %s" %
          (os.path.basename(a.satgw), a.runs, a.duration, a.lcore, os.path.basename(pcap)),
          flush=True)
    runs = []
    for i in range(a.runs):
        order = ("pipeline", "bare") if i % 2 == 0 else ("bare", "pipeline")
        for mode in order:
            r = one_run(a, mode, i, workdir, pcap)
            runs.append(r)
            print("  run %d %-8s %7.3f Mpps %6.2f Gbit/s  cpu share %s  drops %d" %
                  (i, mode, r["mpps"], r["gbps"],
                   "%.2f" % r["cpu_share"] if r["cpu_share"] is not None else "n/a",
                   r["drops"]), flush=True)

    res = {"satgw": a.satgw, "pcap": pcap, "policy": a.policy, "runs": a.runs,
           "duration_s": a.duration, "lcore": a.lcore, "all_runs": runs,
           "generate_command": shlex.join(gen_cmd) if gen_cmd else None,
           "commands": {m: shlex.join(satgw_cmd(a, "<unique>", pcap, m, "<stats.json>",
                                                a.duration)) for m in ("pipeline", "bare")}}
    for mode in ("pipeline", "bare"):
        rs = [r for r in runs if r["mode"] == mode]
        res[mode] = {"mpps": [round(r["mpps"], 4) for r in rs],
                     "median_mpps": median([r["mpps"] for r in rs]),
                     "median_gbps": median([r["gbps"] for r in rs]),
                     "median_cpu_share": median([r["cpu_share"] for r in rs]),
                     "median_mpps_per_cpu": median([r["mpps_per_cpu"] for r in rs])}
    p, b = res["pipeline"]["median_mpps"], res["bare"]["median_mpps"]
    res["ratio"] = p / b if b else None
    # Each A-B pair ran back to back: the median of per-pair ratios resists drift too.
    pairs = [next(r["mpps"] for r in runs if r["mode"] == "pipeline" and r["run"] == i) /
             next(r["mpps"] for r in runs if r["mode"] == "bare" and r["run"] == i)
             for i in range(a.runs)]
    res["pair_ratios"] = [round(x, 4) for x in pairs]
    res["median_pair_ratio"] = median(pairs)
    pc, bc = res["pipeline"]["median_mpps_per_cpu"], res["bare"]["median_mpps_per_cpu"]
    res["ratio_per_cpu"] = pc / bc if pc and bc else None

    print("median pipeline %.3f Mpps, bare forward %.3f Mpps, ratio %.3f (median of pair "
          "ratios %.3f; target >= 0.8)" % (p, b, res["ratio"], res["median_pair_ratio"]))

    if a.callgrind:
        res["callgrind"] = {}
        for mode in ("pipeline", "bare"):
            cg = run_callgrind(a, mode, workdir, pcap)
            res["callgrind"][mode] = cg
            print("callgrind %s: %d packets" % (mode, cg["packets"]))
            for label, v in cg["ir_per_packet"].items():
                print("  %-52s %8.1f instructions/packet" % (label, v))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    print("logs and stats: %s" % workdir)


if __name__ == "__main__":
    main()
