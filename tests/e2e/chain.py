#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the three-box chain testbed (testbed.sh `tb_topology chain`,
test_geo_chain.sh, test_satlink_chain.sh): the emulator's clock, a sampler of
its link counters, traffic the tests send into the outage windows, and the
checks on what the boxes and the link model counted.

Every time below is the emulator's clock: its link model's time, good_ns +
bad_ns of a direction in /satgw/link (the model brings them up to the time it
publishes its counters, every 10 ms), 0 when the emulator started. Outages
are scheduled on it (docs/emulator.md), so the tests wait on it, never on
their own clock.

  chain.py params POLICY
      the emulator policy's link as shell assignments: rates, delays, forward
      ber, the first outage schedule (OUT_AT, OUT_FOR, OUT_EVERY: 0 = once;
      both directions must have the same schedules)
  chain.py clock PREFIX
      the emulator's clock in seconds
  chain.py wait-clock PREFIX T [--timeout S]
      wait until the emulator's clock reaches T seconds; print it
  chain.py next-window PREFIX POLICY [--lead S]
      the start (s) of the first outage window that starts at least LEAD s
      after the emulator's clock now; exit 1 if the schedule has none left
  chain.py drops PREFIX
      the outage drops so far: "FORWARD RETURN" (dropped_outage)
  chain.py sample PREFIX OUT [--interval S]
      append one JSON line per sample of /satgw/link (each direction with its
      clock) to OUT until SIGTERM
  chain.py probe PREFIX POLICY OUT --hub-side NETNS ADDR --term-side NETNS ADDR
                 [--windows N] [--port P] [--interval S]
      traffic the test generates itself inside an outage window: waits for
      the next window on the emulator's clock and, from the first sample that
      shows the clock inside it to the window's end, sends a UDP datagram
      hub-side -> term-side (forward) and term-side -> hub-side (return)
      after every sample (sockets opened in the two network namespaces).
      Samples go to OUT (as `sample` writes them). Done when two samples
      inside one window show frames offered between them in both directions
      (the emulator itself saw traffic in the window); otherwise the next
      window, N windows at most (exit 1 then).
  chain.py ping ADDR [-c N] [-i S] [-W S] [-s SIZE] [--emu PREFIX --policy POLICY]
                [--want-below MS [--max-count M]] [--max-lost L]
      ICMP echoes one at a time with ping.py's code (csum, receive), each
      answered or timed out before the next: one "seq N rtt_ms X" line per
      echo; exit 1 unless N were answered. --want-below MS: more echoes, up to
      --max-count answers, until one took less than MS. (One process for all echoes:
      every `ip netns exec` unmounts /sys, which waits for an expedited RCU
      grace period, and those took 10-120 s on this VM under full CPU load.)
      With --emu: no echo is sent within 1 s before an outage window or
      inside one (emulator clock), and an unanswered echo for which the
      emulator counted a frame lost (bit errors, outage, queue) meanwhile is
      logged "seq N lost_on_link" and sent again (5 times at most); one the
      link did not lose fails.
  chain.py rtt FILE EXPECTED_MS TOL_MS
      FILE holds `ping` or ping.py output lines: the smallest RTT must lie
      within EXPECTED_MS +- TOL_MS (none may come early; the median is
      printed)
  chain.py link EMU_JSON --policy POLICY [--samples FILE]... [--ber-forward B]
                [--need-outage-traffic DIR,...]
      the emulator's link counters at exit: conservation per direction, the
      loss count against the bit error rate, the outage windows against the
      samples (see cmd_link), the ports against the model
  chain.py wire WIRE_TXT HUB_JSON EMU_JSON TERM_JSON
      every box's port counters against the kernel counters of the veths on
      both sides; prints the af_packet ring overflows (sum) on stdout
