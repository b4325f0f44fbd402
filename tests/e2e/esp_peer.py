#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A second, independent ESP implementation for test_esp_interop.sh: scapy's
(scapy.layers.ipsec over python3-cryptography), used in place of the Linux
kernel's ESP on the fixed host when the kernel has none (CONFIG_INET_ESP or
CONFIG_CRYPTO_GCM off). It is what the kernel would be in that test: the
fixed host's ESP endpoint, IPv4, transport mode, rfc4106(gcm(aes)), with the
same key file (lines of `ip xfrm state add` arguments) as mh_lift.

  esp_peer.py run --tun NAME --local A --peer B --keys FILE [--mark N]
      [--stats-json FILE] [--window N]
      TUN in, ESP out through a raw socket (SO_MARK), ESP in through a raw
      socket (protocol 50), cleartext into the TUN. Anti-replay window (RFC
      4303 3.4.3) checked before decryption and moved only after the ICV
      verifies. Counters as JSON on SIGUSR1 and at exit (SIGTERM/SIGINT).
  esp_peer.py check-reencrypt --local A --peer B --keys FILE HEXFILE
      for each hex line (an ESP packet the agent sent, A being this end),
      decrypt with scapy and encrypt again with scapy at the packet's own
      sequence number and IV; print whether the bytes are identical (exit 0
      if all are).
  esp_peer.py inject --iface IF --dst-mac MAC HEXFILE [--line N] [--seq S]
      [--flip-icv]  send the packet of line N (negative: from the end) as an
      Ethernet frame on IF (AF_PACKET: no routing, no xfrm), optionally with
      its sequence number replaced by S and the last ICV byte flipped.
  esp_peer.py xfer6 recv --bind ADDR --port P | send --host ADDR --port P --file F
      one TCP connection over IPv6 (xfer.py is IPv4 only): the receiver
      prints {"bytes", "sha256"} after EOF; the sender retries the connect
      until the receiver listens (10 s), sends F and half-closes.
