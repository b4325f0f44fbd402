#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write pcap files of the traffic a satellite hub sees (deterministic, seeded).

Profiles:
  hub-imix   IMIX frame sizes 64/594/1518 in 7:4:1 proportions over a few
             thousand flows between terrestrial servers and terminal hosts in
             10.20.0.0/16: TCP (most of it; MSS/SACK-permitted/timestamps/
             window scale on SYNs, timestamps on established segments where the
             flow negotiated them, SACK blocks on some ACKs), UDP (DNS, RTP voice
             marked DSCP 46), ESP (IP protocol 50 and UDP 4500, many SPIs), a
             little ICMP, a little IPv6, a few VLAN-tagged flows.
  tcp-64     minimum-size TCP (64-byte frames): ACKs and tiny segments.
  esp        IPsec only: ESP (protocol 50) and ESP-in-UDP (4500) at IMIX sizes
             over many SAs, plus NAT-keepalives and IKE, which are not ESP.
  malformed  half valid traffic, half packets that are truncated or carry bad
             lengths, each labelled with the reason satgw's parser must give.

Sizes are Ethernet frame sizes as Pktgen and RFC 2544 count them, that is with
the 4-byte FCS; a pcap holds frames without FCS, so a "64-byte" frame is 60
bytes in the file. Packets in the small class whose headers alone exceed 60
bytes (a SYN with options, an ACK carrying timestamps and SACK blocks, RTP)
keep their natural, slightly larger size: the class mix stays 7:4:1.

Next to the pcap the script writes OUT.json, a manifest the checks compare
satgw's counters with: packets per satgw class (tcp, udp, esp, icmp, ip_other,
non_ip, malformed), malformed packets per parse reason, frame-size classes.

Run with Debian's /usr/bin/python3 (python3-scapy):
  pktgen-scenarios/gen_traffic.py --profile hub-imix --count 8192 --flows 2048 --out hub-imix.pcap
