#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A hostile peer on the satellite segment, for test_satlink_adversary.sh.

It runs in the emulator's namespace of testbed.sh's chain, where both legs of
the satellite link end (hub0 towards the hub, term0 towards the terminal):
"anyone on the link". It listens to both legs with AF_PACKET (frames the hub
and the terminal send; the satlink header is never encrypted, so epochs,
sequence numbers and the crypto layer's nonces are in clear even with keys),
records what it hears, and sends its own frames straight into the hub or the
terminal with PACKET_QDISC_BYPASS (so the emulator, whose AF_PACKET sockets
see every frame that goes through the kernel's queue on its veths, does not
relay them to the other end: each forged frame reaches exactly the end it
is aimed at, and the test can count them). Every frame is built as
lib/sgw_satlink.c and lib/sgw_slcrypto.c lay it out (docs/satlink.md
sections 1-2, docs/satlink-security.md "On the wire").

  sl_adversary.py attack --mode keys|clear --out JSON [--ready FILE]
                         [--max-seconds S] [--flood N] [--pps R]
      learn both ends' epochs and sequence numbers from the segment, then
      send rounds of forgeries at both ends until SIGTERM (or S seconds):
      HELLO / HELLO_ACK of future, older, maximal and zero epochs, naming no
      peer or another epoch; STATUS frames with every edge of the 32-bit
      sequence space around the sender's window and empty or full (256-word)
      bitmaps; headers each parse check refuses; recorded frames played
      back (at least 1 s old) and reflected to their sender; recorded frames
      cut at every field boundary (raw, and with the length field made to
      match); and a flood of valid-looking frames (at most N per end, paced
      at R frames/s). keys: every control frame forged with the ENCRYPTED flag
      and a made-up nonce / ciphertext / tag (some in clear, which a keyed
      end must refuse as unprotected). clear: only what a session machine
      must refuse while the real peer is live (no DATA, no acknowledgement
      that could fall inside the window). Writes JSON: what was learned and
      how many frames went to each end, by kind.
  sl_adversary.py hostile --out JSON [--ready FILE] [--data N] [--pps R]
      without keys, the frames a live session cannot tell from its peer's:
      N DATA frames of each end's epoch to the other, at consecutive sequence
      numbers from its cumulative ack on (more than any window), STATUS
      frames acknowledging the whole window, HELLOs of other epochs; then
      silence. JSON has "silent_at" (unix time of the last frame).
  sl_adversary.py takeover --out JSON [--ready FILE] [--adopted FILE]
                           [--timeout S] [--hold S]
      HELLOs of a new epoch F to the hub, as if the terminal had restarted,
      every 0.2 s until the hub's own frames name F as its peer (it adopted
      the forger: the test keeps the real terminal silent for longer than
      link_down meanwhile); writes the --adopted file; keeps F alive with
      HELLOs and STATUS for S seconds; then silence ("silent_at").
  sl_adversary.py loops OUT PREFIX... [--interval S]
      sample every worker's loop counter (/satgw/workers) of each box until
      SIGTERM; OUT: JSON list of samples.
  sl_adversary.py loops-check OUT [--min-samples N] [--window S]
      every worker of every box moved within every S (3) seconds of samples.
  sl_adversary.py snap PREFIX OUT [--set KEY=VALUE ...]
      /satgw/satlink and /satgw/ports of one box, plus values given (kernel
      counters read by the caller), as JSON.
  sl_adversary.py wait-up HUB_PREFIX TERM_PREFIX --since T --timeout S
      until both sessions are up and each names the other's epoch; prints
      the seconds since unix time T; exit 1 after S seconds.
  sl_adversary.py check PHASE --attack JSON --before-hub F --after-hub F
                        --before-term F --after-term F
      the assertions of one phase (keys, clear) on the deltas of the
      counters; exit 1 when one fails.
