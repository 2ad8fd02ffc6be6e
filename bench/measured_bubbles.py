#!/usr/bin/env python3
"""Per-rank bubble fraction of measured traces (frenzy-launch --trace).

usage: measured_bubbles.py [--skip=N] TRACE.json...
For each rank and each step after the first N (default 2: warm-up, and the
steps --emulate-speed=plan measures before it scales), the share of the
step no compute, transfer or optimizer slice covers (waits are idle);
prints per rank the median over all steps of all traces.
"""
import json
import statistics
import sys


def fractions(path, skip):
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    out = {}
    for r in sorted({e["pid"] for e in ev}):
        mine = [e for e in ev if e["pid"] == r]
        steps = sorted((e for e in mine if e["cat"] == "step"),
                       key=lambda e: e["ts"])[skip:]
        for s in steps:
            lo, hi = s["ts"], s["ts"] + s["dur"]
            spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in mine
                           if e["cat"] not in ("step", "wait", "bubble",
                                               "side-task") and
                           e["ts"] < hi and e["ts"] + e["dur"] > lo)
            busy, t = 0.0, lo
            for a, b in spans:  # union of the busy slices inside the step
                a, b = max(a, t), min(b, hi)
                if b > a:
                    busy += b - a
                    t = b
            out.setdefault(r, []).append((s["dur"] - busy) / s["dur"])
    return out


def main():
    skip = 2
    paths = []
    for a in sys.argv[1:]:
        if a.startswith("--skip="):
            skip = int(a[7:])
        else:
            paths.append(a)
    if not paths:
        sys.exit(__doc__)
    all_ = {}
    for p in paths:
        for r, f in fractions(p, skip).items():
            all_.setdefault(r, []).extend(f)
    for r in sorted(all_):
        print("rank %d: measured bubble fraction %.3f (median of %d steps)" %
              (r, statistics.median(all_[r]), len(all_[r])))


main()