"""

import argparse
import bisect
import collections
import json
import os
import random
import struct
import sys

try:
    from scapy.layers.dns import DNS, DNSQR, DNSRR, DNSRROPT, EDNS0TLV
    from scapy.layers.inet import ICMP, IP, TCP, UDP
    from scapy.layers.inet6 import IPv6, IPv6ExtHdrDestOpt
    from scapy.layers.l2 import ARP, Dot1Q, Ether
    from scapy.packet import Raw
except ImportError as e:  # Debian's scapy loads only in /usr/bin/python3
    sys.exit("gen_traffic.py: scapy is missing (%s): apt-get install python3-scapy and run "
             "with /usr/bin/python3" % e)

PROFILES = ("hub-imix", "tcp-64", "esp", "malformed")

# IMIX classes: frame size with FCS and weight (7:4:1).
IMIX = ((64, 7), (594, 4), (1518, 1))
FCS = 4
ETH_MIN = 60        # shortest frame on the wire without FCS

TERMINALS = 64      # terminal sites 10.20.1.0/24 .. 10.20.64.0/24 (see terminal_prefix)
SERVER_NETS = ("198.51.100.", "203.0.113.", "192.0.2.")
VPN_GWS = ["203.0.113.%d" % i for i in range(200, 216)]
RESOLVERS = ["198.51.100.53", "198.51.100.54"]
MEDIA = ["198.51.100.%d" % i for i in range(160, 168)]
SRV_PORTS = ((443, 70), (80, 15), (8080, 3), (993, 3), (22, 2), (5222, 2), (25, 1),
             (3389, 2), (8443, 2))
HUB_MAC = "02:00:00:00:00:01"      # the core router's side of the hub
MODEM_MAC = "02:00:00:00:00:02"    # the satellite modem / IP gateway
EPOCH = 1700000000                 # fixed pcap timestamps: byte-identical output


def terminal_prefix(t):
    """IPv4 /24 of terminal t (1-based); the policy written by the checks uses the same."""
    return "10.20.%d.0/24" % t


def terminal_host(rng, t):
    return "10.20.%d.%d" % (t, rng.randint(2, 254))


def terminal_host6(rng, t):
    return "2001:db8:20:%x::%x" % (t, rng.randint(2, 0xfffe))


def server_host(rng):
    return rng.choice(SERVER_NETS) + str(rng.randint(1, 150))


def weighted(rng, pairs):
    total = sum(w for _, w in pairs)
    x = rng.uniform(0, total)
    for v, w in pairs:
        x -= w
        if x <= 0:
            return v
    return pairs[-1][0]


def pad_to(pkt_bytes, frame_len):
    """Ethernet padding up to frame_len (the IP length fields stay as they are)."""
    if len(pkt_bytes) < frame_len:
        pkt_bytes += b"\x00" * (frame_len - len(pkt_bytes))
    return pkt_bytes


class Flow:
    """One conversation and its per-direction state (sequence numbers, counters)."""

    def __init__(self, rng, kind, fid):
        self.kind = kind
        self.fid = fid
        self.term = rng.randint(1, TERMINALS)
        self.v6 = kind == "tcp" and rng.random() < 0.03
        self.term_ip = terminal_host6(rng, self.term) if self.v6 else terminal_host(rng, self.term)
        self.vlan = None
        if rng.random() < 0.02:
            self.vlan = (rng.randint(100, 110),) if rng.random() < 0.8 else \
                (rng.randint(200, 203), rng.randint(1, 4000))
        self.ttl_srv = rng.choice((52, 56, 57, 60, 116, 244))
        self.ttl_term = rng.choice((63, 127))
        self.ipid = [rng.randint(0, 65535), rng.randint(0, 65535)]
        if kind == "tcp":
            self.srv_ip = ("2001:db8:100::%x" % rng.randint(1, 0xffff)) if self.v6 \
                else server_host(rng)
            self.srv_port = weighted(rng, SRV_PORTS)
            self.term_port = rng.randint(32768, 60999)
            self.download = rng.random() < 0.85
            self.ts = rng.random() < 0.7
            self.sack_ok = rng.random() < 0.9
            self.mss = (1440 if self.v6 else rng.choice((1460, 1460, 1460, 1452, 1380)))
            self.wscale = rng.choice((7, 7, 8, 9, 10))
            self.seq = [rng.randint(0, 2**32 - 1), rng.randint(0, 2**32 - 1)]  # [term, srv]
            self.tsval = [rng.randint(1, 2**31), rng.randint(1, 2**31)]
            self.is_new = rng.random() < 0.15       # capture sees its handshake
            self.hs = 0 if self.is_new else 2
            self.ends = rng.random() < 0.1
            self.tos = rng.choice((0, 0, 0, 0, 0x28, 0x48))  # a little AF11/AF21
        elif kind == "dns":
            self.srv_ip = rng.choice(RESOLVERS)
            self.term_port = rng.randint(1024, 65535)
            self.qid = rng.randint(0, 65535)
            self.names = ["www.example.com", "cdn.example.net", "api.example.org",
                          "mail.example.com", "time.example.net", "update.example.org"]
        elif kind == "rtp":
            self.srv_ip = rng.choice(MEDIA)
            self.term_port = rng.randrange(16384, 32767, 2)
            self.srv_port = rng.randrange(16384, 32767, 2)
            self.ssrc = [rng.randint(1, 2**32 - 1), rng.randint(1, 2**32 - 1)]
            self.rseq = [rng.randint(0, 65535), rng.randint(0, 65535)]
            self.rts = [rng.randint(0, 2**32 - 1), rng.randint(0, 2**32 - 1)]
        elif kind in ("esp", "natt"):
            self.srv_ip = rng.choice(VPN_GWS)
            # RFC 4303: SPIs 1-255 are reserved; two one-way SAs per tunnel.
            self.spi = [rng.randint(256, 2**32 - 1), rng.randint(256, 2**32 - 1)]
            self.eseq = [rng.randint(1, 5000000), rng.randint(1, 5000000)]
            self.nat_port = rng.choice((4500, rng.randint(1024, 65535)))  # behind a NAT or not
        elif kind == "icmp":
            self.srv_ip = server_host(rng)
            self.icmp_id = rng.randint(1, 65535)
            self.icmp_seq = rng.randint(0, 1000)
        else:
            raise ValueError(kind)

    def l2(self, to_term):
        """Ethernet (and VLAN tags) for a packet towards the terminals or away from them."""
        e = Ether(src=HUB_MAC, dst=MODEM_MAC) if to_term else Ether(src=MODEM_MAC, dst=HUB_MAC)
        if self.vlan:
            for v in self.vlan:
                e = e / Dot1Q(vlan=v)
        return e

    def l3(self, to_term, tos=0, proto=None):
        d = 0 if to_term else 1
        self.ipid[d] = (self.ipid[d] + 1) & 0xffff
        src, dst = (self.srv_ip, self.term_ip) if to_term else (self.term_ip, self.srv_ip)
        ttl = self.ttl_srv if to_term else self.ttl_term
        if self.v6:
            return IPv6(src=src, dst=dst, hlim=ttl, tc=tos)
        kw = {} if proto is None else {"proto": proto}
        return IP(src=src, dst=dst, ttl=ttl, tos=tos, id=self.ipid[d], flags="DF", **kw)

    def hdr_len(self):
        return 14 + 4 * (len(self.vlan) if self.vlan else 0) + (40 if self.v6 else 20)


def tcp_opts_established(f, d, sack_blocks=None):
    opts = []
    if f.ts:
        f.tsval[d] += 7
        opts += [("NOP", None), ("NOP", None), ("Timestamp", (f.tsval[d], f.tsval[1 - d]))]
    if sack_blocks:
        opts += [("NOP", None), ("NOP", None), ("SAck", tuple(x for b in sack_blocks for x in b))]
    return opts


def tcp_packet(rng, f, cls):
    """cls 0: the receiver's ACK (or a handshake/FIN packet), 1/2: a data segment."""
    # d = 0: terminal sends, 1: server sends. Downloads: the server sends data.
    sender = 1 if f.download else 0
    if cls == 0 and f.hs < 2:
        d = 0 if f.hs == 0 else 1          # SYN from the terminal, SYN-ACK back
        opts = [("MSS", f.mss)]
        if f.sack_ok:
            opts.append(("SAckOK", b""))
        if f.ts:
            opts.append(("Timestamp", (f.tsval[d], 0 if f.hs == 0 else f.tsval[0])))
        opts += [("NOP", None), ("WScale", f.wscale)]
        flags = "S" if f.hs == 0 else "SA"
        ack = 0 if f.hs == 0 else (f.seq[0] + 1) & 0xffffffff
        seq = f.seq[d]
        f.seq[d] = (f.seq[d] + 1) & 0xffffffff
        f.hs += 1
        return d, TCP(flags=flags, seq=seq, ack=ack, window=64240 if d == 0 else 65160,
                      options=opts), b""
    f.hs = 2
    if cls == 0:
        d = 1 - sender                    # the data receiver acknowledges
        blocks = None
        if f.sack_ok and rng.random() < 0.08:
            n = rng.randint(1, 3 if f.ts else 4)
            base = (f.seq[sender] + rng.randint(1, 8) * f.mss) & 0xffffffff
            blocks = []
            for _ in range(n):
                left = base
                right = (left + rng.randint(1, 4) * f.mss) & 0xffffffff
                blocks.append((left, right))
                base = (right + rng.randint(1, 6) * f.mss) & 0xffffffff
        tcp = TCP(flags="A", seq=f.seq[d], ack=f.seq[sender],
                  window=rng.randint(500, 65535), options=tcp_opts_established(f, d, blocks))
        return d, tcp, b""
    d = sender
    opts = tcp_opts_established(f, d)
    olen = 12 if f.ts else 0
    frame = (IMIX[cls][0] - FCS)
    plen = max(1, frame - f.hdr_len() - 20 - olen)
    tcp = TCP(flags="PA" if rng.random() < 0.3 else "A", seq=f.seq[d], ack=f.seq[1 - d],
              window=rng.randint(500, 65535), options=opts)
    f.seq[d] = (f.seq[d] + plen) & 0xffffffff
    return d, tcp, rng.randbytes(plen)