"""
import argparse
import collections
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sgwtel  # noqa: E402

ETH_P_ALL = 0x0003
ETH_SATLINK = 0x88B5
PACKET_OUTGOING = 4
PACKET_QDISC_BYPASS = 20
SOL_PACKET = 263

DATA, STATUS, HELLO, HELLO_ACK = 0, 1, 2, 3
F_FIRST, F_LAST, F_RETX, F_DATAGRAM, F_ENC = 0x01, 0x02, 0x04, 0x08, 0x80
HDR = struct.Struct("!BBHIIIIH")       # 22 bytes, lib/sgw_satlink.h
HDR_LEN = HDR.size
ETH_LEN = 14
NONCE_LEN, TAG_LEN = 12, 16            # lib/sgw_slcrypto.h
SLC_OVERHEAD = NONCE_LEN + TAG_LEN
MAX_WORDS = 256
M32 = 0xFFFFFFFF
# Sequence numbers this far from the sender's window (either way) are outside
# every window and ring a session can have (windows <= 8192, rings <= 16384).
FAR = 0x10000
SLACK = 0x1000


def u32(v):
    return v & M32


# ------------------------------------------------------------------ frames

def sl_hdr(typ, flags, channel, tid, sender, peer, seq, plen, version=1):
    return HDR.pack(((version & 0xF) << 4) | (typ & 0xF), flags, channel, tid,
                    u32(sender), u32(peer), u32(seq), plen)


def status_body(nwords, echo_seq=0, echo_delay=M32, word=M32):
    return struct.pack("!IIHH", echo_seq, echo_delay, nwords, 0) + \
        struct.pack("!I", word) * nwords


def hello_body(rx_window=1024, max_frags=64, frag=1400, idle_ms=500):
    return struct.pack("!IHHHH", rx_window, max_frags, frag, idle_ms, 0)


def fake_seal(epoch, d_bit, counter, plain_len):
    """What a sealed payload looks like, without the key: the nonce in clear
    (epoch, direction bit, counter), random ciphertext and tag."""
    nonce = struct.pack("!IQ", u32(epoch), (d_bit << 63) | (counter & ((1 << 63) - 1)))
    return nonce + os.urandom(plain_len) + os.urandom(TAG_LEN)


class Leg:
    """One leg of the segment: the emulator's veth towards one end."""

    def __init__(self, name, iface):
        self.name = name
        self.iface = iface
        self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.rx.bind((iface, 0))
        self.rx.setblocking(False)
        self.tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.tx.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
        self.tx.bind((iface, 0))
        self.sent = collections.Counter()   # frames sent to this leg's end, by kind
        self.refused_by_kernel = 0


class End:
    """What the adversary knows about one end (hub or terminal)."""

    def __init__(self, name, d_bit):
        self.name = name
        self.d_bit = d_bit            # nonce direction bit of its frames
        self.epoch = 0                # its sender epoch
        self.peer_epoch = 0           # the epoch its frames name for the other end
        self.tid = 0
        self.eth = None               # Ethernet header of its frames (dst = the other end)
        self.data_max = None          # highest DATA seq it sent (its snd_nxt - 1)
        self.cum = None               # cumulative ack of its STATUS (its rcv_nxt)
        self.isn = 0                  # HELLO seq (ISN); 0 by default
        self.counter = 0              # highest crypto counter seen in its nonces
        self.frames = 0
        self.rec = collections.deque(maxlen=6000)   # (t, bytes) of its frames

    def snd_nxt(self, other):
        """Estimate of its snd_nxt: past its last DATA, at least the other's ack."""
        c = []
        if self.data_max is not None:
            c.append(u32(self.data_max + 1))
        if other.cum is not None:
            c.append(other.cum)
        if not c:
            return self.isn
        # the furthest ahead in serial arithmetic
        best = c[0]
        for v in c[1:]:
            if 0 < u32(v - best) < 0x80000000:
                best = v
        return best

    def summary(self):
        return {"epoch": self.epoch, "peer_epoch": self.peer_epoch, "terminal_id": self.tid,
                "data_max": self.data_max, "cum": self.cum, "frames_heard": self.frames,
                "recorded": len(self.rec), "nonce_counter": self.counter}


class Segment:
    """Both legs; a thread listens to them and records what the ends send."""

    def __init__(self, hub_if, term_if):
        self.hub = End("hub", 0)        # D = 0: hub to terminal
        self.term = End("term", 1)      # D = 1: terminal to hub
        # The leg towards the hub carries the hub's frames in (and ours out).
        self.to_hub = Leg("hub", hub_if)
        self.to_term = Leg("term", term_if)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.watch = None               # callback(end, hdr fields) for takeover
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        socks = {self.to_hub.rx: self.hub, self.to_term.rx: self.term}
        while not self.stop.is_set():
            r, _, _ = select.select(list(socks), [], [], 0.1)
            for s in r:
                end = socks[s]
                while True:
                    try:
                        frame, addr = s.recvfrom(65536)
                    except (BlockingIOError, InterruptedError):
                        break
                    if addr[2] == PACKET_OUTGOING:
                        continue
                    self._heard(end, frame)

    def _heard(self, end, frame):
        if len(frame) < ETH_LEN + HDR_LEN or struct.unpack("!H", frame[12:14])[0] != ETH_SATLINK:
            return
        vt, flags, ch, tid, se, pe, seq, plen = HDR.unpack_from(frame, ETH_LEN)
        typ = vt & 0xF
        now = time.time()
        with self.lock:
            end.frames += 1
            end.epoch = se
            end.peer_epoch = pe
            end.tid = tid
            end.eth = frame[:ETH_LEN]
            if typ == DATA and not flags & F_DATAGRAM:
                if end.data_max is None or 0 < u32(seq - end.data_max) < 0x80000000:
                    end.data_max = seq
            elif typ == STATUS:
                end.cum = seq
            elif typ in (HELLO, HELLO_ACK):
                end.isn = seq
            if flags & F_ENC and len(frame) >= ETH_LEN + HDR_LEN + NONCE_LEN:
                _, word = struct.unpack_from("!IQ", frame, ETH_LEN + HDR_LEN)
                end.counter = max(end.counter, word & ((1 << 63) - 1))
            end.rec.append((now, bytes(frame)))
        if self.watch is not None:
            self.watch(end, typ, se, pe, seq)

    def learned(self):
        with self.lock:
            return (self.hub.epoch and self.term.epoch and self.hub.eth is not None and
                    self.term.eth is not None)

    def wait_learned(self, timeout):
        t_end = time.monotonic() + timeout
        while time.monotonic() < t_end:
            if self.learned():
                return True
            time.sleep(0.05)
        return False

    def close(self):
        self.stop.set()
        self.th.join(2)


