#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A DPDK telemetry (v2) client for the satgw tests, speaking to the socket
/var/run/dpdk/<file-prefix>/dpdk_telemetry.v2 as dpdk-telemetry.py does.

  sgwtel.py PREFIX CMD [CMD...]            one JSON line per command (the command's value)
  sgwtel.py --wait SEC [--pid PID] PREFIX CMD
                                            retry until CMD answers; fail early if PID exits

Importable: Telemetry(prefix).cmd("/satgw/stats") -> dict.
"""
import argparse
import json
import os
import socket
import sys
import time


def socket_path(prefix):
    run_dir = os.environ.get("RUNTIME_DIRECTORY") or (
        "/var/run" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp"))
    return os.path.join(run_dir, "dpdk", prefix, "dpdk_telemetry.v2")


class Telemetry:
    def __init__(self, prefix, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(timeout)
        self.sock.connect(socket_path(prefix))
        hello = json.loads(self.sock.recv(1024).decode())
        self.max_len = hello["max_output_len"]
        self.pid = hello.get("pid")

    def cmd(self, text):
        """Send one command; return the value under the command's name."""
        self.sock.send(text.encode())
        reply = json.loads(self.sock.recv(self.max_len).decode())
        name = text.split(",", 1)[0]
        return reply.get(name, reply)

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wait", type=float, default=0,
                    help="retry for up to SEC seconds until the socket answers")
    ap.add_argument("--pid", type=int, help="with --wait: give up as soon as PID exits")
    ap.add_argument("prefix")
    ap.add_argument("cmds", nargs="+")
    a = ap.parse_args()

    deadline = time.monotonic() + a.wait
    last = None
    while True:
        try:
            with Telemetry(a.prefix) as t:
                out = [t.cmd(c) for c in a.cmds]
            if any(o is None for o in out):
                raise RuntimeError("command not answered (not registered yet?)")
            for o in out:
                print(json.dumps(o, sort_keys=True))
            return 0
        except (OSError, ValueError, RuntimeError, KeyError) as e:
            last = e
        if a.pid and not alive(a.pid):
            print("sgwtel: process %d exited before telemetry answered" % a.pid, file=sys.stderr)
            return 2
        if time.monotonic() >= deadline:
            print("sgwtel: %s: no answer: %s" % (socket_path(a.prefix), last), file=sys.stderr)
            return 1
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