def build_tcp(rng, f, cls, fin=False):
    d, tcp, payload = tcp_packet(rng, f, cls)
    if fin and "S" not in str(tcp.flags):
        tcp.flags = "FA"
    to_term = d == 1
    tcp.sport, tcp.dport = (f.srv_port, f.term_port) if to_term else (f.term_port, f.srv_port)
    p = f.l2(to_term) / f.l3(to_term, tos=f.tos) / tcp
    if payload:
        p = p / Raw(payload)
    return p


def build_dns(rng, f, cls):
    """Small: a query from the terminal; medium/large: a (padded, EDNS0) response."""
    name = rng.choice(f.names)
    if cls == 0:
        f.qid = (f.qid + 1) & 0xffff
        dns = DNS(id=f.qid, rd=1, qd=DNSQR(qname=name, qtype=rng.choice((1, 1, 28, 65))))
        return f.l2(False) / f.l3(False) / UDP(sport=f.term_port, dport=53) / dns
    frame = IMIX[cls][0] - FCS
    an = DNSRR(rrname=name, type="A", ttl=rng.randint(30, 3600),
               rdata="198.51.100.%d" % rng.randint(1, 250))
    base = f.l2(True) / f.l3(True) / UDP(sport=53, dport=f.term_port) / \
        DNS(id=f.qid, qr=1, rd=1, ra=1, qd=DNSQR(qname=name), an=an,
            ar=DNSRROPT(rclass=1232))
    # RFC 7830 EDNS(0) padding brings the response to the class size.
    pad = max(0, frame - len(base) - 4)
    dns = DNS(id=f.qid, qr=1, rd=1, ra=1, qd=DNSQR(qname=name), an=an,
              ar=DNSRROPT(rclass=1232, rdata=[EDNS0TLV(optcode=12, optdata=b"\x00" * pad)]))
    return f.l2(True) / f.l3(True) / UDP(sport=53, dport=f.term_port) / dns


