#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the committed seed corpora of the libFuzzer harnesses.

  tests/fuzz/make_corpus.py [--out DIR]      (default: tests/fuzz/corpus)

  DIR/fuzz_parse/    Ethernet frames, one per file: every class the parser
                     tells apart (TCP with options, UDP, ESP direct and in UDP
                     4500, ICMP/ICMPv6, LIFT, XCP, IPv6 extension chains,
                     fragments, VLAN tags, satlink, ARP)
  DIR/fuzz_satlink/  frame sequences a peer sends, in fuzz_satlink.c's
                     format: per frame [len (1 byte)][ms since the last
                     frame (1 byte)][satlink frame]; the harness's session is
                     terminal 1, epoch 7, ISN 0, and has sent nothing
                     (snd_una = snd_nxt = 0)
  DIR/fuzz_tcp/      segment sequences a peer sends, in fuzz_tcp.c's format:
                     per segment [len (1 byte)][step (1 byte)][TCP header +
                     payload]; the harness's connection listens on port 80,
                     ISS 1000 (a handshake, data in and out of order, FIN, RST)

  DIR/fuzz_xcp/      XCP headers in fuzz_xcp.c's format: [xcp proto (1)]
                     [feedback to write (4)][capacity B/s (4)][queue B (4)]
                     [header bytes]
  DIR/fuzz_lift/     BS-LIFT record sequences, in fuzz_lift.c's format: per
                     record [op][20 ms steps since the last][len][bytes]; op 0
                     LIFT bytes from MH 0 (trusted), 1 downlink ESP (SPI, seq),
                     2 time only, 0x10 set: untrusted
  DIR/fuzz_esp/      ESP record sequences, in fuzz_esp.c's format: per record
                     [op][len (2)][bytes]; op 0 a packet from the network,
                     1 cleartext to encrypt and decrypt, 2 [seq][plaintext]
                     sealed as is, 3 [seq] a genuine packet at that number

  DIR/fuzz_lift_mh/  MH-LIFT record sequences, in fuzz_lift_mh.c's format: per
                     record [op][50 ms steps][len][bytes]; op 0 host segment, 1
                     downlink packet (ESP seq first), 2 hub control, 3 poll;
                     op | 4: the segment from an 8-byte description

  DIR/fuzz_stream/   records in fuzz_stream.c's format: [op][len][bytes]: stream
                     messages from the far half, time, the server's segments,
                     the channel's room.
