#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Goodput of one TCP download across the emulated GEO link: end-to-end CUBIC,
end-to-end BBR, CUBIC over satlink (no split) and the TCP split (issue 10,
docs/tcp-split.md), side by side on the same link in the same run.

Every run builds testbed.sh's three-box chain (fh - hub - emulator - terminal
- mh; tests/e2e/testbed.sh `chain`, fresh namespaces and processes per run).
The emulator is tests/e2e/policies/chain-emulator-ber.yaml (270 ms each way,
20 Mbit/s forward, 2 Mbit/s return without errors) with the channel's loss on
the forward link:
  ber0, ber1e-6, ber1e-5   independent bit errors (emulator model `ber`)
  ge                       Gilbert-Elliott as in tests/e2e/policies/
                           lift_emulator_ge.yaml (the seed's shadowing: good
                           4 s mean, lossless; bad 1 s mean, every frame lost)
Modes (hub / terminal policies):
  cubic     chain-{hub,terminal}.yaml (routing only), the server's socket CUBIC
  bbr       the same, the server's socket BBR
  satlink   chain-{hub,terminal}-satlink.yaml (reliable service), CUBIC
  split     tests/bench/goodput_{hub,terminal}.yaml: satlink as above plus the
            split (rule action split for the server's port), CUBIC at both
            Linux ends (the legs' own congestion control is the satgw
            endpoint's)
The download: the client on mh connects to the server on fh (the client opens
the connection: only those are split), sends one request line, and reads for
--seconds counted from the moment it calls connect() (its SYN); the server
sends until the client goes away. Goodput = bytes read / --seconds, as a
fraction of the forward rate. Also: time to the first byte, bytes per 1 s.
During the run a sampler records every second: the split's and satlink's
counters of hub and terminal (telemetry), and the server's socket (ss -tin:
cwnd, rtt, bytes_acked, the limits Linux reports). From them: the hub's rx
relay occupancy (server bytes acked - hub DATA bytes sent) and the
terminal's tx relay occupancy (terminal DATA bytes received - client bytes).

  split_goodput.py run --satgw BIN [--modes ...] [--channels ...] [--seconds 60]
      [--reps 1] [--json OUT] [--plot PNG] [--workdir DIR] [--set KEY=VALUE ...]
      [--warmup S]
      --warmup: a gateway that has been running: an unmeasured download of S
      seconds on the same boxes first (its satlink session, and so what it
      learnt of the channel, e.g. the adapted frame size, stays up), then the
      measured one, still counted from its own SYN; the per-second samples
      start with it, the boxes' exit counters cover both
  split_goodput.py objects --satgw BIN [--sizes 100000,1000000,10000000]
      time to first byte and to the last byte of objects of those sizes,
      split end-to-end handshake / split spoofed / no split (satlink) / no
      satlink; BER 0 unless --channel
  split_goodput.py concurrent --satgw BIN [--conns 4] [--channel ber1e-5]
      N concurrent split downloads against one (per-stream goodput, stalls)
  split_goodput.py hol --satgw BIN [--cases alone,bulk,bulk-sq64,nosplit]
      [--channels ber0,ber1e-5] [--rr-req 100 --rr-resp 2000 --rr-interval 0.5]
      a light request-response stream (one request of --rr-req bytes at a
      time, answered by --rr-resp bytes, every --rr-interval s on average)
      on a second connection of the client: alone (split), next to one split
      bulk download (with satlink's default send queue, and with 64), and
      without split next to CUBIC over satlink; the response times, what
      satlink repaired during each exchange, and the queue and receive-hold
      times by Little's law from the sampler's gauges (every 0.5 s)
  split_goodput.py plot JSON PNG
  split_goodput.py hol-plot JSON PNG     the hol table and CDF plot again
Internal: serve, client, sample (run inside the chain by the driver).

Needs root (namespaces), Debian's /usr/bin/python3 (python3-yaml,
python3-matplotlib for the plot), iproute2 (ss).
"""

import argparse
import json
import math
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
E2E = os.path.join(ROOT, "tests", "e2e")
POL = os.path.join(E2E, "policies")
sys.path.insert(0, E2E)
sys.path.insert(0, HERE)

GE_LOSS = {"model": "gilbert-elliott", "good": {"mean_s": 4.0}, "bad": {"mean_s": 1.0, "p": 1.0}}
CHANNELS = {"ber0": None, "ber1e-6": 1e-6, "ber1e-5": 1e-5, "ge": "ge"}
MODES = ("cubic", "bbr", "satlink", "split")
ETH_HDR = 14
SL_HDR = 22
STREAM_HDR = 5          # DATA message header (type + offset)
TCP_PAYLOAD = 1448
SERVER_PORT = 5201      # not in the terminal's spoofed range (9000-9099)
SPOOF_PORT = 9001
LIGHT_PORT = 5202       # the hol subcommand's light stream (split like SERVER_PORT)
RTT_S = 0.541           # the emulated link's round trip (270 ms each way + serialisation)
STALL_S = 0.2           # a read that waited this long ends a stall (20 Mbit/s: one every ms)

DRIVER = r'''
set -euo pipefail
TB_NAME=split-goodput
# testbed.sh with the wait for a box's telemetry raised from 20 s to
# $B_READY_WAIT (a machine shared with other test runs starts boxes slowly);
# its helpers are still found in tests/e2e.
sed "s/--wait 20 --pid/--wait $B_READY_WAIT --pid/" "$B_E2E/testbed.sh" >"$B_OUT/testbed.sh"
source "$B_OUT/testbed.sh"
TB_E2E_DIR=$B_E2E
tb_init "$B_SATGW"
tb_topology chain
tb_box_start emu "$B_OUT/emu.yaml" 1
tb_box_start hub "$B_OUT/hub.yaml" 0
tb_box_start term "$B_OUT/term.yaml" 0
tb_wait_path mh "$TB_IP_FH" 30
# no per-destination metrics (ssthresh) carried from one connection to the next
tb_ns fh sysctl -qw net.ipv4.tcp_no_metrics_save=1
tb_ns mh sysctl -qw net.ipv4.tcp_no_metrics_save=1
tb_bg fh server /usr/bin/python3 "$B_SELF" serve --bind "$TB_IP_FH" --port "$B_PORT" --cc "$B_CC"
tb_wait_listen fh "$B_PORT"
if [ "$B_PORT2" != 0 ]; then
	tb_bg fh server2 /usr/bin/python3 "$B_SELF" serve --bind "$TB_IP_FH" --port "$B_PORT2" --cc "$B_CC"
	tb_wait_listen fh "$B_PORT2"
fi
if [ "${B_WARMUP_S:-0}" != 0 ]; then
	# a running gateway: one unmeasured download first, until the hub's satlink
	# queue and pacer are empty again; the sampler starts after it (the boxes'
	# exit counters still cover both downloads)
	tb_ns mh /usr/bin/python3 "$B_SELF" client --host "$TB_IP_FH" --port "$B_PORT" --port2 0 \
		--conns 1 --seconds "$B_WARMUP_S" --size 0 --cc "$B_CC" --out "$B_OUT/warmup.json" || true
	tb_box_wait_tel hub 30 /satgw/satlink 'd["0"]["queue_held"] + d["0"]["pacer_held"] == 0'
	sleep 1
	# the hub's split counters after it: the relay occupancy counts from here
	tb_box_tel hub /satgw/split >"$B_OUT/warmup-hub-split.json" 2>/dev/null || true
fi
tb_bg_local sampler /usr/bin/python3 "$B_SELF" sample --hub "$(tb_box_prefix hub)" \
	--term "$(tb_box_prefix term)" --ns-fh "$TB_NS_FH" --port "$B_PORT" --out "$B_OUT/samples.jsonl" \
	--interval "${B_SAMPLE_S:-1}"
SAMP=$TB_LAST_PID
tb_ns mh /usr/bin/python3 "$B_SELF" client --host "$TB_IP_FH" $B_CLIENT_ARGS --cc "$B_CC" \
	--out "$B_OUT/client.json" || true
kill "$SAMP" 2>/dev/null || true
tb_boxes_stop hub term
rcs="hub=${TB_BOX_RC[hub]} term=${TB_BOX_RC[term]}"
tb_box_stop emu
rcs="$rcs emu=${TB_BOX_RC[emu]}"
echo "$rcs" >"$B_OUT/rc.txt"
for box in hub emu term; do
	cp "$(tb_box_json "$box")" "$B_OUT/stats-$box.json" 2>/dev/null || true
	cp "$(tb_box_log "$box")" "$B_OUT/satgw-$box.log" 2>/dev/null || true
done
'''


def die(msg):
    sys.exit("split_goodput.py: " + msg)


# ------------------------------------------------------------ the transfer

def set_cc(s, cc):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def serve(a):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    set_cc(ls, a.cc)
    ls.bind((a.bind, a.port))
    ls.listen(128)
    buf = os.urandom(1 << 16)

    def one(c):
        try:
            set_cc(c, a.cc)
            line = b""
            while not line.endswith(b"\n") and len(line) < 64:
                x = c.recv(1)
                if not x:
                    return
                line += x
            if line.startswith(b"RR "):
                return rr_serve(c, line)
            n = int(line.split()[1]) if len(line.split()) > 1 else 0
            if n == 0:
                while True:
                    c.sendall(buf)
            while n > 0:
                k = c.send(buf[:min(n, len(buf))])
                n -= k
            c.shutdown(socket.SHUT_WR)
            c.recv(1)
        except OSError:
            pass
        finally:
            c.close()

    while True:
        c, _ = ls.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


def recv_exact(s, n):
    got = bytearray()
    while len(got) < n:
        d = s.recv(n - len(got))
        if not d:
            raise ConnectionError("peer closed after %d of %d bytes" % (len(got), n))
        got += d
    return got


def rr_serve(c, line):
    """The light stream's server: after the line "RR <req> <resp>", read
    requests of <req> bytes and answer each with <resp> bytes, until the
    client closes. No Nagle: an interactive server answers at once."""
    _, req, resp = line.split()
    req, resp = int(req), int(resp)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out = os.urandom(resp)
    while True:
        try:
            recv_exact(c, req)
        except ConnectionError:
            return
        c.sendall(out)


def rr_client(a, t_start, res):
    """The light stream (hol): one connection to --rr-port opened --rr-delay
    s after the bulk downloads start; a --rr-req byte request every
    --rr-interval s (+-20%, seeded), each answered by --rr-resp bytes; the
    response time is request sent -> last response byte read. A request
    is sent only when the previous response is complete (one outstanding
    exchange, as a request-response application does)."""
    import random
    rng = random.Random(a.rr_seed)
    r = {"exchanges": [], "error": None, "req": a.rr_req, "resp": a.rr_resp,
         "interval_s": a.rr_interval}
    res["light"] = r
    time.sleep(max(0.0, t_start + a.rr_delay - time.monotonic()))
    end = t_start + a.seconds
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    set_cc(s, a.cc)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(30.0)
    req = b"x" * a.rr_req
    try:
        t0 = time.monotonic()
        s.connect((a.host, a.rr_port))
        r["connect_s"] = time.monotonic() - t0
        s.sendall(b"RR %d %d\n" % (a.rr_req, a.rr_resp))
        nxt = time.monotonic()
        while True:
            now = time.monotonic()
            if nxt > now:
                time.sleep(nxt - now)
            ts = time.monotonic()
            if ts >= end:
                break
            s.sendall(req)
            recv_exact(s, a.rr_resp)
            te = time.monotonic()
            # [monotonic send time, response time]; the sampler's records carry
            # the same clock (CLOCK_MONOTONIC is not namespaced here)
            r["exchanges"].append([round(ts, 4), round(te - ts, 4)])
            nxt += a.rr_interval * rng.uniform(0.8, 1.2)
            if nxt < te:
                nxt = te + a.rr_interval * rng.uniform(0.0, 0.2)
    except OSError as e:
        r["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        s.close()


def client(a):
    """--conns downloads at once (threads), each for --seconds from its connect()
    (infinite) or of --size bytes. Per connection: connect_s, first_byte_s,
    bytes, seconds, per-second byte counts, the longest gap between reads."""
    start = threading.Event()

    def one(i):
        r = {"bytes": 0, "error": None, "per_s": []}
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        set_cc(s, a.cc)
        s.settimeout(5.0)
        start.wait()
        port = a.port2 if (a.port2 and i % 2 == 1) else a.port
        t0 = time.monotonic()
        end = t0 + a.seconds
        try:
            s.connect((a.host, port))
            r["connect_s"] = time.monotonic() - t0
            s.sendall(b"GET %d\n" % a.size)
            last = None
            gap = 0.0
            while True:
                now = time.monotonic()
                if a.size == 0 and now >= end:
                    break
                if a.size:
                    s.settimeout(max(0.1, end - now))
                else:
                    s.settimeout(max(0.01, min(1.0, end - now)))
                try:
                    d = s.recv(1 << 18)
                except socket.timeout:
                    if a.size:
                        raise
                    continue
                now = time.monotonic()
                if not d:
                    break
                if last is None:
                    r["first_byte_s"] = now - t0
                else:
                    gap = max(gap, now - last)
                    if now - last >= STALL_S:
                        r["stalls"] = r.get("stalls", 0) + 1
                        r["stall_s"] = r.get("stall_s", 0.0) + (now - last)
                last = now
                sec = int(now - t0)
                while len(r["per_s"]) <= sec:
                    r["per_s"].append(0)
                if a.size or now < end:
                    r["per_s"][sec] += len(d)
                    r["bytes"] += len(d)
            r["seconds"] = (last - t0) if a.size else a.seconds
            r["max_gap_s"] = gap
        except OSError as e:
            r["error"] = "%s: %s" % (type(e).__name__, e)
        finally:
            s.close()
        res[i] = r

    sizes = [int(x) for x in str(a.size).split(",")]
    allres = []
    light = {}
    lt = None
    if a.rr_port:
        lt = threading.Thread(target=rr_client, args=(a, time.monotonic(), light))
        lt.start()
    for sz in sizes:
        # several sizes: one connection after the other (objects), each its own
        a.size = sz
        res = [None] * a.conns
        start.clear()
        ts = [threading.Thread(target=one, args=(i,)) for i in range(a.conns)]
        for t in ts:
            t.start()
        start.set()
        for t in ts:
            t.join()
        for x in res:
            if x is not None:
                x["size"] = sz
        allres += res
    if lt:
        lt.join()
    with open(a.out, "w") as f:
        json.dump({"conns": allres, "seconds": a.seconds, "size": sizes[0],
                   "light": light.get("light")}, f)


def ss_server(ns, port):
    """The server's data sockets (ss -tin in fh's namespace), the fields that
    say what limits them."""
    r = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tinH", "state", "established",
                        "( sport = :%d )" % port], capture_output=True, text=True)
    out = []
    for line in r.stdout.splitlines():
        f = {}
        toks = line.split()
        for i, tok in enumerate(toks):
            # ss writes these as "name value", the others as "name:value"
            if tok in ("pacing_rate", "delivery_rate") and i + 1 < len(toks):
                f[tok] = toks[i + 1]
            elif ":" in tok and not tok.startswith("["):
                k, _, v = tok.partition(":")
                # bbr:(bw:..,mrtt:..,pacing_gain:..,cwnd_gain:..): BBR's model
                if k in ("cwnd", "bytes_acked", "rtt", "snd_wnd", "rwnd_limited", "sndbuf_limited",
                         "busy", "unacked", "retrans", "bytes_sent", "bytes_retrans", "bbr"):
                    f[k] = v
        if "bytes_acked" in f:
            out.append(f)
    return out


def sample(a):
    from sgwtel import Telemetry
    tels = {}
    for name, prefix in (("hub", a.hub), ("term", a.term)):
        try:
            tels[name] = Telemetry(prefix)
        except OSError:
            pass
    t0 = time.monotonic()
    with open(a.out, "w") as f:
        while True:
            now = time.monotonic()
            rec = {"t": round(now - t0, 3), "mono": round(now, 4)}
            for name, t in tels.items():
                try:
                    rec[name + "_split"] = t.cmd("/satgw/split")
                    rec[name + "_satlink"] = t.cmd("/satgw/satlink")
                except (OSError, ValueError):
                    pass
            rec["server"] = ss_server(a.ns_fh, a.port)
            f.write(json.dumps(rec) + "\n")
            f.flush()
            time.sleep(max(0.0, a.interval - (time.monotonic() - t0) % a.interval))


# -------------------------------------------------------------- the runs

def p_frame(ber, nbytes):
    return 1.0 - (1.0 - ber) ** (8 * nbytes) if ber else 0.0


def split_bound(ber, frame_size, copies=1):
    """Goodput / rate an erasure ARQ can reach at best carrying the split's
    DATA messages of frame_size bytes (payload frame_size - 5): every frame
    pays Ethernet 14 + satlink 22 bytes and is lost with p(L); a lost frame is
    sent again `copies` times per round (1: ideal selective repeat)."""
    fl = frame_size + ETH_HDR + SL_HDR
    p = p_frame(ber, fl)
    etx = 1.0 + copies * p / (1.0 - p ** copies) if p > 0 else 1.0
    return (frame_size - STREAM_HDR) / (fl * etx)


def write_policies(a, out, mode, channel, sets=()):
    emu = yaml.safe_load(open(os.path.join(POL, "chain-emulator-ber.yaml")))
    fw = emu["link"]["forward"]
    ch = CHANNELS[channel]
    if ch == "ge":
        fw["loss"] = dict(GE_LOSS)
        emu["link"]["seed"] = 8
    elif ch:
        fw["loss"] = {"model": "ber", "ber": ch}
    else:
        fw["loss"] = {"model": "none"}
    if getattr(a, "emu_seed", None) is not None:
        emu["link"]["seed"] = a.emu_seed  # another realisation of the channel
    if mode in ("cubic", "bbr"):
        hub = yaml.safe_load(open(os.path.join(POL, "chain-hub.yaml")))
        term = yaml.safe_load(open(os.path.join(POL, "chain-terminal.yaml")))
    elif mode == "satlink":
        hub = yaml.safe_load(open(os.path.join(POL, "chain-hub-satlink.yaml")))
        term = yaml.safe_load(open(os.path.join(POL, "chain-terminal-satlink.yaml")))
    else:
        hub = yaml.safe_load(open(os.path.join(HERE, "goodput_hub.yaml")))
        term = yaml.safe_load(open(os.path.join(HERE, "goodput_terminal.yaml")))
    for kv in list(a.set or []) + list(sets):
        # --set satlink.frame_size=750 / split.relay_connection_bytes=... (hub and terminal)
        k, _, v = kv.partition("=")
        sec, _, key = k.partition(".")
        for p in (hub, term):
            if sec in p:
                p[sec][key] = yaml.safe_load(v)
    for name, doc in (("emu", emu), ("hub", hub), ("term", term)):
        with open(os.path.join(out, name + ".yaml"), "w") as f:
            yaml.safe_dump(doc, f, sort_keys=False)
    return hub


def read_samples(path):
    recs = []
    try:
        for line in open(path):
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass
    except OSError:
        pass
    return recs


def sl_sum(d, name):
    """Sum every numeric leaf called name under a telemetry satlink dict (the
    hub's is per session)."""
    tot = 0
    if isinstance(d, dict):
        for k, v in d.items():
            if k == name and isinstance(v, (int, float)):
                tot += v
            elif isinstance(v, (dict, list)):
                tot += sl_sum(v, name)
    elif isinstance(d, list):
        for v in d:
            tot += sl_sum(v, name)
    return tot


def analyse_samples(recs, client_per_s, hub_base=0):
    """Per-second series: server bytes acked, hub rx relay / terminal tx relay
    occupancy (split), satlink counters. hub_base: the hub's DATA bytes sent
    before the measured download (--warmup), not in its server socket's count."""
    ser = []
    cum_client = 0
    for i, r in enumerate(recs):
        s = {"t": r["t"], "mono": r.get("mono")}
        srv = r.get("server") or []
        if srv:
            s["server_bytes_acked"] = sum(int(x.get("bytes_acked", 0)) for x in srv)
            s["server_cwnd"] = [int(x.get("cwnd", 0)) for x in srv]
            s["server_rtt"] = [x.get("rtt") for x in srv]
            s["server_rwnd_limited"] = [x.get("rwnd_limited") for x in srv]
            s["server_snd_wnd"] = [x.get("snd_wnd") for x in srv]
        hs, ts = r.get("hub_split"), r.get("term_split")
        if hs:
            s["hub_data_bytes_out"] = hs.get("data_bytes_out")
            for k in ("credit_stall", "sat_stall", "send_refused", "credit_in", "relay_clipped",
                      "anti_freeze"):
                s["hub_" + k] = hs.get(k)
            if "server_bytes_acked" in s and hs.get("data_bytes_out") is not None:
                s["hub_rx_relay"] = s["server_bytes_acked"] - (hs["data_bytes_out"] - hub_base)
        if ts:
            s["term_data_bytes_in"] = ts.get("data_bytes_in")
            for k in ("credit_out", "anti_freeze", "relay_clipped"):
                s["term_" + k] = ts.get(k)
        for side in ("hub", "term"):
            sl = r.get(side + "_satlink")
            if sl:
                for k in ("tx_frames", "tx_retx", "send_queue_full", "window_full", "loss_status",
                          "loss_timeout", "rx_held", "queue_held", "pacer_held", "tx_outstanding",
                          "pkts_delivered"):
                    s["%s_sl_%s" % (side, k)] = sl_sum(sl, k)
        ser.append(s)
    return ser


def one_run(a, tag, mode, channel, conns=1, seconds=None, size=0, port=SERVER_PORT,
            port2=0, cc=None, light=None, sample_s=1.0, sets=()):
    """One chain, one client: `conns` downloads (size 0: for `seconds`) and,
    with light (the hol subcommand's client arguments), the light stream on
    a second server at LIGHT_PORT."""
    out = os.path.join(a.workdir, tag)
    os.makedirs(out, exist_ok=True)
    hub = write_policies(a, out, mode, channel, sets)
    secs = seconds if seconds is not None else a.seconds
    cc = cc or ("bbr" if mode == "bbr" else "cubic")
    cargs = "--port %d --port2 %d --conns %d --seconds %g --size %s" % (
        port, port2, conns, secs, size)
    if light:
        cargs += " --rr-port %d %s" % (LIGHT_PORT, light)
    env = dict(os.environ, B_E2E=E2E, B_SATGW=a.satgw, B_OUT=out, B_SELF=os.path.abspath(__file__),
               B_PORT=str(port), B_PORT2=str(LIGHT_PORT if light else port2), B_CC=cc,
               B_CLIENT_ARGS=cargs, B_SAMPLE_S=str(sample_s),
               B_READY_WAIT=str(a.ready_wait), B_WARMUP_S=str(getattr(a, "warmup", 0) or 0),
               TB_BUDGET=str(int(secs) + int(getattr(a, "warmup", 0) or 0) + 200 +
                             3 * a.ready_wait))
    with open(os.path.join(out, "driver.sh"), "w") as f:
        f.write(DRIVER)
    load0 = os.getloadavg()
    t0 = time.monotonic()
    attempts = 0
    while True:
        # A box that does not answer its telemetry within testbed.sh's 20 s (a
        # loaded machine) fails the run before the download: start it again.
        attempts += 1
        with open(os.path.join(out, "driver.log"), "w") as lf:
            try:
                rc = subprocess.call(["bash", os.path.join(out, "driver.sh")], env=env,
                                     stdout=lf, stderr=subprocess.STDOUT,
                                     timeout=secs + (getattr(a, "warmup", 0) or 0) + 240 +
                                     3 * a.ready_wait)
            except subprocess.TimeoutExpired:
                rc = -1
        if os.path.exists(os.path.join(out, "client.json")) or attempts >= a.attempts:
            break
    r = {"tag": tag, "mode": mode, "channel": channel, "cc": cc, "seconds": secs,
         "rate_bps": a.rate, "driver_rc": rc, "attempts": attempts, "wall_s": round(time.monotonic() - t0, 1),
         "loadavg_before": [round(x, 2) for x in load0],
         "loadavg_after": [round(x, 2) for x in os.getloadavg()], "dir": out,
         "commit": a.commit}
    if getattr(a, "emu_seed", None) is not None:
        r["emu_seed"] = a.emu_seed
    if getattr(a, "warmup", 0):
        r["warmup_s"] = a.warmup
        try:
            w = json.load(open(os.path.join(out, "warmup.json")))
            r["warmup_bytes"] = sum(c["bytes"] for c in w["conns"] if c)
        except (OSError, ValueError, KeyError, TypeError):
            r["warmup_bytes"] = None
    if mode == "split" or mode == "satlink":
        r["frame_size"] = hub["satlink"].get("frame_size", 1400)
        r["retx_copies"] = hub["satlink"].get("retx_copies", 2)
        r["retx_copies_when"] = hub["satlink"].get("retx_copies_when", "idle")
        r["frame_size_adapt"] = hub["satlink"].get("frame_size_adapt", True)
    if mode == "split":
        r["relay_connection_bytes"] = hub["split"]["relay_connection_bytes"]
    try:
        rcs = dict(x.split("=") for x in open(os.path.join(out, "rc.txt")).read().split())
        r["exit_codes"] = {k: int(v) for k, v in rcs.items()}
    except (OSError, ValueError):
        r["exit_codes"] = None
    try:
        cl = json.load(open(os.path.join(out, "client.json")))
    except (OSError, ValueError) as e:
        r["error"] = "no client result (%s); see %s/driver.log" % (e, out)
        return r
    r["conns"] = cl["conns"]
    if cl.get("light") is not None:
        r["light"] = cl["light"]
    errs = [c["error"] for c in cl["conns"] if c and c.get("error")]
    if errs:
        r["error"] = "; ".join(errs)
    tot = sum(c["bytes"] for c in cl["conns"] if c)
    r["bytes"] = tot
    if str(size) == "0":
        r["goodput_bps"] = tot * 8 / secs
        r["goodput_fraction"] = r["goodput_bps"] / a.rate
        r["per_conn_fraction"] = [c["bytes"] * 8 / secs / a.rate for c in cl["conns"] if c]
    recs = read_samples(os.path.join(out, "samples.jsonl"))
    hub_base = 0
    try:
        hub_base = json.load(open(os.path.join(out, "warmup-hub-split.json")))["data_bytes_out"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    r["series"] = analyse_samples(recs, None, hub_base)
    try:
        st = {b: json.load(open(os.path.join(out, "stats-%s.json" % b))) for b in ("hub", "term", "emu")}
        link = st["emu"]["link"]["forward"]
        r["link_forward"] = {k: link.get(k) for k in ("offered_packets", "delivered_packets",
                                                      "dropped_loss", "dropped_queue")}
        if mode in ("split", "satlink"):
            # the hub's satlink session: what its sender did with the frame size
            ses = (st["hub"].get("satlink") or {}).get("sessions") or [{}]
            r["satlink_hub"] = {k: ses[0].get(k) for k in (
                "frames_tx_data", "tx_frames", "tx_retx", "loss_status", "loss_timeout",
                "retx_copies_saved", "frame_size_now", "frame_size_changes",
                "frame_size_probes", "frame_size_decisions", "ber_est_ppb")}
        if mode == "split":
            r["split_hub"] = st["hub"].get("split", {}).get("counters", st["hub"].get("split"))
            r["split_term"] = st["term"].get("split", {}).get("counters", st["term"].get("split"))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if r["exit_codes"] and any(v != 0 for v in r["exit_codes"].values()):
        r["warning"] = "a box exited non-zero: %s" % r["exit_codes"]
    return r


def fmt(x):
    return "-" if x is None else "%.3f" % x


def bounds_for(channel, frame_size, copies):
    ch = CHANNELS[channel]
    if ch == "ge":
        # bad 1 s of every 5 s on average: the line is usable 4/5 of the time
        return {"ideal": 0.8 * split_bound(0, frame_size, 1), "k": 0.8 * split_bound(0, frame_size, 1)}
    # over all frame sizes up to frame_size (what frame_size_adapt can reach): the channel's bound
    best = max(split_bound(ch or 0, fs, 1) for fs in range(64, frame_size + 1))
    return {"ideal": split_bound(ch or 0, frame_size, 1), "k": split_bound(ch or 0, frame_size, copies),
            "any_size": best}


def cmd_run(a):
    modes = a.modes.split(",")
    chans = a.channels.split(",")
    for m in modes:
        if m not in MODES:
            die("unknown mode %s" % m)
    for c in chans:
        if c not in CHANNELS:
            die("unknown channel %s" % c)
    runs = []
    if a.resume and a.json and os.path.exists(a.json):
        # keep the runs that gave a result; run again what failed or is missing
        runs = [r for r in json.load(open(a.json))["runs"] if "goodput_fraction" in r]
    done = {r["tag"] for r in runs}
    t0 = time.monotonic()
    print("split goodput: modes %s, channels %s, %g s each, %d rep(s); work dir %s" % (
        modes, chans, a.seconds, a.reps, a.workdir), flush=True)
    for rep in range(a.reps):
        for ch in chans:
            for m in modes:
                tag = "%s-%s-%d" % (ch, m, rep)
                if tag in done:
                    continue
                r = one_run(a, tag, m, ch)
                r["rep"] = rep
                runs.append(r)
                extra = ""
                if r.get("conns") and r["conns"][0]:
                    c = r["conns"][0]
                    extra = " first byte %.2f s, longest gap %.2f s" % (
                        c.get("first_byte_s") or -1, c.get("max_gap_s") or -1)
                print("  %-22s goodput %s of the rate%s, load %s  [%.0f s]%s%s" % (
                    tag, fmt(r.get("goodput_fraction")), extra, r["loadavg_before"][0],
                    r["wall_s"], ("  ERROR " + r["error"]) if "error" in r else "",
                    ("  " + r["warning"]) if "warning" in r else ""), flush=True)
                save(a, runs, t0)
    save(a, runs, t0, final=True)


def save(a, runs, t0, final=False):
    res = {"argv": shlex.join(sys.argv), "satgw": a.satgw, "commit": a.commit, "rate_bps": a.rate,
           "delay_ms": 270, "return_rate_bps": 2e6, "seconds_total": round(time.monotonic() - t0),
           "workdir": a.workdir, "loadavg_end": os.getloadavg(), "nproc": os.cpu_count(),
           "runs": runs}
    fs = next((r.get("frame_size") for r in runs if r.get("frame_size")), 1400)
    k = next((r.get("retx_copies") for r in runs if r.get("retx_copies")), 2)
    when = next((r.get("retx_copies_when") for r in runs if r.get("retx_copies_when")), "idle")
    # retx_copies_when idle (the default): a bulk transfer keeps the line busy, so each
    # repair goes once and the k-copy bound is the ideal one
    k_bulk = 1 if when == "idle" else k
    res["bounds"] = {ch: bounds_for(ch, fs, k_bulk) for ch in CHANNELS}
    res["bounds_note"] = ("goodput / rate of an erasure ARQ carrying DATA messages of frame_size "
                          "%d (payload %d) with 36 bytes of Ethernet + satlink header per frame; "
                          "ideal: each loss resent once; k: %d copies per loss (retx_copies %d, "
                          "retx_copies_when %s); any_size: the ideal one at the best frame "
                          "size up to frame_size (frame_size_adapt's reach); ge: 0.8 of the "
                          "lossless bound (bad state 1 s of 5 s on average, every frame lost)"
                          % (fs, fs - STREAM_HDR, k_bulk, k, when))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    if final:
        print(markdown(res))
        if a.plot:
            plot(res, a.plot)


def markdown(res):
    chans = []
    modes = []
    for r in res["runs"]:
        if r["channel"] not in chans:
            chans.append(r["channel"])
        if r["mode"] not in modes:
            modes.append(r["mode"])
    out = ["| channel | " + " | ".join(modes) + " | bound (ideal ARQ / k copies) |",
           "|---|" + "---|" * (len(modes) + 1)]
    for ch in chans:
        cells = []
        for m in modes:
            xs = [r.get("goodput_fraction") for r in res["runs"]
                  if r["channel"] == ch and r["mode"] == m]
            cells.append(", ".join(fmt(x) for x in xs) or "-")
        b = res["bounds"][ch]
        out.append("| %s | %s | %s / %s |" % (ch, " | ".join(cells), fmt(b["ideal"]), fmt(b["k"])))
    return "\n".join(out)


def plot(res, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    chans = []
    modes = []
    runs = [r for r in res["runs"] if r.get("goodput_fraction") is not None]
    order = list(CHANNELS)
    for r in sorted(runs, key=lambda r: order.index(r["channel"])):
        if r["channel"] not in chans:
            chans.append(r["channel"])
    for m in MODES:
        if any(r["mode"] == m for r in runs):
            modes.append(m)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [1.1, 1]})
    w = 0.8 / max(1, len(modes))
    labels = {"cubic": "CUBIC end to end", "bbr": "BBR end to end",
              "satlink": "CUBIC over satlink", "split": "split + satlink"}
    for i, m in enumerate(modes):
        xs_, ys = [], []
        for j, ch in enumerate(chans):
            xs = [r["goodput_fraction"] for r in runs if r["channel"] == ch and r["mode"] == m]
            if xs:  # a point not run has no bar
                xs_.append(j + (i - (len(modes) - 1) / 2) * w)
                ys.append(sum(xs) / len(xs))
        bars = ax.bar(xs_, ys, w, label=labels.get(m, m), color="C%d" % MODES.index(m))
        for b, y in zip(bars, ys):
            ax.text(b.get_x() + b.get_width() / 2, y + 0.01, "%.2f" % y, ha="center", fontsize=7)
    for j, ch in enumerate(chans):
        bd = res["bounds"][ch]["ideal"]
        ax.plot([j - 0.45, j + 0.45], [bd, bd], "k--", lw=1)
    ax.axhline(0.9, color="grey", lw=0.8, ls=":")
    ax.set_xticks(range(len(chans)))
    ax.set_xticklabels(chans)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("goodput / 20 Mbit/s (60 s from the SYN)")
    ax.set_title("one download, emulated GEO (541 ms RTT); dashed: split bound (ideal ARQ)")
    ax.legend(fontsize=8, loc="upper right")
    for r in runs:
        if r["mode"] != "split" or not r.get("conns") or not r["conns"][0]:
            continue
        ps = r["conns"][0].get("per_s") or []
        ax2.plot(range(len(ps)), [x * 8 / res["rate_bps"] for x in ps], lw=1,
                 label="split, " + r["channel"])
    ax2.set_xlabel("seconds from the SYN")
    ax2.set_ylabel("goodput / rate per second")
    ax2.set_ylim(0, 1.35)
    ax2.set_title("split: per second")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def cmd_objects(a):
    """One chain per variant; the client fetches the objects one after the
    other, each on its own connection (no metrics kept between them)."""
    runs = []
    t0 = time.monotonic()
    variants = [("split-e2e", "split", SERVER_PORT), ("split-spoofed", "split", SPOOF_PORT),
                ("satlink", "satlink", SERVER_PORT), ("cubic", "cubic", SERVER_PORT)]
    sizes = [int(x) for x in a.sizes.split(",")]
    for rep in range(a.reps):
        for name, mode, port in variants:
            tag = "obj-%s-%s-%d" % (a.channel, name, rep)
            r = one_run(a, tag, mode, a.channel, seconds=120, size=a.sizes, port=port)
            r["variant"], r["rep"] = name, rep
            r["objects"] = []
            for c in r.get("conns") or []:
                if not c:
                    continue
                o = {"size": c.get("size"), "connect_s": c.get("connect_s"),
                     "first_byte_s": c.get("first_byte_s"), "error": c.get("error"),
                     "last_byte_s": c.get("seconds") if c.get("bytes") == c.get("size") else None}
                r["objects"].append(o)
                print("  %-28s %9d B: connect %s first byte %s last byte %s  load %s%s" % (
                    tag, o["size"], fmt(o["connect_s"]), fmt(o["first_byte_s"]),
                    fmt(o["last_byte_s"]), r["loadavg_before"][0],
                    ("  ERROR " + o["error"]) if o["error"] else ""), flush=True)
            runs.append(r)
            save(a, runs, t0)
    save(a, runs, t0)


def cmd_concurrent(a):
    runs = []
    t0 = time.monotonic()
    for rep in range(a.reps):
        for n in (1, a.conns):
            tag = "conc-%s-%d-%d" % (a.channel, n, rep)
            r = one_run(a, tag, "split", a.channel, conns=n)
            r["n_conns"], r["rep"] = n, rep
            runs.append(r)
            print("  %-26s total %s per stream %s longest gaps %s stalls %s  load %s%s" % (
                tag, fmt(r.get("goodput_fraction")),
                ", ".join(fmt(x) for x in r.get("per_conn_fraction") or []),
                ", ".join("%.2f" % (c.get("max_gap_s") or 0) for c in r.get("conns") or [] if c),
                ", ".join("%d/%.1fs" % (c.get("stalls", 0), c.get("stall_s", 0))
                          for c in r.get("conns") or [] if c),
                r["loadavg_before"][0], ("  ERROR " + r["error"]) if "error" in r else ""),
                flush=True)
            save(a, runs, t0)
    save(a, runs, t0)


# ------------------------------------------------------------ hol: a light stream next to a bulk one

HOL_CASES = {
    # case: (mode, bulk downloads next to the light stream, policy settings of the case)
    "alone": ("split", 0, []),     # the light stream alone on the session (split)
    "bulk": ("split", 1, []),      # next to one split bulk download: both on one satlink session
    # the same with satlink's feed queue (FIFO for all of a session's streams) at 64
    # packets (37 ms of the line) instead of 1024 (0.6 s): what is left is the sequence space
    "bulk-sq64": ("split", 1, ["satlink.send_queue=64"]),
    "nosplit": ("satlink", 1, []),  # no split: both TCP connections over satlink, CUBIC bulk
}
HOL_X_S = 0.1               # "above 1 RTT + X": X = 100 ms


def quantile(xs, q):
    """Nearest rank (no interpolation: p99 of 300 is the 297th)."""
    if not xs:
        return None
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, int(math.ceil(q * len(xs))) - 1))]


