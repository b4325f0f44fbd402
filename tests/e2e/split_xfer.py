#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Transfers for the TCP split e2e test (test_split_chain.sh): a server on the
terrestrial side and a client behind the terminal, the client opening every
connection (downloads and uploads both), several at once.

  split_xfer.py serve --bind ADDR --port P --file F --log LOG [--ready R]
      listen; per connection (a thread each) read one request line:
        GET        send F, half-close, wait for the client's close
        PUT        read to EOF, answer "<bytes> <sha256>\\n", close
        ABORT N    send F's first N bytes, then reset (SO_LINGER 0): a server
                   that disappears mid-transfer
      and append one JSON line to LOG: {"peer": [addr, port], "op", "bytes",
      "sha256", "error"}. Runs until killed.
  split_xfer.py client --host ADDR --port P --file F --op get|put|abort
      [--conns N] [--abort-at N] [--result R] [--timeout S]
      N connections at once (threads), each: connect, request, transfer;
      result {"conns": [{"local": [addr, port], "bytes", "sha256", "ok",
      "error", "seconds", "connect_s"}], "want_sha256"}. ok: get/put: the whole
      file, sha256 equal; abort: a reset (ECONNRESET) after a correct prefix of
      the file. Exit 0 when every connection is ok.
  split_xfer.py refused --host ADDR --port P [--timeout S]
      one connect to a port nothing listens on; exit 0 when it fails with
      ECONNREFUSED (prints the errno name either way).
  split_xfer.py ss-peers --port P
      the remote (address, port) of every TCP socket on local port P, from
      `ss` (the server's view), as JSON lines: run where the server runs.

The family follows the address (IPv6 when it has a ':'). Congestion control
is the kernel's default of the namespace unless --cc (cubic by default, as
xfer.py does).
"""
import argparse
import errno
import hashlib
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time

CHUNK = 65536


def fam(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def set_cc(sock, cc):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def read_line(c, limit=64):
    b = b""
    while not b.endswith(b"\n"):
        x = c.recv(1)
        if not x:
            break
        b += x
        if len(b) > limit:
            break
    return b.decode(errors="replace").strip()


def serve(a):
    data = open(a.file, "rb").read()
    lock = threading.Lock()
    log = open(a.log, "a")

    def one(c, peer):
        rec = {"peer": list(peer[:2]), "op": "", "bytes": 0, "sha256": "", "error": ""}
        try:
            c.settimeout(a.timeout)
            req = read_line(c)
            rec["op"] = req
            if req == "GET":
                c.sendall(data)
                rec["bytes"] = len(data)
                c.shutdown(socket.SHUT_WR)
                while c.recv(4096):
                    pass
            elif req == "PUT":
                h = hashlib.sha256()
                n = 0
                while True:
                    b = c.recv(CHUNK)
                    if not b:
                        break
                    h.update(b)
                    n += len(b)
                rec["bytes"], rec["sha256"] = n, h.hexdigest()
                c.sendall(("%d %s\n" % (n, rec["sha256"])).encode())
            elif req.startswith("ABORT "):
                n = int(req.split()[1])
                c.sendall(data[:n])
                rec["bytes"] = n
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                rec["error"] = "bad request"
        except OSError as e:
            rec["error"] = errno.errorcode.get(e.errno or 0, str(e))
        finally:
            c.close()
            with lock:
                log.write(json.dumps(rec) + "\n")
                log.flush()

    s = socket.socket(fam(a.bind), socket.SOCK_STREAM)
    set_cc(s, a.cc)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a.bind, a.port))
    s.listen(512)
    if a.ready:
        open(a.ready, "w").close()
    while True:
        c, peer = s.accept()
        threading.Thread(target=one, args=(c, peer), daemon=True).start()


def client(a):
    data = open(a.file, "rb").read()
    want = hashlib.sha256(data).hexdigest()
    res = [None] * a.conns

    def one(i):
        r = {"local": None, "bytes": 0, "sha256": "", "ok": False, "error": "",
             "seconds": 0.0, "connect_s": 0.0}
        t0 = time.monotonic()
        s = socket.socket(fam(a.host), socket.SOCK_STREAM)
        try:
            set_cc(s, a.cc)
            s.settimeout(a.timeout)
            s.connect((a.host, a.port))
            r["connect_s"] = round(time.monotonic() - t0, 3)
            r["local"] = list(s.getsockname()[:2])
            if a.op == "get" or a.op == "abort":
                s.sendall(b"GET\n" if a.op == "get" else b"ABORT %d\n" % a.abort_at)
                h = hashlib.sha256()
                got = bytearray()
                try:
                    while True:
                        b = s.recv(CHUNK)
                        if not b:
                            break
                        got += b
                except ConnectionResetError:
                    r["error"] = "ECONNRESET"
                h.update(got)
                r["bytes"], r["sha256"] = len(got), h.hexdigest()
                if a.op == "get":
                    r["ok"] = r["error"] == "" and r["sha256"] == want
                else:
                    # A reset, and what came before it is the file's beginning.
                    r["ok"] = r["error"] == "ECONNRESET" and bytes(got) == data[:len(got)]
            else:
                s.sendall(b"PUT\n")
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
                ans = read_line(s, 128).split()
                r["bytes"] = int(ans[0]) if ans else 0
                r["sha256"] = ans[1] if len(ans) > 1 else ""
                r["ok"] = r["bytes"] == len(data) and r["sha256"] == want
        except OSError as e:
            r["error"] = errno.errorcode.get(e.errno or 0, str(e)) or str(e)
        finally:
            s.close()
        r["seconds"] = round(time.monotonic() - t0, 3)
        res[i] = r

    th = [threading.Thread(target=one, args=(i,)) for i in range(a.conns)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    out = {"want_sha256": want, "file_bytes": len(data), "conns": res}
    text = json.dumps(out)
    if a.result:
        with open(a.result, "w") as f:
            f.write(text + "\n")
    bad = [r for r in res if not r["ok"]]
    print("%d of %d connections ok%s" % (len(res) - len(bad), len(res),
          "" if not bad else "; first bad: %s" % json.dumps(bad[0])))
    return 0 if not bad else 1


def refused(a):
    s = socket.socket(fam(a.host), socket.SOCK_STREAM)
    s.settimeout(a.timeout)
    t0 = time.monotonic()
    try:
        s.connect((a.host, a.port))
        print("connected (want ECONNREFUSED)")
        return 1
    except OSError as e:
        name = errno.errorcode.get(e.errno or 0, str(e))
        print("%s after %.3f s" % (name, time.monotonic() - t0))
        return 0 if e.errno == errno.ECONNREFUSED else 1
    finally:
        s.close()


def ss_peers(a):
    out = subprocess.run(["ss", "-Htn", "state", "all", "sport", "= :%d" % a.port],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) < 5:
            continue
        peer = f[-1]
        addr, _, port = peer.rpartition(":")
        if f[0] == "LISTEN" or not port.isdigit():
            continue
        print(json.dumps({"state": f[0], "peer": [addr.strip("[]"), int(port)]}))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--bind", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--file", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--ready")
    c = sub.add_parser("client")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--file", required=True)
    c.add_argument("--op", choices=("get", "put", "abort"), required=True)
    c.add_argument("--conns", type=int, default=1)
    c.add_argument("--abort-at", type=int, default=1 << 20)
    c.add_argument("--result")
    r = sub.add_parser("refused")
    r.add_argument("--host", required=True)
    r.add_argument("--port", type=int, required=True)
    p = sub.add_parser("ss-peers")
    p.add_argument("--port", type=int, required=True)
    for x in (s, c, r):
        x.add_argument("--timeout", type=float, default=60)
    for x in (s, c):
        x.add_argument("--cc", default=os.environ.get("TB_TCP_CC") or "cubic")
    a = ap.parse_args()
    return {"serve": serve, "client": client, "refused": refused, "ss-peers": ss_peers}[a.mode](a)


if __name__ == "__main__":
    sys.exit(main())
