#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One client connection for the TCP split's fault test (test_split_faults.sh),
run on mh against split_xfer.py's server on fh, that never hangs and says how
its connection ended.

  split_fault_client.py --host ADDR --port P --op get|put --file F
      --result R [--progress PROG] [--stall S] [--timeout S]
      get: send "GET\\n" and read to the end; put: send "PUT\\n" and F, half-
      close, read the server's answer line "<bytes> <sha256>".
      PROG is rewritten with the bytes received (get) or handed to the kernel
      (put) so far, as the transfer goes (the test waits on it: "mid-transfer").
      Nothing received or sent for S seconds ends the connection as "stall"
      (the client's own deadline: what a hang would look like), never a wait
      for ever. R (JSON): {"local": [addr, port], "end": how it ended, "bytes",
      "prefix_ok", "complete", "seconds", "connect_s", "t_last"}:
        end        "eof" (the server's FIN), "stall", or the errno name of the
                   error that ended it (ECONNRESET, ETIMEDOUT, EPIPE, ...)
        prefix_ok  get: the bytes received are the file's first bytes
        complete   get: the whole file, nothing else (sha256 equal); put: the
                   server's answer names the file's length and sha256
        t_last     seconds from the start to the last byte received or sent
      Exit 0 whatever the end (the test judges it), 1 on a usage error.
"""
import argparse
import errno
import hashlib
import json
import os
import socket
import sys
import time

CHUNK = 65536


def ename(e):
    # socket.timeout is TimeoutError (Python 3.10), whose errno is ETIMEDOUT when
    # the kernel timed the connection out, None when the socket's timeout fired.
    if e.errno is None and isinstance(e, socket.timeout):
        return "stall"
    return errno.errorcode.get(e.errno or 0, str(e)) or str(e)


class Progress:
    def __init__(self, path):
        self.path = path
        self.n = 0

    def add(self, k):
        self.n += k
        if self.path:
            tmp = self.path + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % self.n)
            os.replace(tmp, self.path)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--op", choices=("get", "put"), required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--progress")
    ap.add_argument("--stall", type=float, default=30)
    ap.add_argument("--timeout", type=float, default=30, help="connect timeout")
    ap.add_argument("--cc", default=os.environ.get("TB_TCP_CC") or "cubic")
    a = ap.parse_args()

    data = open(a.file, "rb").read()
    want = hashlib.sha256(data).hexdigest()
    r = {"local": None, "end": "", "bytes": 0, "prefix_ok": False, "complete": False,
         "seconds": 0.0, "connect_s": 0.0, "t_last": 0.0, "file_bytes": len(data)}
    prog = Progress(a.progress)
    t0 = time.monotonic()
    fam = socket.AF_INET6 if ":" in a.host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    got = bytearray()
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a.cc.encode())
        s.settimeout(a.timeout)
        s.connect((a.host, a.port))
        r["connect_s"] = round(time.monotonic() - t0, 3)
        r["local"] = list(s.getsockname()[:2])
        prog.add(0)
        # Every blocking call below returns within --stall seconds of the last
        # byte that moved (a timeout is the client's own verdict: "stall").
        s.settimeout(a.stall)
        if a.op == "get":
            s.sendall(b"GET\n")
            while True:
                b = s.recv(CHUNK)
                if not b:
                    r["end"] = "eof"
                    break
                got += b
                r["t_last"] = round(time.monotonic() - t0, 3)
                prog.add(len(b))
        else:
            s.sendall(b"PUT\n")
            off = 0
            while off < len(data):
                n = s.send(data[off:off + CHUNK])
                off += n
                r["t_last"] = round(time.monotonic() - t0, 3)
                prog.add(n)
            s.shutdown(socket.SHUT_WR)
            ans = b""
            while not ans.endswith(b"\n"):
                b = s.recv(256)
                if not b:
                    break
                ans += b
            f = ans.decode(errors="replace").split()
            r["complete"] = len(f) == 2 and f[0] == str(len(data)) and f[1] == want
            r["end"] = "eof"
    except OSError as e:
        r["end"] = ename(e)
    finally:
        s.close()
    r["seconds"] = round(time.monotonic() - t0, 3)
    if a.op == "get":
        r["bytes"] = len(got)
        r["prefix_ok"] = bytes(got) == data[:len(got)]
        r["complete"] = len(got) == len(data) and hashlib.sha256(got).hexdigest() == want
    else:
        r["bytes"] = prog.n
        r["prefix_ok"] = True
    with open(a.result, "w") as f:
        f.write(json.dumps(r) + "\n")
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