class Pacer:
    def __init__(self, pps):
        self.pps = pps
        self.t0 = time.monotonic()
        self.n = 0

    def tick(self):
        self.n += 1
        if self.pps and self.n % 16 == 0:
            ahead = self.n / self.pps - (time.monotonic() - self.t0)
            if ahead > 0:
                time.sleep(ahead)


class Adversary:
    def __init__(self, seg, pps):
        self.seg = seg
        self.pacer = Pacer(pps)
        self.last_sent = None
        self.first_sent = None

    def send(self, leg, frame, kind):
        try:
            leg.tx.send(frame)
        except OSError:
            leg.refused_by_kernel += 1   # e.g. shorter than an Ethernet header
            return
        leg.sent[kind] += 1
        leg.sent["total"] += 1
        self.last_sent = time.time()
        if self.first_sent is None:
            self.first_sent = self.last_sent
        self.pacer.tick()

    # The end a leg reaches, the end we pretend to be, and our direction bit.
    def roles(self, leg):
        s = self.seg
        return (s.hub, s.term) if leg is s.to_hub else (s.term, s.hub)

    def frame(self, leg, typ, sender, peer, seq, body, enc, flags=0, channel=0,
              counter=None, epoch_nonce=None, d_bit=None, tid=None, version=1):
        victim, me = self.roles(leg)
        if enc:
            if counter is None:
                counter = me.counter + (1 << 24) + random.randrange(1 << 20)
            payload = fake_seal(sender if epoch_nonce is None else epoch_nonce,
                                me.d_bit if d_bit is None else d_bit, counter, len(body))
            flags |= F_ENC
        else:
            payload = body
        return me.eth + sl_hdr(typ, flags, channel, victim.tid if tid is None else tid,
                               sender, peer, seq, len(payload), version) + payload

    # ------------------------------------------------------- rounds
    def hellos(self, leg, keys):
        victim, me = self.roles(leg)
        V, P = victim.epoch, me.epoch
        hb = hello_body()
        cases = [
            (HELLO, P + 1000, V, 777),          # a "restart" of the peer, naming us
            (HELLO, P + 1001, 0, 0),            # a new epoch naming no peer
            (HELLO, M32, V, 1),                 # the largest epoch
            (HELLO_ACK, P + 1002, V, 5),
            (HELLO, P, 0, me.isn),              # the peer's own epoch, naming no peer
            (HELLO, P, V ^ 0x5A5A, me.isn),     # the peer's epoch, another epoch of ours
            (HELLO_ACK, P, V + 1, me.isn),
            (HELLO, P - 1, V, 0),               # an older epoch
        ]
        for typ, se, pe, seq in cases:
            self.send(leg, self.frame(leg, typ, se, pe, seq, hb, keys), "hello")
        # epoch 0 fields the header parser refuses (bad_epoch)
        self.send(leg, self.frame(leg, HELLO, 0, V, 0, hb, keys), "hello")
        self.send(leg, self.frame(leg, HELLO_ACK, P + 1003, 0, 0, hb, keys), "hello")
        if keys:
            # in clear to a keyed end (unprotected), reflected (our own
            # direction: bad_dir), and sealed under an epoch older than
            # the one it authenticated (stale_epoch)
            self.send(leg, self.frame(leg, HELLO, P + 1004, V, 0, hb, False), "hello")
            self.send(leg, self.frame(leg, HELLO, P, V, me.isn, hb, True,
                                      d_bit=victim.d_bit), "hello")
            self.send(leg, self.frame(leg, HELLO, P, V, me.isn, hb, True,
                                      epoch_nonce=P - 1), "hello")

    def statuses(self, leg, keys):
        """STATUS frames whose cumulative ack is an edge of the sequence space
        around the victim's send window [una, nxt]."""
        victim, me = self.roles(leg)
        with self.seg.lock:
            nxt = victim.snd_nxt(me)
            una = me.cum if me.cum is not None else nxt
        V, P = victim.epoch, me.epoch
        rel = [nxt + (1 << 31), nxt + (1 << 31) - 1, nxt + (1 << 31) + 1, nxt + FAR,
               una - FAR - 16384]
        absolute = [M32, 0, 0x7FFFFFFF, 0x80000000, 0x80000001]
        full, empty = status_body(MAX_WORDS), status_body(0)
        for cum in rel:
            for body in (empty, full):
                self.send(leg, self.frame(leg, STATUS, P, V, cum, body, keys), "status")
        for cum in absolute:
            # Without keys a value that may lie within a ring of the window is
            # sent with no bitmap: it is then at most a late status (counted
            # status_behind), never an acknowledgement of a frame in flight.
            d_fwd, d_back = u32(cum - una), u32(una - cum)
            far = d_fwd > u32(nxt - una) + SLACK and d_back > 16384 + SLACK
            for body in ((empty, full) if keys or far else (empty,)):
                self.send(leg, self.frame(leg, STATUS, P, V, cum, body, keys), "status")
        # 257 words: one past the parser's bound (bad_body)
        self.send(leg, self.frame(leg, STATUS, P, V, nxt + FAR, status_body(MAX_WORDS + 1),
                                  keys), "status")
        # wrong epochs
        self.send(leg, self.frame(leg, STATUS, P + 1000, V, nxt, empty, keys), "status")
        self.send(leg, self.frame(leg, STATUS, P, V + 7, nxt, empty, keys), "status")

    def headers(self, leg, keys):
        """One frame per check of sgw_satlink_parse_hdr."""
        victim, me = self.roles(leg)
        V, P = victim.epoch, me.epoch
        e = status_body(0)
        self.send(leg, self.frame(leg, STATUS, P, V, 0, e, keys, version=2), "header")
        self.send(leg, self.frame(leg, 7, P, V, 0, e, keys), "header")            # bad_type
        self.send(leg, self.frame(leg, STATUS, P, V, 0, e, keys, flags=0x10), "header")
        self.send(leg, self.frame(leg, STATUS, P, V, 0, e, keys, flags=F_FIRST), "header")
        self.send(leg, self.frame(leg, STATUS, P, V, 0, e, keys, channel=9), "header")
        self.send(leg, self.frame(leg, STATUS, 0, V, 0, e, keys), "header")     # bad_epoch
        self.send(leg, me.eth + sl_hdr(DATA, F_FIRST | F_LAST, 0, victim.tid, P, V, 0, 0),
                  "header")                                                    # DATA, no payload
        self.send(leg, me.eth + sl_hdr(STATUS, 0, 0, victim.tid, P, V, 0, 40) + e,
                  "header")                                                    # length past the end
        # another terminal's frame: rx_no_session at the hub, rx_other_terminal at a
        # terminal (on a broadcast forward link the others' frames are no loss)
        self.send(leg, self.frame(leg, STATUS, P, V, 0, e, keys, tid=victim.tid + 1), "header")

    def recorded(self, end, min_age, n):
        now = time.time()
        with self.seg.lock:
            old = [f for t, f in end.rec if now - t >= min_age]
        if len(old) > n:
            old = random.sample(old, n)
        return old

    def replays(self, leg, n=30):
        victim, me = self.roles(leg)
        # frames the pretended end sent, at least 1 s ago (the victim has them)
        for f in self.recorded(me, 1.0, n):
            self.send(leg, f, "replay")

    def reflections(self, leg, n=8):
        victim, me = self.roles(leg)
        # the victim's own recent frames, back to it
        for f in self.recorded(victim, 0.0, n):
            self.send(leg, f, "reflect")

    def truncations(self, leg):
        """Recorded frames cut at every boundary: Ethernet, each header field,
        the header's end, the nonce, the ciphertext, the tag; raw (the length
        field then points past the end) and with the length field rewritten
        to match what is left."""
        victim, me = self.roles(leg)
        now = time.time()
        with self.seg.lock:
            pick = {}
            # frames the victim has had for a second (a cut copy of one still
            # on its way could arrive first)
            for t, f in reversed(me.rec):
                typ = f[ETH_LEN] & 0xF
                if now - t >= 1.0 and typ not in pick:
                    pick[typ] = f
        for f in pick.values():
            n = len(f)
            hdr_end = ETH_LEN + HDR_LEN
            cuts = [ETH_LEN, ETH_LEN + 1, ETH_LEN + 2, ETH_LEN + 4, ETH_LEN + 8, ETH_LEN + 12,
                    ETH_LEN + 16, ETH_LEN + 20, hdr_end - 1, hdr_end, hdr_end + 1,
                    hdr_end + NONCE_LEN - 1, hdr_end + NONCE_LEN, hdr_end + NONCE_LEN + 1,
                    hdr_end + SLC_OVERHEAD - 1, n - TAG_LEN, n - TAG_LEN + 1, n - 1]
            for c in sorted(set(cuts)):
                if c >= n:
                    continue
                self.send(leg, f[:c], "trunc")
                if c > hdr_end:
                    g = bytearray(f[:c])
                    struct.pack_into("!H", g, ETH_LEN + 20, c - hdr_end)
                    self.send(leg, bytes(g), "trunc")

    def flood(self, leg, keys, count):
        """Valid-looking frames: right terminal, right epochs, sequence numbers
        near the real ones. keys: sealed-looking (made-up nonce, ciphertext,
        tag). clear: only control frames a live session refuses."""
        victim, me = self.roles(leg)
        V, P = victim.epoch, me.epoch
        with self.seg.lock:
            nxt = victim.snd_nxt(me)
            rcv = victim.cum if victim.cum is not None else me.snd_nxt(victim)
        payload = bytes(200)
        for i in range(count):
            k = i % 4
            if keys and k == 0:
                f = self.frame(leg, DATA, P, V, rcv + random.randrange(64), payload, True,
                               flags=F_FIRST | F_LAST)
            elif k == 1:
                cum = nxt + FAR + random.randrange(1 << 30)
                f = self.frame(leg, STATUS, P, V, cum, status_body(random.randrange(4)), keys)
            elif k == 2:
                f = self.frame(leg, HELLO, P + 2000 + random.randrange(1 << 20), V,
                               random.randrange(1 << 32), hello_body(), keys)
            else:
                f = self.frame(leg, HELLO, P, 0 if i & 4 else V ^ 0xFF, me.isn, hello_body(),
                               keys)
            self.send(leg, f, "flood")