def hol_exchanges(r):
    """The run's exchanges with what satlink did during each: [send time from
    the first exchange, response time, hub retransmissions (forward link:
    the direction the responses take) between the samples around it, the
    terminal's largest rx_held (frames waiting behind a gap) in them]."""
    ex = (r.get("light") or {}).get("exchanges") or []
    ser = [x for x in r.get("series") or [] if x.get("mono") is not None]
    out = []
    t_first = ex[0][0] if ex else 0
    for ts, rt in ex:
        before = [k for k, x in enumerate(ser) if x["mono"] <= ts]
        i = before[-1] if before else None
        j = next((k for k, x in enumerate(ser) if x["mono"] >= ts + rt), None)
        rep = held = None
        if i is not None and j is not None:
            a, b = ser[i], ser[j]
            if a.get("hub_sl_tx_retx") is not None and b.get("hub_sl_tx_retx") is not None:
                rep = b["hub_sl_tx_retx"] - a["hub_sl_tx_retx"]
            hs = [x.get("term_sl_rx_held") for x in ser[i:j + 1] if x.get("term_sl_rx_held") is not None]
            held = max(hs) if hs else None
        out.append([round(ts - t_first, 3), rt, rep, held])
    return out


def hol_queues(r, t_from=6.0, t_to=59.0):
    """Little's law on the sampler's gauges while the light stream runs:
    the hub's feed queue (satlink's send queue plus the pacer's, FIFO for
    every stream of the session) over the hub's rate of first
    transmissions is the mean wait of a packet before its first
    transmission; the terminal's rx_held (frames in the receive ring:
    waiting behind a gap, in-order frames are delivered at once) over its
    rate (the hub's first transmissions, each delivered once) is the mean time a frame waits behind the session's
    gaps, i.e. the head-of-line cost a frame of any stream pays."""
    ser = [x for x in r.get("series") or [] if t_from <= x["t"] <= t_to
           and x.get("hub_sl_tx_frames") is not None and x.get("term_sl_rx_held") is not None]
    if len(ser) < 4 or ser[-1]["t"] <= ser[0]["t"]:
        return None
    dt = ser[-1]["t"] - ser[0]["t"]
    tx = (ser[-1]["hub_sl_tx_frames"] - ser[0]["hub_sl_tx_frames"]) / dt
    q = sum(x["hub_sl_queue_held"] + x["hub_sl_pacer_held"] for x in ser) / len(ser)
    h = sum(x["term_sl_rx_held"] for x in ser) / len(ser)
    return {"hub_new_frames_per_s": round(tx, 1),
            "hub_queue_mean": round(q, 1), "term_rx_held_mean": round(h, 1),
            "feed_wait_s": round(q / tx, 4) if tx > 0 else None,
            "hold_s": round(h / tx, 4) if tx > 0 else None}


