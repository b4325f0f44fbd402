#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the three-box chain testbed (testbed.sh `tb_topology chain`,
test_geo_chain.sh): the emulator's clock, a sampler of its link counters, and
the checks on what the boxes and the link model counted.

  chain.py params POLICY
      the emulator policy's link as shell assignments: rates, delays, forward
      ber, the first outage (both directions must share it)
  chain.py clock PREFIX
      the emulator's clock in seconds (its link model's time, good_ns + bad_ns
      of /satgw/link, published every 10 ms): outages are scheduled on it
  chain.py wait-clock PREFIX T [--timeout S]
      wait until the emulator's clock reaches T seconds; print it
  chain.py sample PREFIX OUT [--interval S]
      append one JSON line per sample of /satgw/link (with the clock) to OUT
      until SIGTERM
  chain.py ping ADDR [-c N] [-i S] [-W S] [-s SIZE]
      ICMP echoes one at a time with ping.py's code (csum, receive), each
      answered or timed out before the next: one "seq N rtt_ms X" line per
      echo; exit 1 unless all were answered. (One process for all echoes:
      every `ip netns exec` unmounts /sys, which waits for an expedited RCU
      grace period, and those took 10-120 s on this VM under full CPU load.)
  chain.py rtt FILE EXPECTED_MS TOL_MS
      FILE holds `ping` or ping.py output lines; median RTT against
      EXPECTED_MS +- TOL_MS
  chain.py link EMU_JSON [--samples FILE] [--ber-forward B] [--outage AT FOR]
      the emulator's link counters at exit: conservation per direction, the
      loss count against the bit error rate, the outage against the traffic
      the sampler saw during it, the ports against the model
  chain.py wire WIRE_TXT HUB_JSON EMU_JSON TERM_JSON
      every box's port counters against the kernel counters of the veths on
      both sides; prints the af_packet ring overflows (sum) on stdout
