#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hot-reload driver for the satgw e2e tests.

  reload.py storm --prefix P --pid PID --policy LIVE --a A.yaml --b B.yaml
                  --rules-a N --rules-b M [--count 100] [--interval S]
      Reload COUNT times, alternating SIGHUP (even i) and the /satgw/reload
      telemetry command (odd i), and alternating the policy file between B and
      A (the running one is A): each time B or A is copied over LIVE with an
      atomic rename first. After each reload waits until reloads_ok has
      advanced by one and checks /satgw/config: generation +1 and the rule
      count of the file just installed. Prints a JSON report (with satgw's
      rx_packets before and after the storm, and how many reloads saw packets
      cross since the one before); exit 0 if all COUNT reloads were applied in
      order.
  reload.py invalid --prefix P --policy LIVE --bad BAD.yaml
      Installs BAD over LIVE, asks /satgw/reload, prints the answer and the
      generation before and after as JSON; exit 0 if it was rejected (ok 0,
      errors given as LINE:COLUMN: message, the file named in the message) and
      the generation held
      (in /satgw/config and in what the workers run, /satgw/stats).
"""
import argparse
import json
import os
import re
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sgwtel import Telemetry  # noqa: E402


def install(src, live):
    tmp = "%s.tmp.%d" % (live, os.getpid())
    shutil.copyfile(src, tmp)
    os.rename(tmp, live)


def wait_reloads_ok(t, want, timeout):
    deadline = time.monotonic() + timeout
    while True:
        st = t.cmd("/satgw/stats")
        if st["reloads_ok"] >= want or st["reloads_failed"] > 0:
            return st
        if time.monotonic() >= deadline:
            return st
        time.sleep(0.002)


def storm(a):
    t = Telemetry(a.prefix)
    st0 = t.cmd("/satgw/stats")
    cfg0 = t.cmd("/satgw/config")
    ok0 = st0["reloads_ok"]
    gen0 = cfg0["generation"]
    errors = []
    n_hup = n_tel = 0
    rx_prev, with_traffic = st0["rx_packets"], 0
    t0 = time.monotonic()
    for i in range(a.count):
        src, nrules = (a.b, a.rules_b) if i % 2 == 0 else (a.a, a.rules_a)
        install(src, a.policy)
        if i % 2 == 0:
            os.kill(a.pid, signal.SIGHUP)
            n_hup += 1
        else:
            r = t.cmd("/satgw/reload")
            n_tel += 1
            if r.get("ok") != 1:
                errors.append("reload %d (telemetry): %s" % (i + 1, json.dumps(r)))
                break
        st = wait_reloads_ok(t, ok0 + i + 1, 5.0)
        if st["reloads_ok"] != ok0 + i + 1 or st["reloads_failed"] != st0["reloads_failed"]:
            errors.append("reload %d (%s): reloads_ok %d (want %d), reloads_failed %d" % (
                i + 1, "SIGHUP" if i % 2 == 0 else "telemetry", st["reloads_ok"],
                ok0 + i + 1, st["reloads_failed"]))
            break
        with_traffic += st["rx_packets"] > rx_prev
        rx_prev = st["rx_packets"]
        cfg = t.cmd("/satgw/config")
        if cfg["generation"] != gen0 + i + 1 or cfg["rules"] != nrules:
            errors.append("reload %d: generation %d (want %d), rules %d (want %d)" % (
                i + 1, cfg["generation"], gen0 + i + 1, cfg["rules"], nrules))
            break
        if a.interval > 0:
            time.sleep(a.interval)
    secs = time.monotonic() - t0
    st1 = t.cmd("/satgw/stats")
    cfg1 = t.cmd("/satgw/config")
    t.close()
    rep = {"count": a.count, "sighup": n_hup, "telemetry": n_tel, "seconds": round(secs, 3),
           "generation_before": gen0, "generation_after": cfg1["generation"],
           "reloads_ok_before": ok0, "reloads_ok_after": st1["reloads_ok"],
           "reloads_failed": st1["reloads_failed"], "errors": errors,
           "rx_packets_before": st0["rx_packets"], "rx_packets_after": st1["rx_packets"],
           "reloads_with_traffic": with_traffic}
    print(json.dumps(rep, sort_keys=True))
    return 0 if not errors and st1["reloads_ok"] - ok0 == a.count else 1


# Telemetry strings hold 127 characters: satgw names the file once in
# "message" and gives each error as LINE:COLUMN: message.
ERR_LINE = re.compile(r"^(?P<line>\d+):(?P<col>\d+): .+")


def invalid(a):
    t = Telemetry(a.prefix)
    gen0 = t.cmd("/satgw/config")["generation"]
    install(a.bad, a.policy)
    r = t.cmd("/satgw/reload")
    cfg = t.cmd("/satgw/config")
    st = t.cmd("/satgw/stats")
    t.close()
    errs = r.get("errors") or []
    good_errs = [e for e in errs if ERR_LINE.match(e)]
    rep = {"answer": r, "generation_before": gen0, "generation_after": cfg["generation"],
           "stats_generation": st["policy_generation"], "reloads_failed": st["reloads_failed"],
           "last_reload_error": cfg.get("last_reload_error")}
    print(json.dumps(rep, sort_keys=True))
    # The workers keep running the kept policy (stats' generation is the oldest a worker runs).
    ok = (r.get("ok") == 0 and errs and len(good_errs) == len(errs)
          and str(r.get("message", "")).startswith(a.policy + ":")
          and cfg["generation"] == gen0 and st["policy_generation"] == gen0
          and st["reloads_failed"] >= 1)
    if not ok:
        print("reload.py invalid: want ok 0, message naming %s, errors as LINE:COLUMN: ..., "
              "generation kept"
              % a.policy, file=sys.stderr)
        return 1
    # /satgw/config names the refused reload and when it happened...
    at = cfg.get("last_reload_error_unix_s", 0)
    if not cfg.get("last_reload_error") or not 0 < at <= time.time() + 1:
        print("reload.py invalid: /satgw/config last_reload_error %r at %r: want the refusal "
              "and its time" % (cfg.get("last_reload_error"), at), file=sys.stderr)
        return 1
    if a.good is None:
        return 0
    # ...until a later reload succeeds: then it describes nothing any more.
    t = Telemetry(a.prefix)
    install(a.good, a.policy)
    r2 = t.cmd("/satgw/reload")
    cfg2 = t.cmd("/satgw/config")
    t.close()
    print(json.dumps({"good_answer": r2, "last_reload_error": cfg2.get("last_reload_error"),
                      "last_reload_error_unix_s": cfg2.get("last_reload_error_unix_s"),
                      "generation": cfg2["generation"]}, sort_keys=True))
    if (r2.get("ok") != 1 or cfg2.get("last_reload_error") != ""
            or cfg2.get("last_reload_error_unix_s") != 0 or cfg2["generation"] != gen0 + 1):
        print("reload.py invalid: after a good reload want ok 1, last_reload_error \"\" "
              "(time 0) and generation %d" % (gen0 + 1), file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("storm")
    s.add_argument("--prefix", required=True)
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--policy", required=True)
    s.add_argument("--a", required=True)
    s.add_argument("--b", required=True)
    s.add_argument("--rules-a", type=int, required=True)
    s.add_argument("--rules-b", type=int, required=True)
    s.add_argument("--count", type=int, default=100)
    s.add_argument("--interval", type=float, default=0,
                   help="pause between reloads (spreads them over the traffic)")
    v = sub.add_parser("invalid")
    v.add_argument("--prefix", required=True)
    v.add_argument("--policy", required=True)
    v.add_argument("--bad", required=True)
    v.add_argument("--good", help="then reload this valid policy: the error must clear")
    a = ap.parse_args()
    return storm(a) if a.mode == "storm" else invalid(a)


if __name__ == "__main__":
    sys.exit(main())