def common_start(a):
    seg = Segment(a.hub_if, a.term_if)
    if not seg.wait_learned(a.learn_timeout):
        seg.close()
        sys.exit("sl_adversary: heard no satlink frames from both ends within %.0f s "
                 "(hub %d frames, terminal %d)" % (a.learn_timeout, seg.hub.frames,
                                                     seg.term.frames))
    time.sleep(a.learn)   # some more to record and to see acks
    return seg


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def result(seg, adv, extra=None):
    res = {"hub": seg.hub.summary(), "term": seg.term.summary(),
           "sent": {"hub": dict(seg.to_hub.sent), "term": dict(seg.to_term.sent)},
           "kernel_refused": {"hub": seg.to_hub.refused_by_kernel,
                              "term": seg.to_term.refused_by_kernel},
           "first_sent_at": adv.first_sent, "silent_at": adv.last_sent}
    res.update(extra or {})
    return res


def stop_flag():
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    return stop


def cmd_attack(a):
    stop = stop_flag()
    seg = common_start(a)
    adv = Adversary(seg, a.pps)
    keys = a.mode == "keys"
    t_end = time.monotonic() + a.max_seconds
    flooded = {"hub": 0, "term": 0}
    rounds = 0
    ready = False
    while not stop and time.monotonic() < t_end:
        for leg in (seg.to_hub, seg.to_term):
            adv.hellos(leg, keys)
            adv.statuses(leg, keys)
            adv.headers(leg, keys)
            adv.replays(leg)
            adv.reflections(leg)
            adv.truncations(leg)
            n = min(a.flood_chunk, a.flood - flooded[leg.name])
            if n > 0:
                adv.flood(leg, keys, n)
                flooded[leg.name] += n
        rounds += 1
        if not ready and a.ready:
            write_json(a.ready, result(seg, adv, {"rounds": rounds}))
            ready = True
        time.sleep(a.gap)
    seg.close()
    write_json(a.out, result(seg, adv, {"rounds": rounds, "mode": a.mode}))
    return 0


