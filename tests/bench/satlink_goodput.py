#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Goodput across the emulated GEO link, with and without satlink (the reliable
link layer between hub and terminal, docs/satlink.md).

Every run builds testbed.sh's three-box chain (tests/e2e/testbed.sh, `chain`):
fh - hub - emulator - terminal - mh, three satgw processes on net_af_packet
(hub and terminal on lcore 0, the emulator on lcore 1, --no-huge), link
tests/e2e/policies/chain-emulator-ber.yaml with the forward rate and bit
error rate of the point (270 ms each way, 2 Mbit/s return without errors),
hub and terminal tests/e2e/policies/chain-{hub,terminal}-satlink.yaml (with)
or chain-{hub,terminal}.yaml (without, plain routing), rates and frame size
set to the point's. Each run starts from fresh namespaces and processes.

  udp    saturating UDP: iperf3 -u -l 1472 (1500-byte IP packets) at
         --udp-offer x the forward rate from fh to mh for --udp-seconds, at
         each --bers, with satlink (reliable service) and, unless
         --no-udp-baseline, without it. Goodput = the receiver's (iperf3
         server's) UDP payload bits per second over its 1 s intervals from
         --warmup s to the end (less the last, partial one), as a fraction
         of the emulated forward rate.
  sweep  the same with satlink at --sweep-ber for each --frame-sizes.
  tcp    one Linux TCP flow (CUBIC), iperf3 fh -> mh for --tcp-seconds at
         --tcp-ber, with and without satlink; goodput = iperf3's
         sum_received (whole run, slow start included) and the receiver's
         intervals after --warmup; the sender's kernel counters (nstat -az in
         fh's namespace) before and after.

