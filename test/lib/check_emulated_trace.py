#!/usr/bin/env python3
"""A run under frenzy-launch --emulate-speed=plan against the plan's
predicted trace (test helper, issue 14).

usage: check_emulated_trace.py PREDICTED.json MEASURED.json LAUNCH.log
LAUNCH.log holds the scale frenzy-launch chose ("--emulate-speed=scale:S;").
Per rank and kind of work (forwards, backwards, sends, receives, the
update: norm all-reduce and optimizer), the measured time per step (median
over the steps after the third) must be LOW..HIGH (0.5..2) x the predicted
time per step x the scale: every action an emulated device runs takes its
predicted time, not only the compute (a loaded machine wakes sleepers late,
and the debt they leave shortens later ones: the bounds are loose; a send
at CPU speed would be ~100x short). Per rank the measured bubble share of
the step (median over steps) must be within 10 points of the predicted.
Prints the ratios.
"""
import json
import re
import statistics
import sys

KINDS = {"forward": ("forward mb",), "backward": ("backward mb",),
         "send": ("send mb",), "recv": ("recv mb",),
         "update": ("norm all-reduce", "optimizer")}
LOW, HIGH, POINTS = 0.5, 2.0, 0.10


def per_step(path, skip):
    """Per rank: per step, {kind: us} and the idle share."""
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    out = {}
    for r in sorted({e["pid"] for e in ev}):
        mine = [e for e in ev if e["pid"] == r]
        steps = sorted((e for e in mine if e["cat"] == "step"),
                       key=lambda e: e["ts"])[skip:]
        rows = []
        for s in steps:
            lo, hi = s["ts"], s["ts"] + s["dur"]
            kinds = dict.fromkeys(KINDS, 0.0)
            busy = 0.0
            for e in mine:
                if e["cat"] in ("step", "wait", "bubble", "side-task"):
                    continue
                a, b = max(e["ts"], lo), min(e["ts"] + e["dur"], hi)
                if b <= a:
                    continue
                busy += b - a
                for k, prefixes in KINDS.items():
                    if e["name"].startswith(prefixes):
                        kinds[k] += b - a
            rows.append((kinds, (s["dur"] - busy) / s["dur"]))
        out[r] = rows
    return out


def main():
    pred_path, meas_path, log = sys.argv[1:4]
    m = re.search(r"--emulate-speed=scale:([0-9.e+-]+);", open(log).read())
    if not m:
        sys.exit(f"FAIL: {log} names no --emulate-speed=scale:S")
    scale = float(m.group(1))
    pred, meas = per_step(pred_path, 0), per_step(meas_path, 3)
    bad = 0
    for r in sorted(pred):
        if not meas.get(r):
            sys.exit(f"FAIL: rank {r} has no measured step after the third")
        ratios = []
        for k in KINDS:
            p = statistics.fmean(x[0][k] for x in pred[r]) * scale
            if p <= 0:
                continue
            got = statistics.median(x[0][k] for x in meas[r])
            ratios.append(f"{k} x{got / p:.2f}")
            if not LOW <= got / p <= HIGH:
                print(f"FAIL: rank {r} {k}: measured {got / 1e3:.3f} ms per "
                      f"step, predicted x scale {p / 1e3:.3f} ms")
                bad += 1
        ps = statistics.fmean(x[1] for x in pred[r])
        ms = statistics.median(x[1] for x in meas[r])
        if abs(ps - ms) > POINTS:
            print(f"FAIL: rank {r}: bubble share measured {100 * ms:.1f}%, "
                  f"predicted {100 * ps:.1f}%")
            bad += 1
        print(f"rank {r}: measured / predicted x scale: " + ", ".join(ratios) +
              f"; bubble share {100 * ms:.1f}% / {100 * ps:.1f}%")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