def cmd_hostile(a):
    seg = common_start(a)
    adv = Adversary(seg, a.pps)
    if a.ready:
        write_json(a.ready, result(seg, adv))
    for leg in (seg.to_hub, seg.to_term):
        victim, me = adv.roles(leg)
        with seg.lock:
            rcv = victim.cum if victim.cum is not None else me.snd_nxt(victim)
            nxt = victim.snd_nxt(me)
        # DATA at the victim's next sequence numbers and on: not IP (a first
        # byte of 0), so what is delivered is dropped as deliver_not_ip.
        for i in range(a.data):
            adv.send(leg, adv.frame(leg, DATA, me.epoch, victim.epoch, rcv + i, bytes(64),
                                    False, flags=F_FIRST | F_LAST), "data")
        # acknowledgements of the whole window
        for _ in range(5):
            adv.send(leg, adv.frame(leg, STATUS, me.epoch, victim.epoch, nxt,
                                    status_body(MAX_WORDS), False), "status")
        adv.hellos(leg, False)
    seg.close()
    write_json(a.out, result(seg, adv, {"data_per_end": a.data}))
    return 0


def cmd_takeover(a):
    seg = common_start(a)
    adv = Adversary(seg, 0)
    with seg.lock:
        H, T = seg.hub.epoch, seg.term.epoch
    F = u32(T + 100000)
    adopted = threading.Event()

    def watch(end, typ, se, pe, seq):
        if end is seg.hub and pe == F:
            adopted.set()
    seg.watch = watch
    if a.ready:
        write_json(a.ready, result(seg, adv, {"forged_epoch": F}))
    leg = seg.to_hub
    hb = hello_body()
    t_end = time.monotonic() + a.timeout
    tries = 0
    while not adopted.is_set() and time.monotonic() < t_end:
        adv.send(leg, adv.frame(leg, HELLO, F, H, 777, hb, False), "takeover_hello")
        tries += 1
        adopted.wait(0.2)
    ok = adopted.is_set()
    adopted_at = time.time() if ok else None
    if ok:
        if a.adopted:
            write_json(a.adopted, {"forged_epoch": F, "adopted_at": adopted_at})
        t_hold = time.monotonic() + a.hold
        while time.monotonic() < t_hold:
            adv.send(leg, adv.frame(leg, HELLO, F, H, 777, hb, False), "hold")
            adv.send(leg, adv.frame(leg, STATUS, F, H, seg.hub.isn, status_body(0), False),
                     "hold")
            time.sleep(0.2)
    seg.close()
    write_json(a.out, result(seg, adv, {"forged_epoch": F, "adopted": ok,
                                        "adopted_at": adopted_at, "hello_tries": tries,
                                        "hub_epoch": H, "term_epoch": T}))
    return 0 if ok else 1