Each check prints "ok" or "FAIL" and a line; the exit code is 1 when one fails.
"""
import argparse
import ctypes
import json
import math
import os
import signal
import socket
import statistics
import sys
import time
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sgwtel import Telemetry  # noqa: E402

DIRS = ("forward", "return")
NS = 1000000000
FIELDS = ("offered_packets", "delivered_packets", "dropped_queue", "dropped_loss",
          "dropped_outage", "queue_packets", "queue_bytes", "held_now")


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


def sec_ns(v):
    """Seconds as the policy writes them -> ns, as the loader reads them (decimal)."""
    return int((Decimal(str(v)) * NS).to_integral_value())


def load_link(policy):
    """Per direction: rate, overhead, ber and the outage schedules (start, dur, period) in ns."""
    import yaml   # Debian's python3-yaml, in /usr/bin/python3
    link = yaml.safe_load(open(policy))["link"]
    out = {}
    for d in DIRS:
        l = link[d]
        out[d] = {"rate": int(l.get("rate_bps", 0)), "overhead": int(l.get("overhead_bytes", 0)),
                  "delay_ms": l.get("delay_ms", 0),
                  "ber": float((l.get("loss") or {}).get("ber", 0)),
                  "outages": [(sec_ns(o["at_s"]), sec_ns(o["for_s"]), sec_ns(o.get("every_s", 0)))
                              for o in (l.get("outages") or [])]}
    return out


def windows(scheds, lo, hi):
    """The outage windows [s, e) that overlap [lo, hi), sorted."""
    out = []
    for a, dur, per in scheds:
        if per == 0:
            if a < hi and a + dur > lo:
                out.append((a, a + dur))
            continue
        k = max(0, (lo - a - dur) // per)
        while a + k * per < hi:
            if a + k * per + dur > lo:
                out.append((a + k * per, a + k * per + dur))
            k += 1
    return sorted(out)


def next_window(scheds, t):
    """The first window that ends after t (the one t is in, or the next), or None."""
    best = None
    for a, dur, per in scheds:
        if per == 0:
            w = (a, a + dur) if a + dur > t else None
        else:
            k = max(0, -(-(t - a - dur + 1) // per))
            w = (a + k * per, a + k * per + dur)
        if w is not None and (best is None or w < best):
            best = w
    return best


def snapshot(t):
    """One read of /satgw/link: per direction its clock (ns) and counters."""
    link = t.cmd("/satgw/link")
    rec = {"mono": time.monotonic()}
    for d in DIRS:
        rec[d] = {k: link[d][k] for k in FIELDS}
        # Each direction is published under its own seqlock: its own clock.
        rec[d]["clock_ns"] = link[d]["good_ns"] + link[d]["bad_ns"]
    rec["clock_s"] = rec["forward"]["clock_ns"] / 1e9
    return rec


def clock_of(link):
    f = link["forward"]
    return (f["good_ns"] + f["bad_ns"]) / 1e9


def cmd_params(a):
    conf = load_link(a.policy)
    fw, rt = conf["forward"], conf["return"]
    out = {"FWD_RATE": fw["rate"], "RET_RATE": rt["rate"],
           "FWD_DELAY_MS": fw["delay_ms"], "RET_DELAY_MS": rt["delay_ms"],
           "FWD_OVERHEAD": fw["overhead"], "RET_OVERHEAD": rt["overhead"],
           "FWD_BER": fw["ber"]}
    if fw["outages"] != rt["outages"]:
        sys.exit("chain.py: %s: the forward and return links have different outages" % a.policy)
    if fw["outages"]:
        at, dur, per = fw["outages"][0]
        out["OUT_AT"], out["OUT_FOR"], out["OUT_EVERY"] = at / NS, dur / NS, per / NS
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


def cmd_next_window(a):
    sch = load_link(a.policy)["forward"]["outages"]
    with Telemetry(a.prefix) as t:
        c = t.cmd("/satgw/link")
    now = c["forward"]["good_ns"] + c["forward"]["bad_ns"]
    w = next_window(sch, now + sec_ns(a.lead))
    while w is not None and w[0] < now + sec_ns(a.lead):
        w = next_window(sch, w[1])
    if w is None:
        print("chain.py: no outage window starts %s s after clock %.3f s" % (a.lead, now / NS),
              file=sys.stderr)
        return 1
    print("%.3f" % (w[0] / NS))
    return 0


def cmd_drops(a):
    with Telemetry(a.prefix) as t:
        link = t.cmd("/satgw/link")
    print("%d %d" % (link["forward"]["dropped_outage"], link["return"]["dropped_outage"]))
    return 0


def cmd_sample(a):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    with Telemetry(a.prefix) as t, open(a.out, "a") as f:
        while not stop:
            f.write(json.dumps(snapshot(t), sort_keys=True) + "\n")
            f.flush()
            time.sleep(a.interval)
    return 0


CLONE_NEWNET = 0x40000000


def udp_socket_in(netns, addr, port):
    """A UDP socket bound to addr:port inside network namespace netns (/run/netns/NAME):
    setns(2) for this thread, the socket, and back (a socket keeps its namespace)."""
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open(os.path.join("/run/netns", netns), os.O_RDONLY)
    try:
        if libc.setns(there, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, "setns %s: %s" % (netns, os.strerror(e)))
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((addr, port))
            s.setblocking(False)
        finally:
            if libc.setns(home, CLONE_NEWNET) != 0:
                e = ctypes.get_errno()
                raise OSError(e, "setns back: %s" % os.strerror(e))
    finally:
        os.close(home)
        os.close(there)
    return s


def passed(r):
    """Frames offered to a direction and not dropped by its queue: they went on the wire."""
    return r["offered_packets"] - r["dropped_queue"]


def cmd_probe(a):
    sch = load_link(a.policy)
    if sch["forward"]["outages"] != sch["return"]["outages"] or not sch["forward"]["outages"]:
        sys.exit("chain.py probe: %s: both directions need the same outage schedule" % a.policy)
    sch = sch["forward"]["outages"]
    hs = udp_socket_in(a.hub_side[0], a.hub_side[1], a.port)
    ts = udp_socket_in(a.term_side[0], a.term_side[1], a.port)
    sent = {d: 0 for d in DIRS}
    tries = 0
    win = None
    first, last = {}, {}
    with Telemetry(a.prefix) as t, open(a.out, "a") as f:
        while True:
            r = snapshot(t)
            f.write(json.dumps(r, sort_keys=True) + "\n")
            f.flush()
            now = min(r[d]["clock_ns"] for d in DIRS)
            if win is not None:
                # Each direction by its own clock (published under its own seqlock).
                for d in DIRS:
                    if win[0] <= r[d]["clock_ns"] < win[1]:
                        first.setdefault(d, r[d])
                        last[d] = r[d]
            if win is not None and now >= win[1]:
                ev = {d: passed(last[d]) - passed(first[d]) if d in first else 0 for d in DIRS}
                print("window [%.3f, %.3f) s: frames offered and queued between its first and "
                      "last samples: forward %d, return %d; probes sent: forward %d, return %d" % (
                          win[0] / NS, win[1] / NS, ev["forward"], ev["return"],
                          sent["forward"], sent["return"]), flush=True)
                if ev["forward"] > 0 and ev["return"] > 0:
                    return 0
                if tries >= a.windows:
                    print("chain.py probe: no window of %d with traffic seen inside it in both "
                          "directions" % tries, file=sys.stderr)
                    return 1
                win = None
            w = next_window(sch, now)
            if w is None:
                print("chain.py probe: the outage schedule has no window left after %.3f s" %
                      (now / NS), file=sys.stderr)
                return 1
            if now < w[0]:
                time.sleep(min(0.05, max(0.002, (w[0] - now) / NS / 2)))
                continue
            if win != w:
                # The first sample inside the window: what it counts was offered before
                # the probes that follow it.
                win, tries = w, tries + 1
                first = {d: r[d] for d in DIRS}
                last = dict(first)
                sent = {d: 0 for d in DIRS}
            payload = b"satgw-outage-probe %.3f" % (now / NS)
            hs.sendto(payload, (a.term_side[1], a.port))
            sent["forward"] += 1
            ts.sendto(payload, (a.hub_side[1], a.port))
            sent["return"] += 1
            time.sleep(a.interval)


def link_losses(t):
    """Frames the link has lost so far, both directions, every cause."""
    link = t.cmd("/satgw/link")
    return sum(link[d][k] for d in DIRS for k in ("dropped_loss", "dropped_outage",
                                                   "dropped_queue"))


def cmd_ping(a):
    import select
    import struct
    import ping   # tests/e2e/ping.py

    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident = os.getpid() & 0xFFFF
    payload = (b"satgw-e2e-ping!" * ((a.size // 15) + 1))[:a.size]
    sent_at, got = {}, {}
    t = Telemetry(a.emu) if a.emu else None
    sch = load_link(a.policy)["forward"]["outages"] if a.emu and a.policy else []
    answered = lost_on_link = unexplained = 0
    seq = 0
    best = None
    # COUNT answers; with --want-below, more (up to --max-count answers) until the
    # smallest RTT is below that many ms.
    while answered < a.count or (a.want_below is not None and answered < a.max_count and
                                 best > a.want_below):
        seq += 1
        if t is not None:
            # Not within 1 s of an outage window: the echo and its answer cross the
            # link 270 ms apart.
            while True:
                link = t.cmd("/satgw/link")
                now = link["forward"]["good_ns"] + link["forward"]["bad_ns"]
                w = next_window(sch, now)
                if w is None or (now < w[0] - NS):
                    break
                time.sleep(min(0.05, max(0.005, (w[1] + 20000000 - now) / NS)))
            before = link_losses(t)
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
        if seq in got:
            answered += 1
            best = got[seq] * 1000 if best is None else min(best, got[seq] * 1000)
            print("seq %d rtt_ms %.3f" % (seq, got[seq] * 1000), flush=True)
        elif t is not None and link_losses(t) > before:
            lost_on_link += 1
            print("seq %d lost_on_link (the emulator counted %d frame(s) lost meanwhile)" % (
                seq, link_losses(t) - before), flush=True)
            if lost_on_link > a.max_lost:
                break
        else:
            unexplained += 1
            print("seq %d rtt_ms -" % seq, flush=True)
            break
        time.sleep(a.interval)
    if t is not None:
        t.close()
    return 0 if answered >= a.count and not unexplained and lost_on_link <= a.max_lost else 1


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
    med, lo = statistics.median(rtts), min(rtts)
    print("  rtt: n %d, min %.3f ms, median %.3f, max %.3f; expected %.3f ms "
          "(min deviates %+.3f ms, %+.3f%%; median %+.3f ms)" % (
              len(rtts), lo, med, max(rtts), a.expected, lo - a.expected,
              (lo - a.expected) / a.expected * 100, med - a.expected))
    # The link's delay shows in every echo; what the hosts add (scheduling of six
    # processes on two shared cores) only lengthens an echo. The smallest RTT is
    # the link's plus the least the hosts added: no echo may come early, and one
    # at least must come within the tolerance.
    c("smallest RTT %.3f ms within %.3f ms of %.3f ms" % (lo, a.tol, a.expected),
      abs(lo - a.expected) <= a.tol)
    return 1 if c.bad else 0


def load_samples(paths):
    out = []
    for path in paths or []:
        if path and os.path.exists(path):
            for line in open(path):
                line = line.strip()
                if line:
                    out.append(json.loads(line))
    return out


def backlog_ns(r, rate, overhead):
    """An upper bound of how long the line stays busy with what the queue holds (the
    frame on the wire counted whole), rounded up, +2 ns for the model's rounding."""
    if rate == 0:
        return 0
    bits = (r["queue_bytes"] + r["queue_packets"] * overhead) * 8
    return -(-bits * NS // rate) + 2


def check_outages(c, link, conf, samples, need):
    """The outage windows against the samples, per direction (docs/emulator.md: a frame
    is lost to an outage when its transmission [start, end) overlaps a window; the
    verdict, and the count, come when the frame is offered). Two exact rules:

    1. A sampled interval (x, y] clear of every window: frames offered in it start
       after x and end by y's clock + y's backlog, so if no window overlaps that
       span, dropped_outage(y) == dropped_outage(x). The start of the emulator
       (clock 0, nothing counted) and its exit report are samples too.
    2. Two samples x, y inside one window [s, e) with frames offered and queued
       between them: a frame was on the wire at some time in (x, y], inside the
       window, so it was lost to the outage, counted when it was offered, which
       was after the last sample B whose backlog ended by s. So
       dropped_outage(y) > dropped_outage(B).

    need: directions that must have had traffic inside at least one window (the
    test sent its own there), so that rule 2 is not vacuous."""
    for d in DIRS:
        sch, rate, ovh = conf[d]["outages"], conf[d]["rate"], conf[d]["overhead"]
        if not sch:
            c.note("%s: no outage scheduled" % d)
            continue
        zero = {k: 0 for k in FIELDS}
        zero["clock_ns"] = 0
        ex = dict(link[d])
        ex["clock_ns"] = ex["good_ns"] + ex["bad_ns"]
        # The exit report has no queue: bound it by the largest queue seen.
        ex["queue_packets"], ex["queue_bytes"] = ex["queue_packets_max"], ex["queue_bytes_max"]
        real = sorted((s[d] for s in samples), key=lambda r: r["clock_ns"])
        seq = [zero] + real + [ex]
        for r in seq:
            r["end_ns"] = r["clock_ns"] + backlog_ns(r, rate, ovh)
        # Rule 1.
        clear, wrong = 0, []
        for x, y in zip(seq, seq[1:]):
            if windows(sch, x["clock_ns"], max(y["end_ns"], x["clock_ns"] + 1)):
                continue
            clear += 1
            if y["dropped_outage"] != x["dropped_outage"]:
                wrong.append((x, y))
        for x, y in wrong[:5]:
            print("  %s: between clock %.6f and %.6f s (line busy until %.6f s at most), no "
                  "window, yet dropped_outage %d -> %d" % (
                      d, x["clock_ns"] / NS, y["clock_ns"] / NS, y["end_ns"] / NS,
                      x["dropped_outage"], y["dropped_outage"]))
        c("%s: no outage drop outside the windows: dropped_outage unchanged across each of "
          "the %d sampled intervals that no window overlaps (%d samples, clock %.2f..%.2f s, "
          "exit at %.2f s)" % (d, clear, len(real), real[0]["clock_ns"] / NS if real else 0,
                               real[-1]["clock_ns"] / NS if real else 0, ex["clock_ns"] / NS),
          not wrong and clear > 0)
        # Rule 2.
        busy = 0
        for s, e in windows(sch, 0, ex["clock_ns"]):
            inside = [r for r in real if s <= r["clock_ns"] < e]
            if len(inside) < 2:
                print("  %-7s window [%.3f, %.3f) s: %d sample(s) inside" % (
                    d, s / NS, e / NS, len(inside)))
                continue
            x, y = inside[0], inside[-1]
            n = passed(y) - passed(x)
            base = [r for r in seq if r["end_ns"] <= s]
            print("  %-7s window [%.3f, %.3f) s: %d sample(s) inside, %d frame(s) offered and "
                  "queued between clock %.3f and %.3f s; dropped_outage %s before it, %d at "
                  "%.3f s" % (d, s / NS, e / NS, len(inside), n, x["clock_ns"] / NS,
                              y["clock_ns"] / NS,
                              "%d" % base[-1]["dropped_outage"] if base else "?",
                              y["dropped_outage"], y["clock_ns"] / NS))
            if n <= 0 or not base:
                continue
            busy += 1
            b = base[-1]
            c("%s: %d frame(s) on the wire inside the outage [%.3f, %.3f) s: dropped_outage "
              "%d at clock %.3f s > %d at %.3f s (the line was free before the window)" % (
                  d, n, s / NS, e / NS, y["dropped_outage"], y["clock_ns"] / NS,
                  b["dropped_outage"], b["clock_ns"] / NS),
              y["dropped_outage"] > b["dropped_outage"])
        if d in need:
            c("%s: frames offered inside %d outage window(s) (the test's own traffic; at "
              "least one needed)" % (d, busy), busy >= 1)
        elif busy == 0:
            c.note("%s: no frame seen offered inside an outage window" % d)


def cmd_link(a):
    st = json.load(open(a.emu_json))
    link = st["link"]
    conf = load_link(a.policy)
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
    b = a.ber_forward if a.ber_forward is not None else conf["forward"]["ber"]
    if b:
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

    check_outages(c, link, conf, load_samples(a.samples),
                  set(x for x in (a.need_outage_traffic or "").split(",") if x))
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
    s = sub.add_parser("next-window")
    s.add_argument("prefix")
    s.add_argument("policy")
    s.add_argument("--lead", default="0")
    s = sub.add_parser("drops")
    s.add_argument("prefix")
    s = sub.add_parser("sample")
    s.add_argument("prefix")
    s.add_argument("out")
    s.add_argument("--interval", type=float, default=0.02)
    s = sub.add_parser("probe")
    s.add_argument("prefix")
    s.add_argument("policy")
    s.add_argument("out")
    s.add_argument("--hub-side", nargs=2, required=True, metavar=("NETNS", "ADDR"))
    s.add_argument("--term-side", nargs=2, required=True, metavar=("NETNS", "ADDR"))
    s.add_argument("--windows", type=int, default=3)
    s.add_argument("--port", type=int, default=9)
    s.add_argument("--interval", type=float, default=0.005)
    s = sub.add_parser("ping")
    s.add_argument("addr")
    s.add_argument("-c", "--count", type=int, default=9)
    s.add_argument("-i", "--interval", type=float, default=0.1,
                   help="pause after each echo's answer, s")
    s.add_argument("-W", "--timeout", type=float, default=3.0)
    s.add_argument("-s", "--size", type=int, default=56)
    s.add_argument("--emu", help="the emulator's file prefix: dodge outages, explain losses")
    s.add_argument("--policy", help="the emulator's policy (its outage schedule)")
    s.add_argument("--max-lost", type=int, default=5)
    s.add_argument("--want-below", type=float, metavar="MS",
                   help="go on until an RTT is below MS (up to --max-count answers)")
    s.add_argument("--max-count", type=int, default=30)
    s = sub.add_parser("rtt")
    s.add_argument("file")
    s.add_argument("expected", type=float)
    s.add_argument("tol", type=float)
    s = sub.add_parser("link")
    s.add_argument("emu_json")
    s.add_argument("--policy", required=True)
    s.add_argument("--samples", action="append")
    s.add_argument("--ber-forward", type=float)
    s.add_argument("--need-outage-traffic", metavar="DIR,...")
    s = sub.add_parser("wire")
    s.add_argument("wire")
    s.add_argument("hub")
    s.add_argument("emu")
    s.add_argument("term")
    a = ap.parse_args()
    return {"params": cmd_params, "clock": cmd_clock, "wait-clock": cmd_wait_clock,
            "next-window": cmd_next_window, "drops": cmd_drops, "sample": cmd_sample,
            "probe": cmd_probe, "ping": cmd_ping, "rtt": cmd_rtt, "link": cmd_link,
            "wire": cmd_wire}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