fuzz_policy's seeds are tests/data/policy/{good,bad} (tests/fuzz/run.sh).
The output is deterministic: run it again after changing it and commit the
files. Needs python3-scapy (for the Ethernet frames).
"""
import argparse
import os
import struct
import sys

# --- satlink (lib/sgw_satlink.h) ---------------------------------------------
DATA, STATUS, HELLO, HELLO_ACK = 0, 1, 2, 3
F_FIRST, F_LAST, F_RETX, F_DATAGRAM = 0x01, 0x02, 0x04, 0x08
NO_ECHO = 0xFFFFFFFF
TERMINAL = 1      # fuzz_satlink.c: conf.terminal_id
LOCAL_EPOCH = 7   # fuzz_satlink.c: conf.local_epoch (the harness's session)
PEER_EPOCH = 9    # the peer's, any non-zero value


def sl_hdr(ftype, seq, payload_len, flags=0, channel=0, sender=PEER_EPOCH, peer=LOCAL_EPOCH,
           terminal=TERMINAL):
    return struct.pack(">BBHIIIIH", 1 << 4 | ftype, flags, channel, terminal, sender, peer,
                       seq, payload_len)


def sl_hello(ftype=HELLO, isn=0, peer=LOCAL_EPOCH, sender=PEER_EPOCH, window=64):
    # rx window (4), max fragments (2), fragment size (2), idle ms (2), reserved (2)
    body = struct.pack(">IHHHH", window, 8, 64, 100, 0)
    return sl_hdr(ftype, isn, len(body), sender=sender, peer=peer) + body


def sl_status(cum, words=(), echo_seq=0, echo_delay_us=NO_ECHO):
    # echo seq (4), echo delay us (4), bitmap words (2), reserved (2), words
    body = struct.pack(">IIHH", echo_seq, echo_delay_us, len(words), 0)
    body += b"".join(struct.pack(">I", w) for w in words)
    return sl_hdr(STATUS, cum, len(body)) + body


def sl_data(seq, payload, flags=F_FIRST | F_LAST, channel=0):
    return sl_hdr(DATA, seq, len(payload), flags=flags, channel=channel) + payload


def seq_input(*frames):
    """frames: (ms since the previous frame, frame bytes) -> one harness input."""
    out = b""
    for ms, f in frames:
        assert len(f) <= 255 and 0 <= ms <= 255
        out += bytes([len(f), ms]) + f
    return out


def satlink_seeds():
    p = bytes(range(40))
    return {
        # first contact, one packet in one fragment, a packet in three, a status
        "hello-data-status": seq_input(
            (0, sl_hello()),
            (1, sl_data(0, p)),
            (1, sl_data(1, p, F_FIRST)),
            (1, sl_data(2, p)),
            (1, sl_data(3, p[:7], F_LAST)),
            (5, sl_status(0))),
        # the peer does not know our epoch yet, then answers; frames out of order,
        # a retransmitted duplicate, a gap, statuses with a bitmap and an echo
        "hello-ack-reorder": seq_input(
            (0, sl_hello(peer=0)),
            (0, sl_hello(HELLO_ACK)),
            (2, sl_data(2, p)),
            (2, sl_data(0, p)),
            (2, sl_data(0, p, F_FIRST | F_LAST | F_RETX)),
            (2, sl_data(1, p)),
            (2, sl_data(5, p, channel=3)),
            (3, sl_status(0, words=(0x5,), echo_seq=0, echo_delay_us=200)),
            (200, sl_status(0, words=(0xFFFFFFFF, 0x1)))),
        # best-effort datagrams on another channel, a late and a repeated one
        "hello-datagrams": seq_input(
            (0, sl_hello()),
            (1, sl_data(0, p, F_FIRST | F_LAST | F_DATAGRAM, channel=2)),
            (1, sl_data(2, p, F_FIRST | F_DATAGRAM, channel=2)),
            (1, sl_data(3, p, F_LAST | F_DATAGRAM, channel=2)),
            (1, sl_data(1, p, F_FIRST | F_LAST | F_DATAGRAM, channel=2)),
            (1, sl_data(1, p, F_FIRST | F_LAST | F_DATAGRAM, channel=2))),
        # the peer restarts: a HELLO of a new epoch after 2.55 s of silence (an
        # empty entry only lets time pass; link_down is 2 s by default)
        "peer-restart": seq_input(
            (0, sl_hello()),
            (1, sl_data(0, p)),
            (5, sl_status(0)),
            *[(255, b"") for _ in range(10)],
            (0, sl_hello(sender=11, isn=1000)),
            (1, sl_hdr(DATA, 1000, 4, flags=F_FIRST | F_LAST, sender=11) + b"abcd")),
        # Issue 11, defect 1: a STATUS whose cumulative ack is snd_nxt + 2^31.
        # The session has sent nothing (snd_nxt = 0), so cum = 2^31: a signed
        # serial difference of exactly 2^31 read as "not ahead", and rx_status
        # walked 2^31 sequence numbers (~10 s). It must be refused at once:
        # under run.sh's -timeout this input fails the run if it is not.
        "status-cum-snd-nxt-plus-2pow31": seq_input(
            (0, sl_hello()),
            (0, sl_status(1 << 31))),
    }


def parse_seeds():
    from scapy.all import (ARP, ESP, ICMP, IP, TCP, UDP, Dot1Q, Ether, ICMPv6EchoRequest,
                           IPOption_RR, IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment,
                           IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, Raw)

    eth = Ether(src="02:00:00:00:01:01", dst="02:00:00:00:01:fe")
    ip4 = IP(src="10.10.0.1", dst="10.20.1.1", id=1)
    ip6 = IPv6(src="2001:db8::1", dst="2001:db8:1::1")
    pay = Raw(b"satgw-fuzz-seed")
    syn_opts = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (1, 0)), ("NOP", None),
                ("WScale", 7)]
    sack_opts = [("NOP", None), ("NOP", None), ("Timestamp", (5, 4)), ("NOP", None),
                 ("NOP", None), ("SAck", (1000, 2000, 3000, 4000))]
    frames = {
        "ipv4-tcp-syn-options": eth / ip4 / TCP(sport=40000, dport=80, flags="S", seq=1,
                                                  options=syn_opts),
        "ipv4-tcp-ack-sack": eth / ip4 / TCP(sport=40000, dport=80, flags="A", seq=2, ack=3,
                                               options=sack_opts) / pay,
        "ipv4-options-udp": eth / IP(src="10.10.0.1", dst="10.20.1.1", id=2,
                                     options=[IPOption_RR(routers=["10.0.0.1"])]) /
        UDP(sport=40001, dport=53) / pay,
        "vlan2-ipv4-icmp": eth / Dot1Q(vlan=10) / Dot1Q(vlan=20) / ip4 / ICMP() / pay,
        "ipv4-esp": eth / ip4 / ESP(spi=0x1001, seq=1) / pay,
        "ipv4-udp4500-esp": eth / ip4 / UDP(sport=4500, dport=4500) /
        Raw(struct.pack(">II", 0x1002, 1) + b"esp-in-udp"),
        "ipv4-udp4500-keepalive": eth / ip4 / UDP(sport=4500, dport=4500) / Raw(b"\xff"),
        "ipv4-fragment-nonfirst": eth / IP(src="10.10.0.1", dst="10.20.1.1", id=3, frag=10,
                                           proto=17) / pay,
        "ipv4-lift": eth / IP(src="10.10.0.1", dst="10.20.1.1", id=4, proto=253) /
        Raw(bytes(8) + b"lift"),
        "ipv4-xcp": eth / IP(src="10.10.0.1", dst="10.20.1.1", id=5, proto=254) /
        Raw(bytes(20) + b"xcp"),
        "ipv6-ext-chain-udp": eth / ip6 / IPv6ExtHdrHopByHop() /
        IPv6ExtHdrRouting(addresses=["2001:db8:2::1"]) / IPv6ExtHdrDestOpt() /
        UDP(sport=40002, dport=443) / pay,
        "ipv6-fragment-tcp": eth / ip6 / IPv6ExtHdrFragment(id=7, m=1) /
        TCP(sport=40003, dport=22, flags="S", options=syn_opts),
        "ipv6-icmpv6": eth / ip6 / ICMPv6EchoRequest(id=1, seq=1),
        "arp": eth / ARP(psrc="10.10.0.1", pdst="10.10.0.254"),
    }
    out = {name: bytes(f) for name, f in frames.items()}
    # a satlink HELLO in an Ethernet frame (EtherType 0x88B5)
    out["satlink-hello"] = bytes(Ether(src="02:00:00:00:02:01", dst="02:00:00:00:02:fe",
                                       type=0x88B5)) + sl_hello()
    return out


# --- XCP (lib/sgw_xcp.h): fuzz_xcp.c's input ---------------------------------
def xcp_hdr(nxt=6, flags=0, hlen=5, rtt=600000, cwnd=800000, fb=0x7FFFFFFF, rev=0, ver=2):
    return struct.pack(">BBBBIIii", nxt, ver << 4 | flags, hlen, 0, rtt, cwnd, fb, rev) + \
        b"\0" * (max(hlen * 4, 20) - 20)


def xcp_input(hdr, proto=254, fb=-1000, cap=1250000, queue=20000):
    return struct.pack(">BiII", proto, fb, cap, queue) + hdr


def xcp_seeds():
    return {
        "data": xcp_input(xcp_hdr()),
        "ack-reverse": xcp_input(xcp_hdr(flags=1, rtt=0, cwnd=0, rev=-5000)),
        "geo-rtt-2s": xcp_input(xcp_hdr(rtt=2500000, cwnd=100000000, fb=12)),
        "long-header": xcp_input(xcp_hdr(hlen=7) + b"\x11" * 8),
        "esp-other-proto": xcp_input(xcp_hdr(nxt=50), proto=253),
        "nested": xcp_input(xcp_hdr(nxt=254)),
        "version-1": xcp_input(xcp_hdr(ver=1)),
        "truncated": xcp_input(xcp_hdr()[:13]),
        "zero-capacity": xcp_input(xcp_hdr(), cap=0, queue=0xFFFFFFFF),
    }


# --- LIFT (lib/sgw_lift.h) ---------------------------------------------------
LIFT_SPI, LIFT_UP_SPI = 0x1000, 0x2000


def lift_rec(op, steps, body):
    assert len(body) <= 255 and 0 <= steps <= 255
    return bytes([op, steps, len(body)]) + body


def lift_setup(flow, spi=LIFT_SPI, proto=50):
    return struct.pack(">BHIB", 0x00, flow, spi, proto)


def lift_teardown(flow):
    return struct.pack(">BHIB", 0x40, flow, 0, 0)


def lift_ack(flow, num, up_seq, flags=0, nxt=50):
    return struct.pack(">BHIB", 0x80 | flags, flow, num, nxt) + \
        struct.pack(">II", LIFT_UP_SPI, up_seq) + bytes(16)


def lift_frack(flow, up_seq, nxt=50):
    return struct.pack(">BHIB", 0xC0, flow, 0, nxt) + struct.pack(">II", LIFT_UP_SPI, up_seq) + \
        bytes(16)


def lift_esp(seq, spi=LIFT_SPI):
    return struct.pack(">II", spi, seq)


def lift_seeds():
    # the basic cycle: setup, data, pairs held and replaced, a late ACK (freeze), unfreeze
    cycle = lift_rec(0, 0, lift_setup(1))
    for s in range(1, 9):
        cycle += lift_rec(1, 0, lift_esp(s))
    up = 1
    for num in (2, 4, 6):
        cycle += lift_rec(0, 2, lift_frack(1, up)) + lift_rec(0, 0, lift_ack(1, num, up + 1))
        up += 2
    cycle += lift_rec(2, 60, b"")  # 1.2 s: the timer fires, FrACK forwarded
    cycle += lift_rec(0, 100, lift_frack(1, up)) + lift_rec(0, 0, lift_ack(1, 8, up + 1))
    cycle += lift_rec(0, 0, lift_ack(1, 8, up + 2, flags=0x08))   # S
    cycle += lift_rec(0, 0, lift_ack(1, 8, up + 3, flags=0x30))   # D F
    # out of order on the SA, then acknowledged past the mark
    ooo = lift_rec(0, 0, lift_setup(2)) + lift_rec(1, 0, lift_esp(1)) + \
        lift_rec(1, 0, lift_esp(5)) + lift_rec(1, 0, lift_esp(3)) + \
        lift_rec(0, 5, lift_frack(2, 1)) + lift_rec(0, 0, lift_ack(2, 5, 2)) + \
        lift_rec(1, 0, lift_esp(6)) + lift_rec(0, 5, lift_ack(2, 6, 3))
    # a freeze held to the bound (3 s in the harness), suspension, recovery
    bound = lift_rec(0, 0, lift_setup(3)) + b"".join(lift_rec(1, 0, lift_esp(s))
                                                     for s in range(1, 5))
    bound += lift_rec(0, 0, lift_frack(3, 1)) + lift_rec(0, 0, lift_ack(3, 1, 2))
    bound += lift_rec(0, 0, lift_frack(3, 3)) + lift_rec(0, 0, lift_ack(3, 2, 4))
    bound += lift_rec(2, 255, b"") + lift_rec(0, 0, lift_ack(3, 3, 5))
    # hostile: untrusted setup, truncated headers, reserved bits, table full
    hostile = lift_rec(0x10, 0, lift_setup(4)) + lift_rec(0, 0, lift_setup(4)[:5]) + \
        lift_rec(0, 0, bytes([0x87]) + lift_ack(4, 1, 1)[1:]) + \
        lift_rec(0, 0, lift_ack(4, 1, 1)[:12]) + lift_rec(0, 0, lift_setup(4, proto=6))
    hostile += b"".join(lift_rec(0, 0, lift_setup(f, LIFT_SPI + f)) for f in range(10, 22))
    hostile += lift_rec(0, 0, lift_teardown(99)) + lift_rec(0, 0, lift_ack(4, 1, 1, nxt=6))
    return {"lift-cycle": cycle, "lift-ooo": ooo, "lift-bound": bound, "lift-hostile": hostile}


# --- TCP (lib/sgw_tcp.h) -----------------------------------------------------
TCP_ISS = 1000    # fuzz_tcp.c: the connection's ISS
TCP_PEER = 5000   # the seeds' ISS


def tcp_seg(seq, ack, flags, win=65535, opts=b"", payload=b""):
    opts += b"\x01" * (-len(opts) % 4)
    hdr = struct.pack(">HHIIBBHHH", 9999, 80, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      (5 + len(opts) // 4) << 4, flags, win, 0, 0)
    return hdr + opts + payload


def tcp_rec(seg, step=1):
    assert len(seg) < 256
    return bytes([len(seg), step]) + seg


def tcp_seeds():
    SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08
    syn_opts = (struct.pack(">BBH", 2, 4, 1460) + b"\x04\x02" +
                struct.pack(">BBII", 8, 10, 100, 0) + b"\x01\x03\x03\x07")
    ts = lambda v: b"\x01\x01" + struct.pack(">BBII", 8, 10, v, 0)
    hs = (tcp_rec(tcp_seg(TCP_PEER, 0, SYN, opts=syn_opts)) +
          tcp_rec(tcp_seg(TCP_PEER + 1, TCP_ISS + 1, ACK, opts=ts(101))))
    data = bytes(range(100))
    out = {}
    out["tcp-handshake"] = hs
    out["tcp-data-fin"] = (hs + tcp_rec(tcp_seg(TCP_PEER + 1, TCP_ISS + 1, ACK | PSH,
                                                opts=ts(102), payload=data)) +
                           tcp_rec(tcp_seg(TCP_PEER + 101, TCP_ISS + 1, ACK | FIN,
                                           opts=ts(103))))
    out["tcp-ooo-sack"] = (hs + tcp_rec(tcp_seg(TCP_PEER + 201, TCP_ISS + 1, ACK,
                                                opts=ts(102), payload=data)) +
                           tcp_rec(tcp_seg(TCP_PEER + 1, TCP_ISS + 1, ACK, opts=ts(103),
                                           payload=data)))
    # the application sends (step bit 7), the peer acks part, then resets
    out["tcp-send-ack-rst"] = (hs + tcp_rec(tcp_seg(TCP_PEER + 1, TCP_ISS + 1, ACK,
                                                    opts=ts(102)), 0x81) +
                               tcp_rec(tcp_seg(TCP_PEER + 1, TCP_ISS + 1449, ACK, win=0,
                                               opts=ts(103)), 50) +
                               tcp_rec(tcp_seg(TCP_PEER + 1, 0, RST), 127))
    return out


# --- MH-LIFT (lib/sgw_lift_mh.h) ---------------------------------------------
MH_FIN, MH_SYN, MH_RST, MH_PSH, MH_ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def mh_seg(flags, seq, ack, win=3, pay=0, port=0):
    # fuzz_lift_mh.c's description (synth()): seq and ack in units of 50 above
    # the ISNs + 1, pay * 50 payload bytes, win bit 2: ACK + 1 (of a FIN)
    return struct.pack(">BHHBBB", flags, seq, ack, win, pay, port)


def mh_tx(step, *a, **k):
    return lift_rec(4, step, mh_seg(*a, **k))


def mh_rx(step, esp, *a, **k):
    return lift_rec(5, step, struct.pack(">I", esp) + mh_seg(*a, **k))


def mh_poll(step=0):
    return lift_rec(3 | 12, step, b"")


def mh_answer(status=0, step=0):
    return lift_rec(2 | 8, step, bytes([status]))


def lift_mh_seeds():
    # connect, Setup answered, data and pairs, a duplicate, the FH's FIN acked (D), Teardown
    conn = mh_tx(0, MH_SYN, 0, 0) + mh_rx(12, 1, MH_SYN | MH_ACK, 0, 0) + mh_poll() + \
        mh_tx(0, MH_ACK, 0, 0) + mh_answer(0, 12)
    cycle = conn
    for k in range(1, 5):
        cycle += mh_rx(2, 1 + k, MH_ACK | MH_PSH, 2 * (k - 1), 0, pay=2)
    cycle += mh_tx(1, MH_ACK, 0, 4) + mh_tx(1, MH_ACK, 0, 8) + mh_tx(1, MH_ACK, 0, 8)
    cycle += mh_rx(2, 6, MH_ACK | MH_FIN, 8, 0) + mh_tx(1, MH_ACK, 0, 8, win=7)
    cycle += mh_poll(1) + mh_answer(3, 12)
    # a forced freeze: probes below what was received, the test, the hold
    forced = conn + mh_rx(2, 2, MH_ACK, 0, 0, pay=2) + mh_tx(1, MH_ACK, 0, 2)
    forced += mh_rx(20, 3, MH_ACK, 1, 0) + mh_tx(1, MH_ACK, 0, 2) + mh_rx(40, 4, MH_ACK, 1, 0)
    forced += mh_poll(1) + mh_answer(0, 12) + mh_rx(2, 5, MH_ACK, 2, 0, pay=2)
    forced += lift_rec(3 | 0x80, 1, b"") + lift_rec(3 | 0x80, 20, b"")
    # raw and malformed: a short IPv4 header, a UDP packet, a hub packet that is no ack
    hostile = conn + lift_rec(0, 0, bytes([0x45, 0, 0, 10])) + \
        lift_rec(1, 0, struct.pack(">I", 9) + bytes([0x45, 0, 0, 28]) + bytes(5) + b"\x11" +
                 bytes(18)) + lift_rec(2, 0, struct.pack(">BHIB", 0x00, 1, 0x1000, 50)) + \
        mh_tx(0, MH_RST | MH_ACK, 0, 0, port=0x80) + mh_rx(0, 2, MH_RST, 0, 0)
    return {"lift-mh-cycle": cycle, "lift-mh-forced": forced, "lift-mh-hostile": hostile}

# fuzz_stream.c: a setup byte (bit 0: opener, bit 1: spoofed), then records
# [op (1)][len (1)][bytes, op 0 only]: op % 4 == 0 a stream message from
# the far half, 1 len x 10 ms pass, 2 the server sends len bytes and ACKs (window
# op >> 2 KB), 3 the channel's room is len x 64 bytes.
def st_msg(b):
    return bytes([0, len(b)]) + b


def st_time(tens_ms):
    return bytes([1, tens_ms])


def st_srv(n, wnd_kb=60):
    return bytes([2 | (wnd_kb << 2), n])


def st_room(units):
    return bytes([3, units])


def st_data(off, payload):
    return st_msg(bytes([4]) + struct.pack(">I", off) + payload)


def stream_seeds():
    credit = lambda e: st_msg(bytes([7]) + struct.pack(">I", e))
    fin = lambda off: st_msg(bytes([5]) + struct.pack(">I", off))
    ok = st_msg(bytes([2, 0x01, 0, 0]) + struct.pack(">HH", 1400, 0) + struct.pack(">I", 4096))
    acc = {
        "data_both_ways_fin": (st_data(0, b"GET / HTTP/1.1\r\n\r\n") + st_srv(0) + st_time(2) +
                               st_srv(200) + st_srv(200) + credit(8192) + st_srv(100) +
                               st_time(5) + st_data(18, b"more") + fin(22) + st_srv(0) +
                               st_time(10)),
        "credit_stall_room": (st_room(1) + st_srv(250) + st_srv(250) + st_room(0) + st_srv(250) +
                              st_time(20) + st_room(200) + credit(20000) + st_srv(0, 0) +
                              st_time(50) + st_srv(0)),
        "fill_tx_relay": b"".join(st_data(i * 200, bytes(200)) for i in range(22)) + st_time(30),
        "bad_and_rst": (st_data(5, b"x") + st_msg(bytes([6, 3])) + st_msg(b"\x08") +
                        st_msg(bytes([3, 1]))),
        "idle": st_srv(10) + b"".join(st_time(255) for _ in range(14)),
    }
    out = {"acceptor_" + k: b"\x00" + v for k, v in acc.items()}
    # opener, end to end: OPEN_OK releases the held SYN; the client ACKs and sends
    out["opener_e2e_ok_data"] = (b"\x01" + st_time(3) + ok + st_srv(0) + st_srv(200) +
                                 st_data(0, b"HTTP/1.1 200 OK\r\n") + st_srv(0) +
                                 credit(9000) + st_srv(200) + fin(17) + st_srv(0) +
                                 st_time(20))
    out["opener_e2e_refused"] = b"\x01" + st_time(100) + st_msg(bytes([3, 1]))
    out["opener_e2e_unreachable"] = b"\x01" + st_time(100) + st_msg(bytes([3, 2]))
    out["opener_spoofed_freeze"] = (b"\x03" + st_room(0) + b"".join(st_srv(250) for _ in range(20)) +
                                    st_time(15) + st_room(2) + st_time(15) + st_room(255) +
                                    st_time(50) + st_srv(0) + st_msg(bytes([3, 3])))
    return out


def write(d, seeds):
    os.makedirs(d, exist_ok=True)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        print(f"{os.path.join(d, name)}: {len(data)} bytes")


# --- ESP (lib/sgw_esp.h) -----------------------------------------------------
def esp_rec(op, body):
    return bytes([op]) + struct.pack("!H", len(body)) + body


def esp_seeds():
    from scapy.all import IP, IPv6, UDP, TCP, Raw, raw
    v4 = raw(IP(src="10.61.0.2", dst="10.61.0.1", id=1) / UDP(sport=1, dport=2) / Raw(b"esp"))
    v4opt = raw(IP(src="10.61.0.2", dst="10.61.0.1", options=b"\x01\x01\x01\x00") /
                Raw(b"x" * 37))
    v6 = raw(IPv6(src="fd00:6c::2", dst="fd00:6c::1") / TCP(sport=3, dport=4) / Raw(b"esp6"))
    esp4 = raw(IP(src="10.61.0.1", dst="10.61.0.2", proto=50) /
               Raw(struct.pack("!II", 0x1E5A0002, 5) + bytes(40)))
    seq = lambda n: struct.pack("!I", n)
    return {
        "roundtrip": esp_rec(1, v4) + esp_rec(1, v4opt) + esp_rec(1, v6) + esp_rec(1, v4),
        "window": b"".join(esp_rec(3, seq(n)) for n in (100, 37, 99, 99, 36, 164, 100, 0,
                                                        0xFFFFFFFF, 1000)),
        "trailers": esp_rec(2, seq(1) + b"abcd\x01\x02\x02\x06") +
        esp_rec(2, seq(2) + b"abcd\x01\x03\x02\x06") + esp_rec(2, seq(3) + b"ab\x07\x06") +
        esp_rec(2, seq(4) + b"\x00\x06") + esp_rec(2, seq(5) + b"xy\x00\x3b") +
        esp_rec(2, seq(6)),
        "hostile": esp_rec(0, esp4) + esp_rec(0, esp4[:30]) + esp_rec(0, b"\x45") +
        esp_rec(0, esp4.replace(b"\x1e\x5a\x00\x02", b"\x00\x00\x00\x01")) +
        esp_rec(1, v4) + esp_rec(0, esp4),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "corpus"))
    a = ap.parse_args()
    write(os.path.join(a.out, "fuzz_satlink"), satlink_seeds())
    write(os.path.join(a.out, "fuzz_lift"), lift_seeds())
    write(os.path.join(a.out, "fuzz_lift_mh"), lift_mh_seeds())
    write(os.path.join(a.out, "fuzz_tcp"), tcp_seeds())
    write(os.path.join(a.out, "fuzz_parse"), parse_seeds())
    write(os.path.join(a.out, "fuzz_xcp"), xcp_seeds())
    write(os.path.join(a.out, "fuzz_esp"), esp_seeds())
    write(os.path.join(a.out, "fuzz_stream"), stream_seeds())
    return 0


if __name__ == "__main__":
    sys.exit(main())