def build_rtp(rng, f, cls):
    """RTP voice marked EF (DSCP 46): G.729 (20-byte frames) in the small class, G.711 otherwise."""
    to_term = rng.random() < 0.5
    d = 0 if to_term else 1
    pt, plen = (18, 20) if cls == 0 else (0, 160)
    f.rseq[d] = (f.rseq[d] + 1) & 0xffff
    f.rts[d] = (f.rts[d] + 160) & 0xffffffff
    rtp = struct.pack("!BBHII", 0x80, pt, f.rseq[d], f.rts[d], f.ssrc[d]) + rng.randbytes(plen)
    sp, dp = (f.srv_port, f.term_port) if to_term else (f.term_port, f.srv_port)
    return f.l2(to_term) / f.l3(to_term, tos=46 << 2) / UDP(sport=sp, dport=dp) / Raw(rtp)


def esp_payload(rng, f, d, room):
    """SPI, sequence number, then opaque ciphertext (IV, data, padding, ICV)."""
    f.eseq[d] = (f.eseq[d] + 1) & 0xffffffff
    return struct.pack("!II", f.spi[d], f.eseq[d]) + rng.randbytes(max(room - 8, 24))


def build_esp(rng, f, cls):
    to_term = rng.random() < 0.6
    d = 0 if to_term else 1
    frame = IMIX[cls][0] - FCS
    if f.kind == "esp":
        room = frame - f.hdr_len()
        return f.l2(to_term) / f.l3(to_term, proto=50) / Raw(esp_payload(rng, f, d, room))
    room = frame - f.hdr_len() - 8
    sp, dp = (4500, f.nat_port) if to_term else (f.nat_port, 4500)
    return f.l2(to_term) / f.l3(to_term) / UDP(sport=sp, dport=dp) / \
        Raw(esp_payload(rng, f, d, room))


def build_icmp(rng, f, cls):
    to_term = rng.random() < 0.3     # mostly terminals pinging out, replies come back
    f.icmp_seq = (f.icmp_seq + 1) & 0xffff
    frame = IMIX[cls][0] - FCS
    plen = max(0, frame - f.hdr_len() - 8)
    icmp = ICMP(type=0 if to_term else 8, id=f.icmp_id, seq=f.icmp_seq)
    return f.l2(to_term) / f.l3(to_term) / icmp / Raw(rng.randbytes(plen))


BUILDERS = {"tcp": build_tcp, "dns": build_dns, "rtp": build_rtp, "esp": build_esp,
            "natt": build_esp, "icmp": build_icmp}
SATGW_CLASS = {"tcp": "tcp", "dns": "udp", "rtp": "udp", "esp": "esp", "natt": "esp",
               "icmp": "icmp"}