# ------------------------------------------------------------------ telemetry

def cmd_loops(a):
    stop = stop_flag()
    tels = {}
    samples = []
    while not stop:
        s = {"t": time.time(), "boxes": {}}
        for p in a.prefixes:
            try:
                if p not in tels:
                    tels[p] = sgwtel.Telemetry(p, timeout=3.0)
                w = tels[p].cmd("/satgw/workers")
                s["boxes"][p] = {k: v["loops"] for k, v in w.items()}
            except (OSError, ValueError, KeyError) as e:
                s["boxes"][p] = {"error": str(e)}
                tels.pop(p, None)
        samples.append(s)
        write_json(a.out, samples)
        t = time.monotonic() + a.interval
        while not stop and time.monotonic() < t:
            time.sleep(0.05)
    return 0


def cmd_loops_check(a):
    """A worker stalls when its loop counter stands still across --window s of
    samples (a frozen worker: defect 1 of issue 11 froze one for ~10 s). One
    sample interval is not enough: a busy shared machine may not run a spinning
    worker for a moment, which is the machine, not satgw. A sample telemetry
    did not answer (the control thread, not the worker) is left out."""
    samples = json.load(open(a.out))
    bad = 0
    prefixes = sorted({p for s in samples for p in s["boxes"]})
    for p in prefixes:
        got = [s for s in samples if p in s["boxes"] and "error" not in s["boxes"][p]]
        errs = [s["boxes"][p]["error"] for s in samples if "error" in s["boxes"].get(p, {})]
        workers = sorted({w for s in got for w in s["boxes"][p]})
        if len(got) < a.min_samples or not workers:
            print("  FAIL %s: %d loop samples answered (want %d): %s" % (
                p, len(got), a.min_samples, errs[:1]))
            bad += 1
            continue
        for w in workers:
            pts = [(s["t"], s["boxes"][p][w]) for s in got if w in s["boxes"][p]]
            back = [i for i in range(1, len(pts)) if pts[i][1] < pts[i - 1][1]]
            still = []
            for i, (t0, v0) in enumerate(pts):
                later = [v for t, v in pts[i + 1:] if t - t0 >= a.window]
                if later and later[0] <= v0:
                    still.append(round(t0 - pts[0][0], 1))
            ok = not still and not back
            print("  %s %s %s: loops moved within every %.0f s over %d samples (%d .. %d)%s%s" % (
                "ok  " if ok else "FAIL", p.rsplit("-", 1)[-1], w, a.window, len(pts),
                pts[0][1], pts[-1][1],
                "" if not still else "; still for %.0f s from t = %s s" % (a.window, still[:5]),
                "" if not back else "; went back at samples %s" % back))
            bad += not ok
    return 1 if bad else 0


