#!/usr/bin/env python3
"""Checks a predicted timeline of CPU ranks that outnumber their node's
cores: the node's i-th rank runs on core i mod CORES (frenzy-launch binds
them so), so no two ranks of one core may compute at the same time (a
transfer or all-reduce slice may: a rank queued for its core is inside the
MPI call, as the runtime's trace shows it), and the step (the slowest
rank's mean over the steps shown) is at least the busiest core's compute
per step. Prints one line; exits 1 with the reason otherwise.

A measured trace (frenzy-launch --trace with ranks taking turns on shared
cores) must pass too; TOL_US allows for its ranks' clock offsets.

usage: check_core_sharing.py TRACE.json CORES [TOL_US]
"""
import json
import sys


def main():
    events = json.load(open(sys.argv[1]))["traceEvents"]
    cores = int(sys.argv[2])
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-3
    busy, steps = {}, {}
    for e in events:
        if e.get("ph") != "X":
            continue
        if e["name"] == "step":
            steps.setdefault(e["pid"], []).append(e["dur"])
        elif e["cat"] != "wait" and e["tid"] == 0 and e["dur"] > 0:
            busy.setdefault(e["pid"] % cores, []).append(
                (e["ts"], e["ts"] + e["dur"], e["pid"]))
    for core, spans in busy.items():
        spans.sort()
        for (s0, e0, r0), (s1, e1, r1) in zip(spans, spans[1:]):
            if r0 != r1 and s1 < e0 - tol:
                print("core %d: ranks %d and %d busy together at %.1f us" %
                      (core, r0, r1, s1))
                sys.exit(1)
    shown = max(len(d) for d in steps.values())
    step = max(sum(d) / len(d) for d in steps.values())
    work = max(sum(e - s for s, e, _ in spans) for spans in busy.values()) / shown
    if step < work - tol:
        print("step %.1f us shorter than core work %.1f us" % (step, work))
        sys.exit(1)
    print("core sharing: %d cores, ranks of a core never overlap, step >= "
          "busiest core's work" % len(busy))


if __name__ == "__main__":
    main()