Each check prints "ok" or "FAIL" and a line; the exit code is 1 when one fails.
"""
import argparse
import json
import math
import os
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sgwtel import Telemetry  # noqa: E402

DIRS = ("forward", "return")


class Checks:
    def __init__(self, out=sys.stdout):
        self.bad = 0
        self.out = out

    def __call__(self, what, cond):
        print("  %s %s" % ("ok  " if cond else "FAIL", what), file=self.out)
        self.bad += not cond
        return cond

    def note(self, what):
        print("  note %s" % what, file=self.out)


def clock_of(link):
    f = link["forward"]
    return (f["good_ns"] + f["bad_ns"]) / 1e9


def cmd_params(a):
    import yaml   # Debian's python3-yaml, in /usr/bin/python3
    link = yaml.safe_load(open(a.policy))["link"]
    fw, rt = link["forward"], link["return"]
    out = {"FWD_RATE": fw["rate_bps"], "RET_RATE": rt["rate_bps"],
           "FWD_DELAY_MS": fw.get("delay_ms", 0), "RET_DELAY_MS": rt.get("delay_ms", 0),
           "FWD_OVERHEAD": fw.get("overhead_bytes", 0), "RET_OVERHEAD": rt.get("overhead_bytes", 0),
           "FWD_BER": fw.get("loss", {}).get("ber", 0)}
    outs = fw.get("outages") or []
    if outs:
        out["OUT_AT"], out["OUT_FOR"] = outs[0]["at_s"], outs[0]["for_s"]
    for k, v in sorted(out.items()):
        print("%s=%s" % (k, v))
    return 0


def cmd_clock(a):
    with Telemetry(a.prefix) as t:
        print("%.3f" % clock_of(t.cmd("/satgw/link")))
    return 0


def cmd_wait_clock(a):
    deadline = time.monotonic() + a.timeout
    with Telemetry(a.prefix) as t:
        while True:
            c = clock_of(t.cmd("/satgw/link"))
            if c >= a.t:
                print("%.3f" % c)
                return 0
            if time.monotonic() > deadline:
                sys.exit("chain.py: the emulator's clock is at %.3f s after %.0f s of waiting "
                         "for %.3f s" % (c, a.timeout, a.t))
            time.sleep(min(0.05, max(0.005, (a.t - c) / 2)))


def cmd_sample(a):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    with Telemetry(a.prefix) as t, open(a.out, "a") as f:
        while not stop:
            link = t.cmd("/satgw/link")
            rec = {"mono": time.monotonic(), "clock_s": clock_of(link)}
            for d in DIRS:
                rec[d] = {k: link[d][k] for k in (
                    "offered_packets", "delivered_packets", "dropped_queue", "dropped_loss",
                    "dropped_outage", "queue_packets", "held_now")}
            f.write(json.dumps(rec, sort_keys=True) + "\n")
            f.flush()
            time.sleep(a.interval)
    return 0


def cmd_ping(a):
    import select
    import socket
    import struct
    import ping   # tests/e2e/ping.py

    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident = os.getpid() & 0xFFFF
    payload = (b"satgw-e2e-ping!" * ((a.size // 15) + 1))[:a.size]
    sent_at, got = {}, {}
    for seq in range(1, a.count + 1):
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        pkt = struct.pack("!BBHHH", 8, 0, ping.csum(hdr + payload), ident, seq) + payload
        sent_at[seq] = time.monotonic()
        s.sendto(pkt, (a.addr, 0))
        end = sent_at[seq] + a.timeout
        while seq not in got:
            left = end - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([s], [], [], left)
            if r:
                ping.receive(s, ident, sent_at, got)
        print("seq %d rtt_ms %s" % (seq, "%.3f" % (got[seq] * 1000) if seq in got else "-"),
              flush=True)
        time.sleep(a.interval)
    return 0 if len(got) == a.count else 1


def cmd_rtt(a):
    rtts = []
    for line in open(a.file):
        p = line.split()
        if len(p) >= 6 and p[0] == "sent" and p[3] != "0" and p[4] == "rtt_avg_ms":
            rtts.append(float(p[5]))
        elif len(p) == 4 and p[0] == "seq" and p[2] == "rtt_ms" and p[3] != "-":
            rtts.append(float(p[3]))
    c = Checks()
    if not c("%d RTT sample(s)" % len(rtts), len(rtts) >= 3):
        return 1
    med = statistics.median(rtts)
    dev = med - a.expected
    print("  rtt: n %d, median %.3f ms, min %.3f, max %.3f; expected %.3f ms "
          "(deviation %+.3f ms, %+.3f%%)" % (len(rtts), med, min(rtts), max(rtts),
                                             a.expected, dev, dev / a.expected * 100))
    c("median RTT %.3f ms within %.3f ms of %.3f ms" % (med, a.tol, a.expected),
      abs(dev) <= a.tol)
    return 1 if c.bad else 0


def load_samples(path):
    out = []
    if path and os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def cmd_link(a):
    st = json.load(open(a.emu_json))
    link = st["link"]
    ports = {p["name"]: p for p in st["ports"]}
    c = Checks()
    for d in DIRS:
        l = link[d]
        print("  %-7s offered %d (%d bytes), delivered %d, dropped: queue %d, loss %d, "
              "outage %d; queue max %d pkts / %d bytes; loss bursts %d; held at exit %d" % (
                  d, l["offered_packets"], l["offered_bytes"], l["delivered_packets"],
                  l["dropped_queue"], l["dropped_loss"], l["dropped_outage"],
                  l["queue_packets_max"], l["queue_bytes_max"], l["loss_bursts"],
                  l["held_now"]))
        c("%s: offered %d == delivered %d + queue %d + loss %d + outage %d" % (
            d, l["offered_packets"], l["delivered_packets"], l["dropped_queue"],
            l["dropped_loss"], l["dropped_outage"]),
          l["offered_packets"] == l["delivered_packets"] + l["dropped_queue"] +
          l["dropped_loss"] + l["dropped_outage"])
    # The model against the ports: everything received on a direction's input
    # port was offered to it; what it delivered left by the other port (the test
    # stops the emulator once the link is empty, so nothing was held at exit).
    fw_in, fw_out = ports["hub-side"], ports["term-side"]
    for d, pin, pout in (("forward", fw_in, fw_out), ("return", fw_out, fw_in)):
        l = link[d]
        c("%s: port %s rx_packets %d == offered %d" % (d, pin["name"], pin["rx_packets"],
                                                       l["offered_packets"]),
          pin["rx_packets"] == l["offered_packets"])
        c("%s: port %s tx_packets %d == delivered %d (held at exit %d)" % (
            d, pout["name"], pout["tx_packets"], l["delivered_packets"], l["held_now"]),
          pout["tx_packets"] == l["delivered_packets"] and l["held_now"] == 0)
    c("emulator drops.* == 0 (%s)" % st["drops"], sum(st["drops"].values()) == 0)

    # Bit errors: a frame of L bytes is lost with 1 - (1 - ber)^(8L). Without
    # per-frame sizes, bound the expectation by the bytes that went on the wire:
    # every lost frame was sent (not queue-dropped, not in the outage).
    fw = link["forward"]
    if a.ber_forward is not None:
        b = a.ber_forward
        sent_frames = fw["offered_packets"] - fw["dropped_queue"] - fw["dropped_outage"]
        mean_len = fw["offered_bytes"] / fw["offered_packets"] if fw["offered_packets"] else 0
        lam = sent_frames * (1 - (1 - b) ** (8 * mean_len))
        # Same bytes, but every byte in full-size frames: a loose upper bound.
        lam_hi = sent_frames * (1 - (1 - b) ** (8 * 1514))
        lo = max(0.0, lam - 6 * math.sqrt(lam) - 1)
        hi = lam_hi + 6 * math.sqrt(lam_hi) + 1
        print("  forward: %d frames on the wire, mean %.0f bytes: at ber %g the channel "
              "should lose about %.1f (at most %.1f if all were 1514 bytes); it lost %d" %
              (sent_frames, mean_len, b, lam, lam_hi, fw["dropped_loss"]))
        if lam >= 5:
            c("forward dropped_loss %d > 0 and within [%.1f, %.1f] (6 sigma)" % (
                fw["dropped_loss"], lo, hi), 0 < fw["dropped_loss"] and lo <= fw["dropped_loss"] <= hi)
        else:
            c.note("forward: too little traffic for bit errors to be expected (%.2f); "
                   "dropped_loss %d" % (lam, fw["dropped_loss"]))
            c("forward dropped_loss %d <= %.1f" % (fw["dropped_loss"], hi), fw["dropped_loss"] <= hi)
    c("return dropped_loss %d == 0 (no loss model on the return link)" %
      link["return"]["dropped_loss"], link["return"]["dropped_loss"] == 0)

    # The outage against the traffic: the sampler read /satgw/link every few
    # tens of ms; a frame offered during [at, at + for) and not dropped by the
    # queue means the line was busy during the window (with it or the frames
    # ahead of it), so outage drops must exist; none may exist before it.
    if a.outage:
        at, dur = a.outage
        samples = load_samples(a.samples)
        before = [s for s in samples if s["clock_s"] <= at]
        after = [s for s in samples if s["clock_s"] >= at + dur]
        if not c("sampler covered the outage [%.3f, %.3f) s (%d samples, clock %s..%s)" % (
                at, at + dur, len(samples),
                "%.2f" % samples[0]["clock_s"] if samples else "-",
                "%.2f" % samples[-1]["clock_s"] if samples else "-"),
                bool(before) and bool(after)):
            return 1
        s0, s1 = before[-1], after[0]
        for d in DIRS:
            n_in = ((s1[d]["offered_packets"] - s1[d]["dropped_queue"]) -
                    (s0[d]["offered_packets"] - s0[d]["dropped_queue"]))
            print("  %-7s between clock %.3f and %.3f s: %d frame(s) offered and queued, "
                  "outage drops %d -> %d (at exit %d)" % (
                      d, s0["clock_s"], s1["clock_s"], n_in, s0[d]["dropped_outage"],
                      s1[d]["dropped_outage"], link[d]["dropped_outage"]))
            c("%s: no outage drops before the outage (%d at clock %.3f)" % (
                d, s0[d]["dropped_outage"], s0["clock_s"]), s0[d]["dropped_outage"] == 0)
            if d == "forward":
                c("forward: the outage overlapped the transfer (%d frames offered in it)" % n_in,
                  n_in > 0)
            if n_in > 0:
                c("%s: dropped_outage %d > 0 (traffic during the outage)" % (
                    d, link[d]["dropped_outage"]), link[d]["dropped_outage"] > 0)
            else:
                c.note("%s: no frame offered during the outage, dropped_outage %d" % (
                    d, link[d]["dropped_outage"]))
    c("emulator mempool in_use %d == 0" % st["mempool"]["in_use"], st["mempool"]["in_use"] == 0)
    return 1 if c.bad else 0


def cmd_wire(a):
    k = {}
    for line in open(a.wire):
        p = line.split()
        if len(p) == 3:
            k[p[0]] = (int(p[1]), int(p[2]))   # rx_packets, tx_packets
    boxes = {b: {p["device"].split(",")[0]: p for p in json.load(open(f))["ports"]}
             for b, f in (("hub", a.hub), ("emu", a.emu), ("term", a.term))}
    # (box, device, its veth, the veth at the other end of the wire)
    ends = (("hub", "net_af_packet0", "hub:terr0", "fh:fh0"),
            ("hub", "net_af_packet1", "hub:sat0", "emu:hub0"),
            ("emu", "net_af_packet0", "emu:hub0", "hub:sat0"),
            ("emu", "net_af_packet1", "emu:term0", "term:sat0"),
            ("term", "net_af_packet0", "term:sat0", "emu:term0"),
            ("term", "net_af_packet1", "term:lan0", "mh:mh0"))
    c = Checks(sys.stderr)
    ring_total = 0
    for box, dev, mine, far in ends:
        p = boxes[box][dev]
        ring = k[mine][0] - p["dev_ipackets"]
        ring_total += max(ring, 0)
        c("%s %s: tx_packets %d == %s rx_packets %d" % (box, p["name"], p["tx_packets"], far,
                                                         k[far][0]),
          p["tx_packets"] == k[far][0])
        c("%s %s: rx_packets %d + ring overflow %d == %s rx_packets %d == %s tx_packets %d" % (
            box, p["name"], p["rx_packets"], ring, mine, k[mine][0], far, k[far][1]),
          p["rx_packets"] == p["dev_ipackets"] and ring >= 0 and k[mine][0] == k[far][1])
        if ring > 0:
            c.note("%s %s: %d frame(s) overflowed the af_packet RX ring (the kernel's %s "
                   "rx_packets > dev_ipackets)" % (box, p["name"], ring, mine))
    print(ring_total)
    return 1 if c.bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("params")
    s.add_argument("policy")
    s = sub.add_parser("clock")
    s.add_argument("prefix")
    s = sub.add_parser("wait-clock")
    s.add_argument("prefix")
    s.add_argument("t", type=float)
    s.add_argument("--timeout", type=float, default=60)
    s = sub.add_parser("sample")
    s.add_argument("prefix")
    s.add_argument("out")
    s.add_argument("--interval", type=float, default=0.02)
    s = sub.add_parser("ping")
    s.add_argument("addr")
    s.add_argument("-c", "--count", type=int, default=9)
    s.add_argument("-i", "--interval", type=float, default=0.1,
                   help="pause after each echo's answer, s")
    s.add_argument("-W", "--timeout", type=float, default=3.0)
    s.add_argument("-s", "--size", type=int, default=56)
    s = sub.add_parser("rtt")
    s.add_argument("file")
    s.add_argument("expected", type=float)
    s.add_argument("tol", type=float)
    s = sub.add_parser("link")
    s.add_argument("emu_json")
    s.add_argument("--samples")
    s.add_argument("--ber-forward", type=float)
    s.add_argument("--outage", type=float, nargs=2, metavar=("AT_S", "FOR_S"))
    s = sub.add_parser("wire")
    s.add_argument("wire")
    s.add_argument("hub")
    s.add_argument("emu")
    s.add_argument("term")
    a = ap.parse_args()
    return {"params": cmd_params, "clock": cmd_clock, "wait-clock": cmd_wait_clock, "sample": cmd_sample, "ping": cmd_ping,
            "rtt": cmd_rtt, "link": cmd_link, "wire": cmd_wire}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
