#!/usr/bin/env python3
"""Check a measured trace of frenzy-launch --emulate-speed.

usage: emulated_speed.py TRACE.json F0,F1,... TOLERANCE [BASE.json]
Per rank, the median over its forward/backward slices of wall time over the
slice's CPU time (args.cpu_us) must be at least (1 - TOLERANCE) x the
rank's factor: the rank slept (factor - 1) x its CPU time after computing.
Only a lower bound: on a loaded machine a sleep wakes late and a rank waits
for its core, so the ratio can exceed the factor. Prints each rank's
ratio and median idle time per step (step minus compute, transfer and
optimizer slices), beside BASE's (the run without emulation) if given:
the fast ranks' idle time is the bubble that a slower device causes.
"""
import json
import statistics
import sys


def per_rank(path):
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    out = {}
    for r in sorted({e["pid"] for e in ev}):
        mine = [e for e in ev if e["pid"] == r]
        ratio = [e["dur"] / e["args"]["cpu_us"] for e in mine
                 if e["name"].startswith(("forward mb", "backward mb")) and
                 e.get("args", {}).get("cpu_us", 0) > 0]
        steps = sorted((e for e in mine if e["cat"] == "step"),
                       key=lambda e: e["ts"])[1:]  # the first warms up
        idle = []
        for s in steps:
            lo, hi = s["ts"], s["ts"] + s["dur"]
            busy = sum(e["dur"] for e in mine
                       if e["cat"] not in ("step", "wait") and
                       e["ts"] >= lo - 1 and e["ts"] + e["dur"] <= hi + 1)
            idle.append(max(0.0, s["dur"] - busy))
        out[r] = (statistics.median(ratio),
                  statistics.median(idle) if idle else 0.0)
    return out


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    slow = per_rank(sys.argv[1])
    base = per_rank(sys.argv[4]) if len(sys.argv) == 5 else None
    factors = [float(f) for f in sys.argv[2].split(",")]
    tol = float(sys.argv[3])
    ok = True
    for r in sorted(slow):
        f = factors[r] if len(factors) > 1 else factors[0]
        good = slow[r][0] >= (1 - tol) * f
        ok &= good
        line = "rank %d: wall/cpu x%.2f for factor x%g: %s; idle per step " \
               "%.2f ms" % (r, slow[r][0], f, "ok" if good else "TOO FAST",
                            slow[r][1] / 1e3)
        if base:
            line += " (%.2f ms without emulation)" % (base[r][1] / 1e3)
        print(line)
    sys.exit(0 if ok else 1)


main()