Every point runs --reps times (alternating with/without within a point);
the report gives the median. Also reported per point: the upper bound of
goodput / rate for an ideal frame-erasure ARQ (every lost frame resent once
per loss, no feedback cost) with the point's framing, and the same with k
copies per loss as satlink sends them (see docs/experiments.md, "Reliable
satellite link").

Needs root (namespaces), iperf3, nstat (iproute2); Debian's /usr/bin/python3
(python3-yaml). Example (about 15 minutes):
  sudo /usr/bin/python3 tests/bench/satlink_goodput.py --satgw /tmp/build-b/dataplane/satgw \\
      --json /tmp/satlink-goodput.json --md /tmp/satlink-goodput.md
"""

import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
E2E = os.path.join(ROOT, "tests", "e2e")
POL = os.path.join(E2E, "policies")
NSTAT_KEYS = ["TcpOutSegs", "TcpRetransSegs", "TcpExtTCPTimeouts", "TcpExtTCPLossProbes",
              "TcpExtTCPSackRecovery", "TcpExtTCPLostRetransmit", "TcpExtTCPSpuriousRTOs",
              "TcpExtTCPDSACKRecv"]
ETH_HDR = 14            # Ethernet header (the emulator's frame length has no FCS; overhead_bytes 0)
SL_HDR = 22             # satlink header
IP_PKT = 1500           # iperf3 -l 1472 + UDP 8 + IPv4 20
UDP_PAYLOAD = 1472
TCP_PAYLOAD = 1448      # MSS with timestamps

# One run: testbed.sh's chain, the boxes, the path, the measurement, the
# kernel counters, the boxes' exit codes and stats. Arguments in the
# environment (B_*); everything lands in $B_OUT.
DRIVER = r'''
set -euo pipefail
TB_NAME=satlink-bench
source "$B_E2E/testbed.sh"
tb_init "$B_SATGW"
tb_topology chain
tb_box_start emu "$B_OUT/emu.yaml" 1
tb_box_start hub "$B_OUT/hub.yaml" 0
tb_box_start term "$B_OUT/term.yaml" 0
tb_wait_path fh "$TB_IP_MH" 20
port=$(tb_rand_port)
tb_bg mh iperf3-server iperf3 -s -1 -p "$port" -B "$TB_IP_MH" -J
SRV=$TB_LAST_PID
tb_wait_listen mh "$port"
tb_ns fh nstat -az >"$B_OUT/nstat0.txt"
tb_ns mh nstat -az >"$B_OUT/nstat-mh0.txt"
if [ "$B_MODE" = udp ]; then
	# -w 4M: the receiver's socket buffer (the host's rmem_max). satlink delivers in
	# order, so a repaired loss releases up to a round trip of datagrams at once; with
	# the default 208 KB the receiving socket overflows (UdpRcvbufErrors on mh) and
	# the measurement, not the link, loses them.
	tb_ns fh iperf3 -c "$TB_IP_MH" -p "$port" -u -b "$B_OFFER" -l 1472 -w 4M -t "$B_SECS" -J \
		>"$B_OUT/client.json" || true
else
	tb_ns fh iperf3 -c "$TB_IP_MH" -p "$port" -C "$B_CC" -t "$B_SECS" -J \
		>"$B_OUT/client.json" || true
fi
tb_ns fh nstat -az >"$B_OUT/nstat1.txt"
tb_ns mh nstat -az >"$B_OUT/nstat-mh1.txt"
tb_wait_pid "$SRV" 15 || true
cp "$TB_DIR/iperf3-server.log" "$B_OUT/server.json"
tb_boxes_stop hub term
rcs="hub=${TB_BOX_RC[hub]} term=${TB_BOX_RC[term]}"
sleep 0.8
tb_box_stop emu
rcs="$rcs emu=${TB_BOX_RC[emu]}"
echo "$rcs" >"$B_OUT/rc.txt"
for box in hub emu term; do
	cp "$(tb_box_json "$box")" "$B_OUT/stats-$box.json" 2>/dev/null || true
	cp "$(tb_box_log "$box")" "$B_OUT/satgw-$box.log" 2>/dev/null || true
done
'''


def die(msg):
    sys.exit("satlink_goodput.py: " + msg)


def p_frame(ber, nbytes):
    """Probability that a frame of nbytes is lost to independent bit errors."""
    return 1.0 - (1.0 - ber) ** (8 * nbytes) if ber > 0 else 0.0


def frames_of(ip_len, frame_size):
    """Satlink DATA frame lengths on the wire (Ethernet + satlink header + payload)
    for one IP packet of ip_len bytes."""
    n = math.ceil(ip_len / frame_size)
    sizes = [frame_size] * (n - 1) + [ip_len - frame_size * (n - 1)]
    return [s + ETH_HDR + SL_HDR for s in sizes]


def bound(ber, frame_size, payload, ip_len=IP_PKT, copies=1, satlink=True):
    """Upper bound of goodput / rate: payload bits per IP packet over the expected
    wire bits it costs. satlink: each frame is sent until it arrives; a lost
    frame costs `copies` more transmissions per loss round (satlink's k copies;
    1 = ideal selective repeat): E[tx] = 1 + k p / (1 - p^k). Without satlink
    (plain IP), a lost packet is simply lost: goodput = payload (1 - p) / frame."""
    if not satlink:
        fl = ip_len + ETH_HDR
        return payload * (1 - p_frame(ber, fl)) / fl
    wire = 0.0
    for fl in frames_of(ip_len, frame_size):
        p = p_frame(ber, fl)
        etx = 1.0 + copies * p / (1.0 - p ** copies) if p > 0 else 1.0
        wire += fl * etx
    return payload / wire


def write_policies(a, out, ber, satlink, frame_size):
    emu = yaml.safe_load(open(os.path.join(POL, "chain-emulator-ber.yaml")))
    fw = emu["link"]["forward"]
    fw["rate_bps"] = int(a.rate)
    fw["loss"] = {"model": "ber", "ber": ber} if ber > 0 else {"model": "none"}
    emu["link"]["return"]["rate_bps"] = int(a.return_rate)
    if satlink:
        hub = yaml.safe_load(open(os.path.join(POL, "chain-hub-satlink.yaml")))
        term = yaml.safe_load(open(os.path.join(POL, "chain-terminal-satlink.yaml")))
        for p in (hub, term):
            p["satlink"]["forward_rate_bps"] = int(a.rate)
            p["satlink"]["return_rate_bps"] = int(a.satlink_return_rate or a.return_rate)
            p["satlink"]["frame_size"] = frame_size
            if a.retx_copies:
                p["satlink"]["retx_copies"] = a.retx_copies
    else:
        hub = yaml.safe_load(open(os.path.join(POL, "chain-hub.yaml")))
        term = yaml.safe_load(open(os.path.join(POL, "chain-terminal.yaml")))
    for name, doc in (("emu", emu), ("hub", hub), ("term", term)):
        with open(os.path.join(out, name + ".yaml"), "w") as f:
            yaml.safe_dump(doc, f, sort_keys=False)


def read_nstat(path):
    out = {}
    for line in open(path):
        p = line.split()
        if len(p) >= 2 and not line.startswith("#"):
            try:
                out[p[0]] = int(p[1])
            except ValueError:
                pass
    return out


def interval_goodput(server, warmup):
    """Receiver's payload bits/s over its 1 s intervals from warmup s on, less the
    last one that received anything (partial: the sender stopped in it)."""
    ivs = [iv.get("sum", {}) for iv in server.get("intervals", [])]
    last = max([i for i, sm in enumerate(ivs) if sm.get("bytes", 0) > 0], default=-1)
    b = s = 0.0
    for sm in ivs[:max(last, 0)]:
        if sm.get("start", 0) >= warmup - 1e-6:
            b += sm.get("bytes", 0)
            s += sm.get("seconds", 0)
    return b * 8 / s if s > 0 else None


def interval_bytes(server):
    return sum(iv.get("sum", {}).get("bytes", 0) for iv in server.get("intervals", []))


def sl_counters(stats_path):
    if not os.path.exists(stats_path):
        return None
    tool = os.path.join(E2E, "satlink.py")
    names = ["tx_frames", "tx_retx", "loss_status", "loss_timeout", "window_full", "send_queue_full",
             "pkts_delivered", "bytes_delivered", "rx_frames", "link_downs"]
    r = subprocess.run(["/usr/bin/python3", tool, "get", stats_path] + names,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    vals = r.stdout.split()
    return {n: (float(v) if v != "-1" else None) for n, v in zip(names, vals)}


def one_run(a, tag, mode, ber, satlink, frame_size, secs):
    out = os.path.join(a.workdir, tag)
    os.makedirs(out, exist_ok=True)
    write_policies(a, out, ber, satlink, frame_size)
    env = dict(os.environ, B_E2E=E2E, B_SATGW=a.satgw, B_OUT=out, B_MODE=mode,
               B_SECS=str(secs), B_OFFER=str(int(a.rate * a.udp_offer)), B_CC=a.tcp_cc,
               TB_BUDGET=str(int(secs) + 120))
    with open(os.path.join(out, "driver.sh"), "w") as f:
        f.write(DRIVER)
    t0 = time.monotonic()
    load = os.getloadavg()[0]
    with open(os.path.join(out, "driver.log"), "w") as lf:
        rc = subprocess.call(["bash", os.path.join(out, "driver.sh")], env=env, stdout=lf,
                             stderr=subprocess.STDOUT, timeout=secs + 180)
    r = {"tag": tag, "mode": mode, "ber": ber, "satlink": satlink,
         "frame_size": frame_size if satlink else None, "seconds": secs, "rate_bps": a.rate,
         "driver_rc": rc, "wall_s": round(time.monotonic() - t0, 1), "loadavg_1m_before": load,
         "dir": out}
    try:
        rcs = dict(x.split("=") for x in open(os.path.join(out, "rc.txt")).read().split())
        r["exit_codes"] = {k: int(v) for k, v in rcs.items()}
    except (OSError, ValueError):
        r["exit_codes"] = None
    try:
        server = json.load(open(os.path.join(out, "server.json")))
        client = json.load(open(os.path.join(out, "client.json")))
    except (OSError, ValueError) as e:
        r["error"] = "no iperf3 result (%s); see %s/driver.log" % (e, out)
        return r
    if "error" in client or "error" in server:
        r["error"] = "iperf3: %s" % (client.get("error") or server.get("error"))
        return r
    if mode == "udp":
        r["goodput_bps"] = interval_goodput(server, a.warmup)
        ss = server.get("end", {}).get("sum", {})
        cs = client.get("end", {}).get("sum", {})
        # Everything received over the time the client sent.
        r["goodput_bps_whole"] = interval_bytes(server) * 8 / cs["seconds"] \
            if cs.get("seconds") else None
        r["udp_lost_percent"] = ss.get("lost_percent")
        r["offered_bps"] = cs.get("bits_per_second")
        m0 = read_nstat(os.path.join(out, "nstat-mh0.txt"))
        m1 = read_nstat(os.path.join(out, "nstat-mh1.txt"))
        # Datagrams the receiving socket dropped: must stay 0 for the goodput to be the link's.
        r["mh_udp_rcvbuf_errors"] = m1.get("UdpRcvbufErrors", 0) - m0.get("UdpRcvbufErrors", 0)
    else:
        sr = client.get("end", {}).get("sum_received", {})
        r["goodput_bps_whole"] = sr.get("bits_per_second")
        r["goodput_bps"] = interval_goodput(server, a.warmup)
        r["iperf3_retransmits"] = client.get("end", {}).get("sum_sent", {}).get("retransmits")
        n0 = read_nstat(os.path.join(out, "nstat0.txt"))
        n1 = read_nstat(os.path.join(out, "nstat1.txt"))
        r["nstat"] = {k: n1.get(k, 0) - n0.get(k, 0) for k in NSTAT_KEYS}
    for k in ("goodput_bps", "goodput_bps_whole"):
        if r.get(k) is not None:
            r[k.replace("_bps", "_fraction")] = r[k] / a.rate
    try:
        link = json.load(open(os.path.join(out, "stats-emu.json")))["link"]["forward"]
        r["link_forward"] = {k: link[k] for k in ("offered_packets", "delivered_packets",
                                                  "dropped_loss", "dropped_queue",
                                                  "dropped_outage")}
    except (OSError, ValueError, KeyError):
        pass
    if satlink:
        r["satlink_hub"] = sl_counters(os.path.join(out, "stats-hub.json"))
        r["satlink_term"] = sl_counters(os.path.join(out, "stats-term.json"))
    if r["exit_codes"] and any(v != 0 for v in r["exit_codes"].values()):
        r["warning"] = "a box exited non-zero: %s" % r["exit_codes"]
    return r


def med(rs, key):
    xs = [r[key] for r in rs if r.get(key) is not None]
    return statistics.median(xs) if xs else None


def fmt_frac(x):
    return "-" if x is None else "%.3f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--satgw", default="/tmp/build-b/dataplane/satgw")
    ap.add_argument("--parts", default="udp,sweep,tcp")
    ap.add_argument("--rate", type=float, default=20e6, help="forward rate, bit/s (20e6)")
    ap.add_argument("--return-rate", type=float, default=2e6)
    ap.add_argument("--satlink-return-rate", type=float, default=0,
                    help="satlink's return_rate_bps if not the emulated return rate (an "
                    "experiment: it also sizes the return window, in frames)")
    ap.add_argument("--bers", default="0,1e-6,1e-5")
    ap.add_argument("--udp-offer", type=float, default=1.25,
                    help="UDP offered load as a multiple of the forward rate (1.25)")
    ap.add_argument("--udp-seconds", type=float, default=15)
    ap.add_argument("--no-udp-baseline", action="store_true",
                    help="udp: skip the runs without satlink")
    ap.add_argument("--frame-size", type=int, default=1400, help="satlink frame_size of udp, tcp")
    ap.add_argument("--frame-sizes", default="500,750,1000,1450",
                    help="sweep: satlink frame sizes (--frame-size is taken from udp); satgw "
                    "wants frame_size + 50 (header and AES-GCM room) within the port MTU, "
                    "1500 on the testbed's veths: at most 1450")
    ap.add_argument("--sweep-ber", type=float, default=1e-5)
    ap.add_argument("--tcp-ber", type=float, default=1e-5)
    ap.add_argument("--tcp-seconds", type=float, default=20)
    ap.add_argument("--tcp-cc", default="cubic", help="tcp: congestion control (cubic)")
    ap.add_argument("--no-tcp-baseline", action="store_true", help="tcp: skip the run without satlink")
    ap.add_argument("--retx-copies", type=int, default=0, help="override satlink retx_copies")
    ap.add_argument("--reps", type=int, default=3, help="runs per point (3)")
    ap.add_argument("--sweep-reps", type=int, default=2)
    ap.add_argument("--warmup", type=float, default=3.0,
                    help="receiver intervals before this many seconds are not counted (3)")
    ap.add_argument("--workdir")
    ap.add_argument("--json")
    ap.add_argument("--md")
    a = ap.parse_args()
    if os.getuid() != 0:
        die("needs root (network namespaces)")
    if not os.access(a.satgw, os.X_OK):
        die("no satgw binary at %s (build it, or give --satgw)" % a.satgw)
    a.satgw = os.path.abspath(a.satgw)
    a.workdir = a.workdir or tempfile.mkdtemp(prefix="satgw-slgood-")
    os.makedirs(a.workdir, exist_ok=True)
    parts = set(a.parts.split(","))
    bers = [float(x) for x in a.bers.split(",") if x.strip()]
    sizes = [int(x) for x in a.frame_sizes.split(",") if x.strip()]
    copies = a.retx_copies or yaml.safe_load(
        open(os.path.join(POL, "chain-hub-satlink.yaml")))["satlink"].get("retx_copies", 2)

    # The plan: (part, mode, ber, satlink, frame_size, seconds, reps)
    plan = []
    if "udp" in parts:
        for ber in bers:
            plan.append(("udp", "udp", ber, True, a.frame_size, a.udp_seconds, a.reps))
            if not a.no_udp_baseline:
                plan.append(("udp", "udp", ber, False, None, a.udp_seconds, a.reps))
    if "sweep" in parts:
        for fs in sizes:
            if "udp" in parts and fs == a.frame_size and a.sweep_ber in bers:
                continue
            plan.append(("sweep", "udp", a.sweep_ber, True, fs, a.udp_seconds, a.sweep_reps))
    if "tcp" in parts:
        if not a.no_tcp_baseline:
            plan.append(("tcp", "tcp", a.tcp_ber, False, None, a.tcp_seconds, a.reps))
        plan.append(("tcp", "tcp", a.tcp_ber, True, a.frame_size, a.tcp_seconds, a.reps))
    total = sum(p[6] for p in plan)
    print("satlink goodput: %d point(s), %d run(s), forward %g bit/s, return %g bit/s, "
          "270 ms each way; work dir %s" % (len(plan), total, a.rate, a.return_rate, a.workdir),
          flush=True)

    # Interleave repetitions: rep 0 of every point, then rep 1, ... (slow drifts
    # of a shared machine then hit every point alike).
    runs = []
    t0 = time.monotonic()
    for rep in range(max(p[6] for p in plan) if plan else 0):
        for (part, mode, ber, sl, fs, secs, reps) in plan:
            if rep >= reps:
                continue
            tag = "%s-%s-ber%g-%s-%d" % (part, mode, ber, "sl%d" % fs if sl else "plain", rep)
            r = one_run(a, tag, mode, ber, sl, fs, secs)
            r["part"], r["rep"] = part, rep
            runs.append(r)
            extra = ""
            if r.get("nstat"):
                extra = ", TCP retrans %d, timeouts %d" % (r["nstat"]["TcpRetransSegs"],
                                                           r["nstat"]["TcpExtTCPTimeouts"])
            if r.get("satlink_hub"):
                h = r["satlink_hub"]
                extra += ", satlink tx %s + retx %s" % (h.get("tx_frames"), h.get("tx_retx"))
            print("  %-34s goodput %s of the rate (whole run %s)%s%s%s  [%.0f s]" % (
                tag, fmt_frac(r.get("goodput_fraction")), fmt_frac(r.get("goodput_fraction_whole")),
                extra, ("  ERROR " + r["error"]) if "error" in r else "",
                ("  " + r["warning"]) if "warning" in r else "", r["wall_s"]), flush=True)

    points = []
    for (part, mode, ber, sl, fs, secs, reps) in plan:
        rs = [r for r in runs if r["part"] == part and r["ber"] == ber and r["satlink"] == sl
              and r["frame_size"] == (fs if sl else None)]
        payload = UDP_PAYLOAD if mode == "udp" else TCP_PAYLOAD
        pt = {"part": part, "mode": mode, "ber": ber, "satlink": sl, "frame_size": fs,
              "seconds": secs, "runs": len(rs), "errors": sum(1 for r in rs if "error" in r),
              "median_goodput_fraction": med(rs, "goodput_fraction"),
              "median_goodput_fraction_whole": med(rs, "goodput_fraction_whole"),
              "goodput_fractions": [r.get("goodput_fraction") for r in rs],
              "bound_ideal_arq": bound(ber, fs or 1400, payload, satlink=sl, copies=1),
              "bound_k_copies": bound(ber, fs or 1400, payload, satlink=sl, copies=copies)
              if sl else None,
              "frame_loss_probability": [round(p_frame(ber, fl), 5) for fl in
                                         (frames_of(IP_PKT, fs) if sl else [IP_PKT + ETH_HDR])]}
        if mode == "tcp" and not sl:
            # Mathis et al.: rate <= MSS / RTT x sqrt(3/2) / sqrt(p), p the packet loss rate.
            p = p_frame(ber, IP_PKT + ETH_HDR)
            pt["mathis_fraction"] = (TCP_PAYLOAD * 8 / 0.541 * math.sqrt(1.5) / math.sqrt(p) /
                                     a.rate) if p > 0 else None
            pt["bound_ideal_arq"] = None
        if mode == "tcp":
            pt["median_nstat"] = {k: statistics.median([r["nstat"][k] for r in rs if r.get("nstat")])
                                  for k in NSTAT_KEYS} if any(r.get("nstat") for r in rs) else None
        if sl:
            for side in ("satlink_hub", "satlink_term"):
                vals = [r[side] for r in rs if r.get(side)]
                if vals:
                    pt["median_" + side] = {k: statistics.median([v[k] for v in vals if v.get(k) is not None])
                                            for k in vals[0] if any(v.get(k) is not None for v in vals)}
        points.append(pt)

    res = {"argv": shlex.join(sys.argv), "satgw": a.satgw, "rate_bps": a.rate,
           "return_rate_bps": a.return_rate, "delay_ms": 270, "retx_copies": copies,
           "seconds": round(time.monotonic() - t0), "workdir": a.workdir,
           "loadavg_end": os.getloadavg(), "points": points, "runs": runs}
    md = markdown(res)
    print()
    print(md)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    if a.md:
        with open(a.md, "w") as f:
            f.write(md + "\n")
    print("logs and stats: %s (%.0f s)" % (a.workdir, res["seconds"]))
    return 1 if any("error" in r for r in runs) else 0


def markdown(res):
    rate = res["rate_bps"] / 1e6
    k = res["retx_copies"]
    out = []
    udp = [p for p in res["points"] if p["mode"] == "udp"]
    if udp:
        out.append("Saturating UDP (1500-byte IP packets), goodput at the receiver / %g Mbit/s "
                   "(median of the runs; the runs in brackets):" % rate)
        out.append("")
        out.append("| forward BER | satlink frame_size | frame loss (per frame) | goodput / rate | "
                   "runs | bound: ideal ARQ | bound: k = %d copies |" % k)
        out.append("|---|---|---|---|---|---|---|")
        for p in udp:
            out.append("| %g | %s | %s | **%s** (%s) | %d%s | %s | %s |" % (
                p["ber"], p["frame_size"] if p["satlink"] else "no satlink",
                " / ".join("%.2f%%" % (x * 100) for x in p["frame_loss_probability"]),
                fmt_frac(p["median_goodput_fraction"]),
                ", ".join(fmt_frac(x) for x in p["goodput_fractions"]), p["runs"],
                " (%d failed)" % p["errors"] if p["errors"] else "",
                fmt_frac(p["bound_ideal_arq"]) + ("" if p["satlink"] else " (no ARQ: lost)"),
                fmt_frac(p["bound_k_copies"])))
        out.append("")
    tcp = [p for p in res["points"] if p["mode"] == "tcp"]
    if tcp:
        out.append("One TCP flow (CUBIC), iperf3 fh -> mh, %g s, forward BER %g; goodput / "
                   "%g Mbit/s (whole run, slow start included; after warm-up), the sender's "
                   "kernel counters (medians):" % (tcp[0]["seconds"], tcp[0]["ber"], rate))
        out.append("")
        out.append("| | goodput / rate, whole run | after warm-up | TcpRetransSegs | "
                   "TcpExtTCPTimeouts | TcpExtTCPLossProbes | TcpExtTCPSackRecovery | "
                   "TcpOutSegs | satlink hub tx_frames / tx_retx |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for p in tcp:
            n = p.get("median_nstat") or {}
            h = p.get("median_satlink_hub") or {}
            out.append("| %s | **%s** | %s | %s | %s | %s | %s | %s | %s |" % (
                "with satlink (frame_size %d)" % p["frame_size"] if p["satlink"] else
                "without satlink", fmt_frac(p["median_goodput_fraction_whole"]),
                fmt_frac(p["median_goodput_fraction"]), n.get("TcpRetransSegs", "-"),
                n.get("TcpExtTCPTimeouts", "-"), n.get("TcpExtTCPLossProbes", "-"),
                n.get("TcpExtTCPSackRecovery", "-"), n.get("TcpOutSegs", "-"),
                "%s / %s" % (h.get("tx_frames", "-"), h.get("tx_retx", "-")) if p["satlink"]
                else "-"))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