def cmd_snap(a):
    with sgwtel.Telemetry(a.prefix) as t:
        doc = {"satlink": t.cmd("/satgw/satlink"), "ports": t.cmd("/satgw/ports"),
               "t": time.time()}
    doc["set"] = {}
    for kv in a.set or []:
        k, v = kv.split("=", 1)
        doc["set"][k] = int(v)
    write_json(a.out, doc)
    return 0


def session(tel):
    d = tel.cmd("/satgw/satlink")
    return d, d.get("0", {})


def cmd_wait_up(a):
    t_end = time.monotonic() + a.timeout
    last = None
    while True:
        try:
            with sgwtel.Telemetry(a.hub) as th, sgwtel.Telemetry(a.term) as tt:
                hd, hs = session(th)
                td, ts = session(tt)
            last = (hs.get("state"), hs.get("peer_epoch"), td.get("epoch"),
                    ts.get("state"), ts.get("peer_epoch"), hd.get("epoch"))
            if (hs.get("state") == "up" and ts.get("state") == "up" and
                    hs.get("peer_epoch") == td.get("epoch") and
                    ts.get("peer_epoch") == hd.get("epoch")):
                print("%.2f" % (time.time() - a.since))
                return 0
        except (OSError, ValueError) as e:
            last = str(e)
        if time.monotonic() >= t_end:
            print("not up after %.1f s: hub (state, peer epoch, terminal's epoch) and terminal "
                  "(state, peer epoch, hub's epoch): %s" % (time.time() - a.since, last),
                  file=sys.stderr)
            return 1
        time.sleep(0.2)


# ------------------------------------------------------------------ checks

def counters(doc):
    """Flat dict of one box's satlink numbers: worker counters + session 0."""
    sl = doc["satlink"]
    out = dict(sl["counters"])
    for k, v in sl.get("0", {}).items():
        if isinstance(v, (int, float)):
            out[k] = v
    out["state"] = sl.get("0", {}).get("state")
    return out


def port_of(doc, name):
    return doc["ports"][name]


class Checker:
    def __init__(self, label):
        self.label = label
        self.bad = 0

    def __call__(self, ok, what):
        print("  %s %s: %s" % ("ok  " if ok else "FAIL", self.label, what))
        self.bad += not ok


ARQ_REFUSALS = ["rx_refused_%s" % r for r in ("out_of_window", "stale_epoch", "bad_terminal",
                                              "bad_frame", "dgram_late", "no_room",
                                              "resetting", "closed", "bad_call")]
HDR_REASONS = ["rx_bad_%s" % r for r in ("trunc", "bad_version", "bad_type", "bad_flags",
                                         "bad_len", "bad_epoch", "bad_channel")]


def check_box(ph, label, box, att, before, after):
    """Deltas of one box (hub or term) over the attack of phase ph."""
    c = Checker(label)
    b, e = counters(before), counters(after)

    def d(k):
        return e.get(k, 0) - b.get(k, 0)
    sent = att["sent"][box]
    x = sent.get("total", 0)
    c(x > 0, "the adversary sent it %d frames (%s)" % (
        x, ", ".join("%s %d" % kv for kv in sorted(sent.items()) if kv[0] != "total")))
    c(e["state"] == "up", "session up after the attack (is %s)" % e["state"])
    for k in ("peer_restarts", "peer_lost", "link_downs"):
        c(e.get(k) == 0, "%s == 0 (is %s)" % (k, e.get(k)))
    for r in HDR_REASONS:
        c(d(r) >= 1, "header check %s refused forged frames (+%d)" % (r[7:], d(r)))
    if box == "hub":
        c(d("rx_no_session") >= 1, "frames naming a terminal the hub does not serve: "
          "rx_no_session +%d" % d("rx_no_session"))
    else:
        c(d("rx_other_terminal") >= 1, "frames naming another terminal: "
          "rx_other_terminal +%d (no loss)" % d("rx_other_terminal"))
    if ph == "keys":
        drops = {k[12:]: d(k) for k in e if k.startswith("crypto_drop_")}
        for r in ("bad_tag", "unprotected", "bad_dir", "stale_epoch", "trunc"):
            c(drops.get(r, 0) >= 1, "crypto layer refused forged frames as %s (+%d)" % (
                r, drops.get(r, 0)))
        c(drops.get("replay", 0) + drops.get("too_old", 0) >= 1,
          "recorded frames played back refused as replay / too_old (+%d / +%d)" % (
              drops.get("replay", 0), drops.get("too_old", 0)))
        c(sum(drops.values()) == d("rx_crypto"),
          "crypto drops by reason (%d) add up to rx_crypto (+%d)" % (
              sum(drops.values()), d("rx_crypto")))
        refused = d("rx_no_session") + d("rx_other_terminal") + d("rx_bad_header") + \
            d("rx_crypto")
        # What the box's kernel received that satgw never saw (its af_packet
        # ring overflowed), and what our own veth dropped on the way.
        ring = (after["set"]["kernel_rx"] - before["set"]["kernel_rx"]) - \
            (port_of(after, "sat")["dev_ipackets"] - port_of(before, "sat")["dev_ipackets"])
        lost = after["set"]["leg_tx_dropped"] - before["set"]["leg_tx_dropped"]
        slack = max(0, ring) + max(0, lost)
        c(x - slack <= refused <= x,
          "every forged frame refused before the session: no_session + other_terminal + "
          "bad_header + crypto "
          "= %d, sent %d (%d overflowed the af_packet ring, %d dropped on the veth)" % (
              refused, x, max(0, ring), max(0, lost)))
        for k in ARQ_REFUSALS + ["hello_refused_live", "status_behind"]:
            c(d(k) == 0, "nothing forged reached the session machine: %s +%d" % (k, d(k)))
    else:
        c(d("hello_refused_live") >= 1, "HELLOs of other epochs refused while the peer is "
          "live: hello_refused_live +%d" % d("hello_refused_live"))
        c(d("rx_refused_bad_frame") >= 1, "STATUS acks outside [snd_una, snd_nxt] and bad "
          "bodies refused: rx_refused_bad_frame +%d" % d("rx_refused_bad_frame"))
        c(d("rx_refused_stale_epoch") >= 1, "frames of other epochs refused: "
          "rx_refused_stale_epoch +%d" % d("rx_refused_stale_epoch"))
        c(d("crypto_opened") == 0 and d("rx_encrypted_no_key") == 0,
          "no keys: nothing opened, no encrypted frame (+%d, +%d)" % (
              d("crypto_opened"), d("rx_encrypted_no_key")))
    return c.bad