# Share of packets per kind within each IMIX class (small, medium, large).
HUB_KINDS = (
    (("tcp", 80), ("rtp", 7), ("dns", 4), ("esp", 4), ("natt", 2), ("icmp", 3)),
    (("tcp", 83), ("dns", 5), ("esp", 6), ("natt", 4), ("icmp", 2)),
    (("tcp", 85), ("esp", 9), ("natt", 4), ("icmp", 2)),
)
ESP_KINDS = ((("esp", 70), ("natt", 30)),) * 3


class Gen:
    def __init__(self, seed, n_flows, kind_table):
        self.rng = random.Random(seed)
        self.kind_table = kind_table
        kinds = sorted({k for row in kind_table for k, _ in row})
        share = collections.Counter()
        for row in kind_table:
            for k, w in row:
                share[k] += w
        total = sum(share.values())
        # Flows per kind in proportion to its packets, at least a handful of each.
        self.flows = {}
        fid = 0
        for k in kinds:
            n = max(4, round(n_flows * share[k] / total))
            self.flows[k] = []
            for _ in range(n):
                self.flows[k].append(Flow(self.rng, k, fid))
                fid += 1
        # Heavy-tailed popularity (Zipf-like, s = 0.9): a few elephants, many mice.
        self.cum = {}
        for k, fl in self.flows.items():
            acc, cum = 0.0, []
            for r in range(len(fl)):
                acc += 1.0 / (r + 1) ** 0.9
                cum.append(acc)
            self.cum[k] = cum

    def pick_flow(self, kind):
        cum = self.cum[kind]
        i = bisect.bisect_left(cum, self.rng.uniform(0, cum[-1]))
        return self.flows[kind][min(i, len(cum) - 1)]

    def plan(self, count):
        """Choose (class, kind, flow) for every packet first, so FINs can go last."""
        plan = []
        for _ in range(count):
            cls = weighted(self.rng, tuple((i, w) for i, (_, w) in enumerate(IMIX)))
            kind = weighted(self.rng, self.kind_table[cls])
            plan.append((cls, kind, self.pick_flow(kind)))
        last_small = {}
        for i, (cls, kind, f) in enumerate(plan):
            if kind == "tcp" and cls == 0:
                last_small[f.fid] = i
        fins = {i for i, (_, _, f) in enumerate(plan) if f.kind == "tcp" and f.ends and
                last_small.get(f.fid) == i}
        return plan, fins

    def packets(self, count):
        plan, fins = self.plan(count)
        for i, (cls, kind, f) in enumerate(plan):
            if kind == "tcp":
                p = build_tcp(self.rng, f, cls, fin=i in fins)
            else:
                p = BUILDERS[kind](self.rng, f, cls)
            yield SATGW_CLASS[kind], None, pad_to(bytes(p), ETH_MIN)


def gen_tcp64(seed, count, n_flows):
    """Minimum-size frames: pure ACKs (54 bytes, padded) and 6-byte segments (exactly 60)."""
    rng = random.Random(seed)
    flows = []
    for i in range(n_flows):
        f = Flow(rng, "tcp", i)
        f.v6 = False
        f.vlan = None
        f.term_ip = terminal_host(rng, f.term)
        f.srv_ip = server_host(rng)
        flows.append(f)
    for _ in range(count):
        f = rng.choice(flows)
        to_term = rng.random() < 0.5
        snd = 1 if to_term else 0
        data = rng.random() < 0.3
        sp, dp = (f.srv_port, f.term_port) if to_term else (f.term_port, f.srv_port)
        tcp = TCP(sport=sp, dport=dp, flags="PA" if data else "A", seq=f.seq[snd],
                  ack=f.seq[1 - snd], window=rng.randint(1000, 65535))
        p = f.l2(to_term) / f.l3(to_term) / tcp
        if data:
            p = p / Raw(rng.randbytes(6))
            f.seq[snd] = (f.seq[snd] + 6) & 0xffffffff
        yield "tcp", None, pad_to(bytes(p), ETH_MIN)


