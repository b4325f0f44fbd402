#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Crafted packets for the satgw drop-rule and malformed-packet test (scapy).

  craft.py sniff --iface IF --ready FILE --out FILE --seconds S [--until-end]
      capture on IF for S seconds (or until SIGTERM); write READY once the
      capture socket is open; write the frames to OUT (pcap). --until-end:
      stop at the first frame carrying the END marker (craft.py end), which
      was sent after everything else: every earlier frame that reached IF is
      then captured; exit 1 if it never came
  craft.py send --iface IF --dst-mac MAC --src IP --dst IP
      send, each with a marker in its bytes:
        telnet     TCP SYN to port 23          (dropped by rule drop-telnet)
        ip4trunc   IPv4 header cut at 12 bytes (malformed ip4_trunc)
        badihl     IPv4 with IHL 3             (malformed ip4_bad_ihl)
        optlen0    TCP option with length 0    (malformed tcp_bad_option)
        msslen3    TCP MSS option, length 3    (malformed tcp_bad_option)
        valid      a well-formed UDP datagram  (forwarded: the control)
  craft.py end --iface IF --dst-mac MAC --src IP --dst IP
      send one well-formed UDP datagram carrying the END marker
  craft.py arp --iface IF --psrc IP --pdst IP
      ARP who-has through satgw; exit 0 if the answer comes back
  craft.py scan PCAP [--ignore-src MAC]
      print which markers the capture holds, as JSON (frames from MAC not counted)
"""
import argparse
import json
import os
import signal
import sys
import time

from scapy.all import (ARP, IP, TCP, UDP, AsyncSniffer, Ether, Raw, conf, rdpcap, sendp,
                       srp1, wrpcap)

conf.verb = 0
MARKERS = {
    "telnet": b"SGWE2E-TELNET",
    "ip4trunc": b"SGWE2ETR",   # 8 bytes: the whole packet stays under 20 bytes of IPv4
    "badihl": b"SGWE2E-BADIHL",
    "optlen0": b"SGWE2E-OPTLEN0",
    "msslen3": b"SGWE2E-MSSLEN3",
    "valid": b"SGWE2E-VALID",
}
END = b"SGWE2E-END-OF-TEST"   # not a marker: the sniffer's stop signal


def frames(a):
    eth = Ether(dst=a.dst_mac, src=a.src_mac) if a.src_mac else Ether(dst=a.dst_mac)
    ip = IP(src=a.src, dst=a.dst, ttl=64)
    out = {}
    out["telnet"] = eth / ip / TCP(sport=40023, dport=23, flags="S", seq=1000) / Raw(MARKERS["telnet"])
    # 14-byte Ethernet header then 12 bytes of "IPv4": version 4, IHL 5, then the marker.
    trunc = bytes([0x45, 0x00, 0x00, 0x1c]) + MARKERS["ip4trunc"]
    out["ip4trunc"] = Ether(bytes(eth / Raw(b""))[:12] + b"\x08\x00" + trunc)
    out["badihl"] = eth / IP(src=a.src, dst=a.dst, ihl=3) / UDP(sport=40001, dport=9) / Raw(MARKERS["badihl"])
    # dataofs 6: the 4 bytes after the fixed header are options.
    out["optlen0"] = eth / ip / TCP(sport=40002, dport=80, flags="S", dataofs=6) / Raw(
        b"\x02\x00\x00\x00" + MARKERS["optlen0"])
    out["msslen3"] = eth / ip / TCP(sport=40003, dport=80, flags="S", dataofs=6) / Raw(
        b"\x02\x03\x05\xb4" + MARKERS["msslen3"])
    out["valid"] = eth / ip / UDP(sport=40004, dport=9) / Raw(MARKERS["valid"])
    return out


def send(a):
    fr = frames(a)
    for name in ("telnet", "ip4trunc", "badihl", "optlen0", "msslen3", "valid"):
        sendp(fr[name], iface=a.iface)
        print("sent %-9s %3d bytes: %s" % (name, len(bytes(fr[name])), bytes(fr[name])[14:34].hex()))
        time.sleep(0.02)
    return 0


def end(a):
    eth = Ether(dst=a.dst_mac, src=a.src_mac) if a.src_mac else Ether(dst=a.dst_mac)
    sendp(eth / IP(src=a.src, dst=a.dst, ttl=64) / UDP(sport=40005, dport=9) / Raw(END),
          iface=a.iface)
    print("sent end")
    return 0


def sniff(a):
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *x: stop.update(flag=True))

    def ready():
        with open(a.ready, "w") as f:
            f.write("ready\n")

    kw = {"stop_filter": lambda p: END in bytes(p)} if a.until_end else {}
    s = AsyncSniffer(iface=a.iface, store=True, started_callback=ready, **kw)
    s.start()
    end_at = time.monotonic() + a.seconds
    while not stop["flag"] and time.monotonic() < end_at and s.thread.is_alive():
        time.sleep(0.05)
    if s.thread.is_alive():
        s.stop()
    else:
        s.join()
    pk = s.results or []
    wrpcap(a.out, pk)
    got_end = any(END in bytes(p) for p in pk)
    print("captured %d frames%s" % (len(pk), ", up to the end marker" if got_end else ""))
    return 1 if a.until_end and not got_end else 0


def arp(a):
    req = Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, psrc=a.psrc, pdst=a.pdst)
    ans = srp1(req, iface=a.iface, timeout=a.timeout)
    if ans is None or not ans.haslayer(ARP) or ans[ARP].op != 2 or ans[ARP].psrc != a.pdst:
        print("no ARP answer for %s" % a.pdst)
        return 1
    print("ARP %s is-at %s" % (ans[ARP].psrc, ans[ARP].hwsrc))
    return 0


def scan(a):
    seen = {k: 0 for k in MARKERS}
    pk = rdpcap(a.pcap) if os.path.getsize(a.pcap) > 0 else []
    ignore = (a.ignore_src or "").lower()
    for p in pk:
        # The capturing host's own frames (an ICMP error quoting a datagram) do not count.
        if ignore and p.haslayer(Ether) and p[Ether].src.lower() == ignore:
            continue
        b = bytes(p)
        for k, m in MARKERS.items():
            if m in b:
                seen[k] += 1
    print(json.dumps({"frames": len(pk), "markers": seen}, sort_keys=True))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("sniff")
    s.add_argument("--iface", required=True)
    s.add_argument("--ready", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--seconds", type=float, default=30)
    s.add_argument("--until-end", action="store_true")
    t = sub.add_parser("send")
    t.add_argument("--iface", required=True)
    t.add_argument("--dst-mac", required=True)
    t.add_argument("--src-mac")
    t.add_argument("--src", required=True)
    t.add_argument("--dst", required=True)
    e = sub.add_parser("end")
    e.add_argument("--iface", required=True)
    e.add_argument("--dst-mac", required=True)
    e.add_argument("--src-mac")
    e.add_argument("--src", required=True)
    e.add_argument("--dst", required=True)
    r = sub.add_parser("arp")
    r.add_argument("--iface", required=True)
    r.add_argument("--psrc", required=True)
    r.add_argument("--pdst", required=True)
    r.add_argument("--timeout", type=float, default=3)
    c = sub.add_parser("scan")
    c.add_argument("pcap")
    c.add_argument("--ignore-src", help="skip frames from this MAC (the capturing host's own)")
    a = ap.parse_args()
    return {"sniff": sniff, "send": send, "end": end, "arp": arp, "scan": scan}[a.mode](a)


if __name__ == "__main__":
    sys.exit(main())