def hol_stats(rts):
    n = len(rts)
    if not n:
        return {"n": 0}
    return {"n": n, "median": quantile(rts, 0.5), "p90": quantile(rts, 0.9),
            "p99": quantile(rts, 0.99), "max": max(rts), "mean": sum(rts) / n,
            "min": min(rts),
            "above_rtt_x": sum(1 for x in rts if x > RTT_S + HOL_X_S) / n,
            "above_2rtt_x": sum(1 for x in rts if x > 2 * RTT_S + HOL_X_S) / n}


def hol_summary(runs):
    """Pooled over repetitions, per (channel, case)."""
    summ = {}
    for r in runs:
        k = "%s/%s" % (r["channel"], r["case"])
        e = summ.setdefault(k, {"channel": r["channel"], "case": r["case"], "rts": [], "rep": [],
                                "runs": 0, "bulk": [], "retx_per_s": [], "load": []})
        ex = r.get("exchanges") or []
        e["rts"] += [x[1] for x in ex]
        e["rep"] += [(x[1], x[2]) for x in ex if x[2] is not None]
        e["runs"] += 1
        e["load"].append(r["loadavg_before"][0])
        if r.get("goodput_fraction") is not None and r.get("n_bulk"):
            e["bulk"].append(r["goodput_fraction"])
        e.setdefault("queues", []).append(hol_queues(r))
        ser = [x for x in r.get("series") or [] if x.get("hub_sl_tx_retx") is not None]
        if len(ser) > 1 and ser[-1]["t"] > ser[0]["t"]:
            e["retx_per_s"].append((ser[-1]["hub_sl_tx_retx"] - ser[0]["hub_sl_tx_retx"]) /
                                   (ser[-1]["t"] - ser[0]["t"]))
    out = {}
    for k, e in summ.items():
        st = hol_stats(e["rts"])
        st.update({"channel": e["channel"], "case": e["case"], "runs": e["runs"],
                   "bulk_goodput": e["bulk"], "hub_retx_per_s": [round(x, 1) for x in e["retx_per_s"]],
                   "load": e["load"]})
        qs = [q for q in e.get("queues") or [] if q]
        for k2 in ("feed_wait_s", "hold_s"):
            xs = [q[k2] for q in qs if q.get(k2) is not None]
            st[k2] = round(sum(xs) / len(xs), 4) if xs else None
        if e["rep"]:
            w = [rt for rt, n in e["rep"] if n > 0]
            wo = [rt for rt, n in e["rep"] if n == 0]
            st["with_repairs"] = {"share": len(w) / len(e["rep"]), "median": quantile(w, 0.5),
                                  "p90": quantile(w, 0.9), "n": len(w)}
            st["without_repairs"] = {"median": quantile(wo, 0.5), "p90": quantile(wo, 0.9),
                                     "max": max(wo) if wo else None, "n": len(wo)}
        out[k] = st
    return out