def gen_esp(seed, count, n_flows):
    g = Gen(seed, n_flows, ESP_KINDS)
    rng = random.Random(seed + 1)
    natt = g.flows["natt"]
    for cls_name, reason, data in g.packets(count):
        r = rng.random()
        if r < 0.01:
            # NAT-keepalive (RFC 3948 section 2.2): one 0xFF byte, not ESP.
            f = rng.choice(natt)
            p = f.l2(False) / f.l3(False) / UDP(sport=f.nat_port, dport=4500) / Raw(b"\xff")
            yield "udp", None, pad_to(bytes(p), ETH_MIN)
        elif r < 0.02:
            # IKE on 4500 behind the non-ESP marker (four zero bytes), and on 500.
            f = rng.choice(natt)
            ike = rng.randbytes(8) + rng.randbytes(8) + bytes([46, 0x20, 0x23, 0x08]) + \
                struct.pack("!II", rng.randint(1, 50), 76) + rng.randbytes(48)
            port = rng.choice((500, 4500))
            marker = b"\x00\x00\x00\x00" if port == 4500 else b""
            p = f.l2(False) / f.l3(False) / UDP(sport=port, dport=port) / Raw(marker + ike)
            yield "udp", None, pad_to(bytes(p), ETH_MIN)
        yield cls_name, reason, data


# ---- malformed -------------------------------------------------------------------------

def _ip4(src="10.20.3.7", dst="198.51.100.9", proto=6, tot=None, ihl=5, ver=4, opts=b"",
         ident=1):
    hl = ihl * 4
    hdr = struct.pack("!BBHHHBBH4s4s", (ver << 4) | ihl, 0, 0 if tot is None else tot, ident,
                      0x4000, 64, proto, 0, bytes(map(int, src.split("."))),
                      bytes(map(int, dst.split("."))))
    return hdr + opts, hl


def _eth(et=0x0800):
    return bytes.fromhex("020000000002020000000001") + struct.pack("!H", et)