def cmd_check(a):
    att = json.load(open(a.attack))
    bad = 0
    for box, b, e in (("hub", a.before_hub, a.after_hub), ("term", a.before_term, a.after_term)):
        bad += check_box(a.phase, box, box, att, json.load(open(b)), json.load(open(e)))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def seg_args(s):
        s.add_argument("--hub-if", default="hub0")
        s.add_argument("--term-if", default="term0")
        s.add_argument("--learn", type=float, default=1.0,
                       help="seconds of listening after both ends were heard")
        s.add_argument("--learn-timeout", type=float, default=10)
        s.add_argument("--out", required=True)
        s.add_argument("--ready")
    s = sub.add_parser("attack")
    seg_args(s)
    s.add_argument("--mode", choices=("keys", "clear"), required=True)
    s.add_argument("--max-seconds", type=float, default=60)
    s.add_argument("--flood", type=int, default=6000, help="flood frames per end, at most")
    s.add_argument("--flood-chunk", type=int, default=500)
    s.add_argument("--pps", type=float, default=4000)
    s.add_argument("--gap", type=float, default=0.2)
    s = sub.add_parser("hostile")
    seg_args(s)
    s.add_argument("--data", type=int, default=4096)
    s.add_argument("--pps", type=float, default=4000)
    s = sub.add_parser("takeover")
    seg_args(s)
    s.add_argument("--adopted")
    s.add_argument("--timeout", type=float, default=10)
    s.add_argument("--hold", type=float, default=2)
    s = sub.add_parser("loops")
    s.add_argument("out")
    s.add_argument("prefixes", nargs="+")
    s.add_argument("--interval", type=float, default=0.5)
    s = sub.add_parser("loops-check")
    s.add_argument("out")
    s.add_argument("--min-samples", type=int, default=4)
    s.add_argument("--window", type=float, default=3.0,
                   help="a worker must move within every this many seconds")
    s = sub.add_parser("snap")
    s.add_argument("prefix")
    s.add_argument("out")
    s.add_argument("--set", action="append")
    s = sub.add_parser("wait-up")
    s.add_argument("hub")
    s.add_argument("term")
    s.add_argument("--since", type=float, required=True)
    s.add_argument("--timeout", type=float, default=15)
    s = sub.add_parser("check")
    s.add_argument("phase", choices=("keys", "clear"))
    s.add_argument("--attack", required=True)
    s.add_argument("--before-hub", required=True)
    s.add_argument("--after-hub", required=True)
    s.add_argument("--before-term", required=True)
    s.add_argument("--after-term", required=True)
    a = ap.parse_args()
    return {"attack": cmd_attack, "hostile": cmd_hostile, "takeover": cmd_takeover,
            "loops": cmd_loops, "loops-check": cmd_loops_check, "snap": cmd_snap,
            "wait-up": cmd_wait_up, "check": cmd_check}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