"""
import argparse
import fcntl
import json
import os
import select
import shlex
import signal
import socket
import struct
import sys

import warnings
warnings.filterwarnings("ignore")
from scapy.layers.inet import IP  # noqa: E402
from scapy.layers.ipsec import ESP, SecurityAssociation, IPSecIntegrityError  # noqa: E402
from scapy.compat import raw  # noqa: E402

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
SO_MARK = 36


def parse_keys(path, local, peer):
    """The outbound (src == local) and inbound (dst == local) SA lines."""
    out = inn = None
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            w = shlex.split(line)
            d = {}
            i = 0
            while i < len(w):
                if w[i] == "aead":
                    d["aead"] = (w[i + 1], w[i + 2], w[i + 3])
                    i += 4
                else:
                    d[w[i]] = w[i + 1]
                    i += 2
            assert d["aead"][0] == "rfc4106(gcm(aes))" and d["aead"][2] == "128"
            sa = {"spi": int(d["spi"], 0), "key": bytes.fromhex(d["aead"][1][2:]),
                  "window": int(d.get("replay-window", "64"), 0)}
            if d["src"] == local and d["dst"] == peer:
                out = sa
            elif d["src"] == peer and d["dst"] == local:
                inn = sa
    if out is None or inn is None:
        sys.exit("esp_peer: no SA pair %s <-> %s in %s" % (local, peer, path))
    return out, inn


def scapy_sa(sa, seq=1):
    return SecurityAssociation(ESP, spi=sa["spi"], seq_num=seq, crypt_algo="AES-GCM",
                               crypt_key=sa["key"])


class Window:
    """RFC 4303 3.4.3 anti-replay window, a set below a top."""

    def __init__(self, size):
        self.size = size
        self.top = 0
        self.seen = set()

    def check(self, seq):
        if seq == 0:
            return "bad_seq"
        if self.top and seq <= self.top:
            if self.top - seq >= self.size:
                return "too_old"
            if seq in self.seen:
                return "replay"
        return None

    def update(self, seq):
        if seq > self.top:
            self.top = seq
            self.seen = {s for s in self.seen if self.top - s < self.size}
        self.seen.add(seq)


def run(a):
    out, inn = parse_keys(a.keys, a.local, a.peer)
    tx_sa = scapy_sa(out)
    rx_sa = scapy_sa(inn)
    win = Window(a.window or inn["window"])
    c = {"tun_rx": 0, "encrypted": 0, "esp_rx": 0, "decrypted": 0, "tun_tx": 0,
         "auth_fail": 0, "replay": 0, "too_old": 0, "bad_seq": 0, "bad_spi": 0, "other": 0}

    tun = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", a.tun.encode(), IFF_TUN | IFF_NO_PI))
    txs = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    if a.mark:
        txs.setsockopt(socket.SOL_SOCKET, SO_MARK, a.mark)
    rxs = socket.socket(socket.AF_INET, socket.SOCK_RAW, 50)
    # scapy is slow: a deep queue so that bursts wait instead of being dropped
    rxs.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE

    state = {"stop": False, "dump": False}

    def write_stats():
        tmp = a.stats_json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(c, f, sort_keys=True)
        os.rename(tmp, a.stats_json)

    def on_sig(sig, _frame):
        if sig == signal.SIGUSR1:
            state["dump"] = True
        else:
            state["stop"] = True

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1):
        signal.signal(s, on_sig)
    print("esp_peer: up", file=sys.stderr, flush=True)
    while not state["stop"]:
        if state["dump"]:
            state["dump"] = False
            write_stats()
        try:
            r, _, _ = select.select([tun, rxs], [], [], 0.5)
        except InterruptedError:
            continue
        if tun in r:
            pkt = os.read(tun, 65535)
            c["tun_rx"] += 1
            ip = IP(pkt)
            if ip.src != a.local or ip.dst != a.peer:
                c["other"] += 1
            else:
                e = raw(tx_sa.encrypt(ip))
                txs.sendto(e, (a.peer, 0))
                c["encrypted"] += 1
        if rxs in r:
            pkt = rxs.recv(65535)
            ip = IP(pkt)
            if ip.src != a.peer or ip.dst != a.local or ESP not in ip:
                c["other"] += 1
                continue
            c["esp_rx"] += 1
            esp = ip[ESP]
            if esp.spi != inn["spi"]:
                c["bad_spi"] += 1
                continue
            why = win.check(esp.seq)
            if why:
                c[why] += 1
                continue
            try:
                clear = rx_sa.decrypt(ip)
            except IPSecIntegrityError:
                c["auth_fail"] += 1
                continue
            win.update(esp.seq)
            c["decrypted"] += 1
            os.write(tun, raw(clear))
            c["tun_tx"] += 1
    write_stats()


def check_reencrypt(a):
    _, inn = parse_keys(a.keys, a.local, a.peer)   # packets the peer sent us
    bad = 0
    with open(a.hexfile) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            orig = bytes.fromhex(line)
            ip = IP(orig)
            esp = ip[ESP]
            hl = ip.ihl * 4
            iv = orig[hl + 8:hl + 16]
            sa = scapy_sa(inn)
            clear = sa.decrypt(ip)
            again = raw(scapy_sa(inn).encrypt(IP(raw(clear)), seq_num=esp.seq, iv=iv))
            eq = again == orig
            print(json.dumps({"len": len(orig), "seq": esp.seq, "equal": eq}))
            bad += 0 if eq else 1
    return 0 if bad == 0 else 1


def inject(a):
    with open(a.hexfile) as f:
        lines = [ln.strip() for ln in f if ln.strip()]
    pkt = bytearray(bytes.fromhex(lines[a.line]))
    hl = (pkt[0] & 15) * 4
    if a.seq is not None:
        pkt[hl + 4:hl + 8] = struct.pack("!I", a.seq)
    if a.flip_icv:
        pkt[-1] ^= 0x01
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    mac = bytes.fromhex(a.dst_mac.replace(":", ""))
    s.sendto(bytes(pkt), (a.iface, 0x0800, 0, 0, mac))
    seq = struct.unpack("!I", pkt[hl + 4:hl + 8])[0]
    print(json.dumps({"sent": len(pkt), "seq": seq}))
    return 0


def xfer6(a):
    import hashlib
    import time
    if a.role == "recv":
        srv = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((a.bind, a.port))
        srv.listen(1)
        srv.settimeout(30)
        conn, _ = srv.accept()
        conn.settimeout(30)
        h = hashlib.sha256()
        n = 0
        while True:
            b = conn.recv(1 << 16)
            if not b:
                break
            h.update(b)
            n += len(b)
        conn.close()
        print(json.dumps({"bytes": n, "sha256": h.hexdigest()}))
        return 0
    data = open(a.file, "rb").read()
    end = time.monotonic() + 10
    while True:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.settimeout(30)
        try:
            s.connect((a.host, a.port))
            break
        except (ConnectionRefusedError, socket.timeout):
            s.close()
            if time.monotonic() > end:
                raise
            time.sleep(0.05)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    while s.recv(1 << 16):
        pass
    s.close()
    print(json.dumps({"bytes": len(data)}))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--tun", required=True)
    r.add_argument("--local", required=True)
    r.add_argument("--peer", required=True)
    r.add_argument("--keys", required=True)
    r.add_argument("--mark", type=lambda s: int(s, 0), default=0)
    r.add_argument("--stats-json", required=True)
    r.add_argument("--window", type=int, default=0)
    c = sub.add_parser("check-reencrypt")
    c.add_argument("--local", required=True)
    c.add_argument("--peer", required=True)
    c.add_argument("--keys", required=True)
    c.add_argument("hexfile")
    i = sub.add_parser("inject")
    i.add_argument("--iface", required=True)
    i.add_argument("--dst-mac", required=True)
    i.add_argument("--line", type=int, default=-1)
    i.add_argument("--seq", type=lambda s: int(s, 0))
    i.add_argument("--flip-icv", action="store_true")
    i.add_argument("hexfile")
    x = sub.add_parser("xfer6")
    x.add_argument("role", choices=["recv", "send"])
    x.add_argument("--bind")
    x.add_argument("--host")
    x.add_argument("--port", type=int, required=True)
    x.add_argument("--file")
    a = ap.parse_args()
    if a.cmd == "xfer6":
        return xfer6(a)
    if a.cmd == "run":
        run(a)
        return 0
    if a.cmd == "check-reencrypt":
        return check_reencrypt(a)
    return inject(a)


if __name__ == "__main__":
    sys.exit(main())