def _v4(l4, proto, tot=None, **kw):
    """Eth + IPv4 with a correct total length unless tot is given, then l4 bytes."""
    opts = kw.pop("opts", b"")
    ihl = kw.pop("ihl", 5 + len(opts) // 4)
    hdr, hl = _ip4(proto=proto, ihl=ihl, opts=opts, **kw)
    total = (20 + len(opts) + len(l4)) if tot is None else tot
    hdr = hdr[:2] + struct.pack("!H", total) + hdr[4:]
    return _eth() + hdr + l4


def _v6(payload, nh, plen=None, ver=6):
    src = bytes.fromhex("20010db80020000a0000000000000002")
    dst = bytes.fromhex("20010db8010000000000000000000009")
    hdr = struct.pack("!IHBB", ver << 28, len(payload) if plen is None else plen, nh, 64)
    return _eth(0x86DD) + hdr + src + dst + payload


def _tcp(doff=5, opts=b"", flags=0x10, payload=b""):
    return struct.pack("!HHIIBBHHH", 40000, 443, 1, 1, doff << 4, flags, 65535, 0, 0) + \
        opts + payload


def malformed_cases(rng):
    """(expected reason, frame bytes) for every way the parser must refuse a packet."""
    vlan = struct.pack("!HH", 0x8100, 100)
    c = []
    c.append(("eth_trunc", _eth()[:rng.randint(1, 13)]))
    c.append(("vlan_trunc", _eth(0x8100) + b"\x00"))
    c.append(("vlan_too_many", _eth(0x88A8)[:12] + struct.pack("!HH", 0x88A8, 5) +
              struct.pack("!HH", 0x8100, 6) + vlan + b"\x08\x00" + bytes(40)))
    c.append(("ip4_trunc", _eth() + bytes([0x45]) + bytes(rng.randint(0, 18))))
    c.append(("ip4_bad_version", _v4(_tcp(), 6, ver=rng.choice((5, 6, 0)))))
    c.append(("ip4_bad_ihl", _v4(_tcp(), 6, ihl=rng.choice((0, 3, 4)))))
    c.append(("ip4_bad_ihl", (_eth() + _ip4(ihl=15)[0])[:14 + 40]))   # header past the frame
    c.append(("ip4_bad_totlen", _v4(_tcp(payload=bytes(20)), 6, tot=rng.randint(61, 1500))))
    c.append(("ip4_bad_totlen", _v4(_tcp(), 6, tot=rng.randint(0, 19))))
    c.append(("ip4_bad_option", _v4(_tcp(), 6, opts=bytes([7, 0, 0, 0]))))      # length 0
    c.append(("ip4_bad_option", _v4(_tcp(), 6, opts=bytes([68, 40, 5, 0]))))    # past header
    c.append(("ip6_trunc", _eth(0x86DD) + bytes([0x60]) + bytes(rng.randint(0, 38))))
    c.append(("ip6_bad_version", _v6(_tcp(), 6, ver=4)))
    c.append(("ip6_bad_paylen", _v6(_tcp(), 6, plen=rng.randint(41, 1400))))
    c.append(("ip6_ext_trunc", _v6(bytes([6, 4]) + bytes(6), 60)))     # says 40 bytes, has 8
    chain = b"".join(bytes([60, 0]) + bytes(6) for _ in range(8)) + bytes([6, 0]) + bytes(6)
    c.append(("ip6_ext_too_many", _v6(chain + _tcp(), 60)))
    c.append(("tcp_trunc", _v4(_tcp()[:rng.randint(0, 19)], 6)))
    c.append(("tcp_bad_doff", _v4(_tcp(doff=rng.choice((0, 2, 4))), 6)))
    c.append(("tcp_bad_doff", _v4(_tcp(doff=15, opts=bytes(8)), 6)))    # header past segment
    c.append(("tcp_bad_option", _v4(_tcp(doff=6, opts=bytes([2, 0, 0, 0])), 6)))     # len 0
    c.append(("tcp_bad_option", _v4(_tcp(doff=6, opts=bytes([2, 5, 5, 0xb4])), 6)))  # MSS len 5
    c.append(("tcp_bad_option", _v4(_tcp(doff=8, opts=bytes([1, 1, 5, 11]) + bytes(8)), 6)))
    c.append(("tcp_bad_option", _v4(_tcp(doff=7, opts=bytes([1, 1, 8, 10]) + bytes(4)), 6)))
    c.append(("udp_trunc", _v4(bytes(rng.randint(0, 7)), 17)))
    c.append(("udp_bad_len", _v4(struct.pack("!HHHH", 5000, 53, rng.randint(0, 7), 0) +
                                 bytes(12), 17)))
    c.append(("udp_bad_len", _v4(struct.pack("!HHHH", 5000, 53, 400, 0) + bytes(12), 17)))
    c.append(("esp_trunc", _v4(struct.pack("!I", 0x1234), 50)))
    c.append(("esp_trunc", _v4(struct.pack("!HHHH", 4500, 4500, 13, 0) +
                               struct.pack("!I", 0x2001) + b"\x01", 17)))
    c.append(("icmp_trunc", _v4(bytes([8, 0]), 1)))
    c.append(("lift_trunc", _v4(bytes(4), 253)))
    c.append(("xcp_trunc", _v4(bytes(8), 254)))
    return c


def valid_oddities(rng):
    """(satgw class, frame) that look odd but are valid and must be forwarded."""
    c = []
    # Ethernet padding past the IP total length (every short frame on a real wire).
    c.append(("tcp", pad_to(_v4(_tcp(), 6), 60)))
    # IPv4 options (NOP, NOP, router alert padded), TCP with an unknown option kind.
    c.append(("tcp", _v4(_tcp(), 6, opts=bytes([1, 1, 148, 4, 0, 0, 1, 0]))))
    c.append(("tcp", pad_to(_v4(_tcp(doff=6, opts=bytes([30, 4, 0, 0])), 6), 60)))
    # First fragment of a UDP datagram (UDP length counts bytes still to come),
    # and a later fragment (no L4 header: opaque IP).
    frag1 = _v4(struct.pack("!HHHH", 5000, 53, 3000, 0) + bytes(100), 17)
    frag1 = frag1[:20] + struct.pack("!H", 0x2000) + frag1[22:]
    c.append(("udp", frag1))
    frag2 = _v4(bytes(100), 17)
    frag2 = frag2[:20] + struct.pack("!H", 0x0020) + frag2[22:]
    c.append(("ip_other", frag2))
    # QinQ, ARP, GRE, IPv6 with a destination-options header, NAT-keepalive, IKE.
    c.append(("tcp", bytes(Ether(src=MODEM_MAC, dst=HUB_MAC) / Dot1Q(vlan=10, type=0x8100) /
                           Dot1Q(vlan=20) / IP(src="10.20.5.5", dst="198.51.100.7") /
                           TCP(sport=40000, dport=443, flags="A"))))
    c.append(("non_ip", pad_to(bytes(Ether(src=HUB_MAC, dst="ff:ff:ff:ff:ff:ff") /
                                     ARP(psrc="10.20.0.1", pdst="10.20.0.2")), 60)))
    c.append(("ip_other", pad_to(_v4(bytes(8), 47), 60)))
    c.append(("tcp", bytes(Ether(src=MODEM_MAC, dst=HUB_MAC) /
                           IPv6(src="2001:db8:20:a::2", dst="2001:db8:100::9") /
                           IPv6ExtHdrDestOpt() / TCP(sport=40001, dport=443, flags="A"))))
    c.append(("udp", pad_to(_v4(struct.pack("!HHHH", 4500, 4500, 9, 0) + b"\xff", 17), 60)))
    c.append(("udp", pad_to(_v4(struct.pack("!HHHH", 4500, 4500, 20, 0) + bytes(12), 17), 60)))
    return c


def gen_malformed(seed, count, n_flows):
    rng = random.Random(seed)
    good = Gen(seed + 1, n_flows, HUB_KINDS)
    good_iter = good.packets(count)
    for _ in range(count):
        r = rng.random()
        if r < 0.45:
            reason, frame = rng.choice(malformed_cases(rng))
            yield "malformed", reason, frame
        elif r < 0.55:
            cls, frame = rng.choice(valid_oddities(rng))
            yield cls, None, frame
        else:
            yield next(good_iter)


# ---- output -----------------------------------------------------------------------------

class PcapWriter:
    """Classic pcap (microsecond timestamps, Ethernet). Written by hand so that the
    timestamps, and so the whole file, depend on the seed only."""

    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))

    def write(self, frame, sec, usec):
        self.f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)

    def close(self):
        self.f.close()


