#!/usr/bin/env python3
"""A run under frenzy-launch --emulate-speed=plan against the plan's
predicted trace (test helper, issue 14).

usage: check_emulated_trace.py PREDICTED.json MEASURED.json LAUNCH.log
LAUNCH.log holds the scale frenzy-launch chose ("--emulate-speed=scale:S;").
Every action an emulated device runs takes its predicted time x the scale,
not only the compute. A machine loaded by other work stalls a rank now and
then; the emulation pays a stall back by shortening the actions after it
(its debt), so single actions, and the bubbles, move, but a rank's busy
time over the run follows the prediction. Checked per rank, means over the
steps after the third: the busy time per step is 0.75..2.5 x the predicted
busy time x the scale (the top loose: on a machine with more runnable
processes than cores a rank waits for a core as well as for its wake-up,
and the debt cannot pay back what it never learns of), and the transfers and the update together (sends,
receives, norm all-reduce and optimizer) 0.3..3 x theirs (at CPU speed
they would be ~0.02 x). Prints the per-kind medians and the bubble shares.
"""
import json
import re
import statistics
import sys

KINDS = {"forward": ("forward mb",), "backward": ("backward mb",),
         "send": ("send mb",), "recv": ("recv mb",),
         "update": ("norm all-reduce", "optimizer")}
NOT_COMPUTE = ("send", "recv", "update")
BUSY, OTHER = (0.75, 2.5), (0.3, 3.0)


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
            rows.append((kinds, (s["dur"] - busy) / s["dur"], busy))
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

        def ratio(f):
            p = statistics.fmean(f(x) for x in pred[r]) * scale
            return statistics.fmean(f(x) for x in meas[r]) / p if p > 0 else 1

        busy = ratio(lambda x: x[2])
        other = ratio(lambda x: sum(x[0][k] for k in NOT_COMPUTE))
        for name, got, (lo, hi) in (("busy time", busy, BUSY),
                                    ("transfers and update", other, OTHER)):
            if not lo <= got <= hi:
                print(f"FAIL: rank {r} {name}: measured / predicted x scale "
                      f"x{got:.2f}, not in {lo}..{hi}")
                bad += 1
        kinds = []
        for k in KINDS:
            p = statistics.fmean(x[0][k] for x in pred[r]) * scale
            if p > 0:
                got = statistics.median(x[0][k] for x in meas[r])
                kinds.append(f"{k} x{got / p:.2f}")
        ps = statistics.fmean(x[1] for x in pred[r])
        ms = statistics.median(x[1] for x in meas[r])
        print(f"rank {r}: measured / predicted x scale: busy x{busy:.2f}, "
              f"transfers and update x{other:.2f} (medians: " +
              ", ".join(kinds) + f"); bubble share {100 * ms:.1f}% / "
              f"{100 * ps:.1f}%")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