def hol_markdown(summ):
    rows = ["| BER | case | runs | n | median | p90 | p99 | max | > RTT+%d ms | > 2 RTT+%d ms | "
            "exchanges with hub repairs (median with / without) | bulk goodput | hub retx/s | "
            "hub feed queue wait (Little) | terminal hold behind gaps (Little) |"
            % (HOL_X_S * 1000, HOL_X_S * 1000),
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in sorted(summ, key=lambda k: (list(CHANNELS).index(summ[k]["channel"]),
                                         list(HOL_CASES).index(summ[k]["case"]))):
        st = summ[k]
        if not st["n"]:
            rows.append("| %s | %s | %d | 0 | | | | | | | | | | | |" % (st["channel"], st["case"],
                                                                        st["runs"]))
            continue
        wr = st.get("with_repairs")
        rows.append("| %s | %s | %d | %d | %.3f | %.3f | %.3f | %.3f | %.1f%% | %.1f%% | %s | %s | %s "
                    "| %s | %s |" % (
            st["channel"], st["case"], st["runs"], st["n"], st["median"], st["p90"], st["p99"],
            st["max"], 100 * st["above_rtt_x"], 100 * st["above_2rtt_x"],
            ("%.0f%% (%s / %s)" % (100 * wr["share"], fmt(wr["median"]),
                                  fmt(st["without_repairs"]["median"]))) if wr else "-",
            ", ".join("%.2f" % x for x in st["bulk_goodput"]) or "-",
            ", ".join("%.0f" % x for x in st["hub_retx_per_s"]) or "-",
            fmt(st.get("feed_wait_s")), fmt(st.get("hold_s"))))
    return "\n".join(rows)


def hol_plot(res, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    chans = [c for c in CHANNELS if any(r["channel"] == c for r in res["runs"])]
    fig, axs = plt.subplots(1, len(chans), figsize=(6.5 * len(chans), 4.6), squeeze=False)
    labels = {"alone": "light stream alone (split)",
              "bulk": "next to a split bulk download",
              "bulk-sq64": "next to a split bulk download, send_queue 64",
              "nosplit": "no split: next to CUBIC bulk, both over satlink"}
    xmax = 0
    for ax, ch in zip(axs[0], chans):
        for i, case in enumerate(HOL_CASES):
            rts = sorted(x[1] for r in res["runs"] if r["channel"] == ch and r["case"] == case
                         for x in r.get("exchanges") or [])
            if not rts:
                continue
            xmax = max(xmax, rts[-1])
            ys = [(k + 1) / len(rts) for k in range(len(rts))]
            ax.step(rts, ys, where="post", color="C%d" % i,
                    label="%s (n %d, p99 %.2f s)" % (labels[case], len(rts), quantile(rts, 0.99)))
        for m in (1, 2, 3):
            ax.axvline(m * RTT_S, color="grey", lw=0.7, ls=":")
        ax.set_title("BER %s: 100 B request -> 2 KB response" % ch[3:])
        ax.set_xlabel("response time, s (dotted: 1, 2, 3 x 541 ms RTT)")
        ax.set_ylabel("CDF of exchanges")
        ax.legend(fontsize=7, loc="lower right")
        ax.grid(alpha=0.3)
    for ax in axs[0]:
        ax.set_xlim(0.4, max(2.0, xmax * 1.05))
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def hol_save(a, runs, t0, final=False):
    res = {"argv": shlex.join(sys.argv), "satgw": a.satgw, "commit": a.commit, "rate_bps": a.rate,
           "delay_ms": 270, "return_rate_bps": 2e6, "rtt_s": RTT_S, "x_s": HOL_X_S,
           "seconds_total": round(time.monotonic() - t0), "workdir": a.workdir,
           "loadavg_end": os.getloadavg(), "nproc": os.cpu_count(),
           "light": {"req": a.rr_req, "resp": a.rr_resp, "interval_s": a.rr_interval,
                     "delay_s": a.rr_delay},
           "exchange_fields": ["send time from the first exchange (s)", "response time (s)",
                               "hub satlink retransmissions between the samples around it",
                               "terminal satlink rx_held, largest in those samples"],
           "runs": runs}
    res["summary"] = hol_summary(runs)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    if final:
        print(hol_markdown(res["summary"]))
        if a.plot:
            hol_plot(res, a.plot)


def cmd_hol(a):
    """Per repetition, channel and case one chain (fresh boxes): the light
    stream for --seconds (from --rr-delay on), next to zero or one bulk
    download of --seconds."""
    cases = a.cases.split(",")
    chans = a.channels.split(",")
    for c in cases:
        if c not in HOL_CASES:
            die("unknown case %s" % c)
    for c in chans:
        if c not in CHANNELS:
            die("unknown channel %s" % c)
    runs = []
    if a.resume and a.json and os.path.exists(a.json):
        runs = [r for r in json.load(open(a.json))["runs"] if r.get("exchanges")]
    done = {r["tag"] for r in runs}
    t0 = time.monotonic()
    print("hol: cases %s, channels %s, %g s each, %d rep(s); work dir %s" % (
        cases, chans, a.seconds, a.reps, a.workdir), flush=True)
    for rep in range(a.reps):
        for ch in chans:
            for case in cases:
                tag = "hol-%s-%s-%d" % (ch, case, rep)
                if tag in done:
                    continue
                if a.stop_at and time.time() > a.stop_at:
                    print("  %s: not started (--stop-at)" % tag, flush=True)
                    continue
                mode, nb, sets = HOL_CASES[case]
                light = "--rr-req %d --rr-resp %d --rr-interval %g --rr-delay %g --rr-seed %d" % (
                    a.rr_req, a.rr_resp, a.rr_interval, a.rr_delay, 1000 + rep)
                r = one_run(a, tag, mode, ch, conns=nb, light=light, sample_s=a.sample_s, sets=sets)
                r.update({"case": case, "rep": rep, "n_bulk": nb, "sets": sets,
                          "harness_retries": r["attempts"] - 1})
                r["exchanges"] = hol_exchanges(r)
                # the per-exchange list replaces the client's raw one (same times)
                if r.get("light"):
                    r["light"] = {k: v for k, v in r["light"].items() if k != "exchanges"}
                runs.append(r)
                st = hol_stats([x[1] for x in r["exchanges"]])
                err = r.get("error") or (r.get("light") or {}).get("error")
                print("  %-22s n %3d median %s p90 %s p99 %s max %s >RTT+X %s  bulk %s  "
                      "load %s retries %d [%.0f s]%s" % (
                          tag, st["n"], fmt(st.get("median")), fmt(st.get("p90")),
                          fmt(st.get("p99")), fmt(st.get("max")), fmt(st.get("above_rtt_x")),
                          fmt(r.get("goodput_fraction")) if nb else "-", r["loadavg_before"][0],
                          r["harness_retries"], r["wall_s"], ("  ERROR " + err) if err else ""),
                      flush=True)
                hol_save(a, runs, t0)
    hol_save(a, runs, t0, final=True)


def light_args(p):
    p.add_argument("--rr-req", type=int, default=100, help="light stream: request bytes (100)")
    p.add_argument("--rr-resp", type=int, default=2000, help="light stream: response bytes (2000)")
    p.add_argument("--rr-interval", type=float, default=0.5,
                   help="light stream: mean seconds between requests (0.5, +-20%%)")
    p.add_argument("--rr-delay", type=float, default=5.0,
                   help="light stream: seconds after the bulk download's connect() (5)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "objects", "concurrent", "hol"):
        p = sub.add_parser(name)
        p.add_argument("--satgw", required=True)
        p.add_argument("--rate", type=float, default=20e6)
        p.add_argument("--seconds", type=float, default=60)
        p.add_argument("--reps", type=int, default=1)
        p.add_argument("--ready-wait", type=int, default=120,
                       help="seconds a box may take to answer its telemetry (120)")
        p.add_argument("--attempts", type=int, default=3,
                       help="starts of a run whose boxes did not come up (4)")
        p.add_argument("--workdir")
        p.add_argument("--json")
        p.add_argument("--plot")
        p.add_argument("--emu-seed", type=int,
                       help="the emulator's link seed (default: the policy's; ge: 8)")
        p.add_argument("--set", action="append",
                       help="SECTION.KEY=VALUE in the hub and terminal policies (every mode "
                       "whose policy has SECTION), e.g. satlink.frame_size=750")
        if name == "run":
            p.add_argument("--resume", action="store_true",
                           help="keep the runs of --json that have a result, run the others")
            p.add_argument("--modes", default=",".join(MODES))
            p.add_argument("--channels", default="ber0,ber1e-5,ber1e-6,ge")
            p.add_argument("--warmup", type=float, default=0,
                           help="an unmeasured download of this many seconds first (0: none)")
        if name == "objects":
            p.add_argument("--sizes", default="100000,1000000,10000000")
            p.add_argument("--channel", default="ber0")
        if name == "concurrent":
            p.add_argument("--conns", type=int, default=4)
            p.add_argument("--channel", default="ber1e-5")
        if name == "hol":
            p.add_argument("--cases", default=",".join(HOL_CASES))
            p.add_argument("--channels", default="ber0,ber1e-5")
            p.add_argument("--resume", action="store_true",
                           help="keep the runs of --json that have exchanges, run the others")
            p.add_argument("--sample-s", type=float, default=0.5,
                           help="the sampler's period (0.5 s)")
            p.add_argument("--stop-at", type=float, default=0,
                           help="Unix time after which no new run starts")
            light_args(p)
    p = sub.add_parser("plot")
    p.add_argument("json_in")
    p.add_argument("png")
    p = sub.add_parser("hol-plot")
    p.add_argument("json_in")
    p.add_argument("png")
    p = sub.add_parser("serve")
    p.add_argument("--bind", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--cc", default="cubic")
    p = sub.add_parser("client")
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--port2", type=int, default=0)
    p.add_argument("--conns", type=int, default=1)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--size", default="0", help="bytes per download (0: for --seconds); "
                   "a comma-separated list: one connection after the other")
    p.add_argument("--cc", default="cubic")
    p.add_argument("--out", required=True)
    p.add_argument("--rr-port", type=int, default=0, help="the light stream's server (0: none)")
    light_args(p)
    p.add_argument("--rr-seed", type=int, default=1)
    p = sub.add_parser("sample")
    p.add_argument("--hub", required=True)
    p.add_argument("--term", required=True)
    p.add_argument("--ns-fh", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--interval", type=float, default=1.0)
    a = ap.parse_args()
    if a.cmd == "serve":
        return serve(a)
    if a.cmd == "client":
        return client(a)
    if a.cmd == "sample":
        return sample(a)
    if a.cmd == "plot":
        plot(json.load(open(a.json_in)), a.png)
        return 0
    if a.cmd == "hol-plot":
        res = json.load(open(a.json_in))
        print(hol_markdown(hol_summary(res["runs"])))
        hol_plot(res, a.png)
        return 0
    if os.getuid() != 0:
        die("needs root (network namespaces)")
    if not os.access(a.satgw, os.X_OK):
        die("no satgw binary at %s" % a.satgw)
    a.satgw = os.path.abspath(a.satgw)
    a.commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    a.workdir = a.workdir or tempfile.mkdtemp(prefix="satgw-sg-goodput-")
    os.makedirs(a.workdir, exist_ok=True)
    {"run": cmd_run, "objects": cmd_objects, "concurrent": cmd_concurrent, "hol": cmd_hol}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