def size_class(frame_len):
    wire = frame_len + FCS
    if wire <= 128:
        return "small(<=128)"
    if wire <= 1024:
        return "medium(129-1024)"
    return "large(>1024)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Profiles: " + ", ".join(PROFILES))
    ap.add_argument("--profile", required=True, choices=PROFILES)
    ap.add_argument("--count", type=int, default=8192, help="packets (default 8192)")
    ap.add_argument("--flows", type=int, default=2048, help="flows (default 2048)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--out", required=True, help="pcap file to write (OUT.json: manifest)")
    a = ap.parse_args()
    if a.count < 1 or a.flows < 1:
        ap.error("--count and --flows must be positive")

    gens = {"hub-imix": lambda: Gen(a.seed, a.flows, HUB_KINDS).packets(a.count),
            "tcp-64": lambda: gen_tcp64(a.seed, a.count, a.flows),
            "esp": lambda: gen_esp(a.seed, a.count, a.flows),
            "malformed": lambda: gen_malformed(a.seed, a.count, a.flows)}
    classes = collections.Counter()
    reasons = collections.Counter()
    sizes = collections.Counter()
    n = nbytes = 0
    tmp = a.out + ".tmp"
    w = PcapWriter(tmp)
    try:
        for cls, reason, frame in gens[a.profile]():
            if n == a.count:
                break
            # Fixed timestamps, 10 us apart: the file depends on the seed only.
            w.write(frame, EPOCH + n // 100000, (n % 100000) * 10)
            classes[cls] += 1
            if reason:
                reasons[reason] += 1
            sizes[size_class(len(frame))] += 1
            n += 1
            nbytes += len(frame)
    finally:
        w.close()
    os.replace(tmp, a.out)
    manifest = {
        "profile": a.profile, "seed": a.seed, "packets": n, "flows": a.flows,
        "bytes": nbytes, "mean_frame_bytes_with_fcs": round(nbytes / n + FCS, 1),
        "classes": dict(sorted(classes.items())),
        "malformed": dict(sorted(reasons.items())),
        "size_classes": dict(sorted(sizes.items())),
        "terminals": {"count": TERMINALS, "ipv4": terminal_prefix(1) + " .. " +
                      terminal_prefix(TERMINALS), "ipv6": "2001:db8:20:T::/64"},
    }
    with open(a.out + ".json", "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%s: %d packets (%s), mean frame %.1f bytes with FCS" %
          (a.out, n, ", ".join("%s %d" % kv for kv in sorted(classes.items())),
           nbytes / n + FCS))


if __name__ == "__main__":
    main()
