#!/usr/bin/env python3
"""Checks a predicted timeline of CPU ranks that outnumber their node's
cores: the node's i-th rank runs on core i mod CORES (frenzy-launch binds
them so), so no two ranks of one core may be busy (compute or transfer) at
the same time, and the step is at least the busiest core's work. Prints one
line; exits 1 with the reason otherwise.

usage: check_core_sharing.py PREDICTED.json CORES
"""
import json
import sys


def main():
    events = json.load(open(sys.argv[1]))["traceEvents"]
    cores = int(sys.argv[2])
    busy = {}
    step = 0.0
    for e in events:
        if e.get("ph") != "X":
            continue
        if e["name"] == "step":
            step = max(step, e["dur"])
        elif e["cat"] not in ("wait", "bubble", "side-task") and e["dur"] > 0:
            busy.setdefault(e["pid"] % cores, []).append(
                (e["ts"], e["ts"] + e["dur"], e["pid"]))
    for core, spans in busy.items():
        spans.sort()
        for (s0, e0, r0), (s1, e1, r1) in zip(spans, spans[1:]):
            if r0 != r1 and s1 < e0 - 1e-3:
                print("core %d: ranks %d and %d busy together at %.1f us" %
                      (core, r0, r1, s1))
                sys.exit(1)
    work = max(sum(e - s for s, e, _ in spans) for spans in busy.values())
    if step < work - 1e-3:
        print("step %.1f us shorter than core work %.1f us" % (step, work))
        sys.exit(1)
    print("core sharing: %d cores, ranks of a core never overlap, step >= "
          "busiest core's work" % len(busy))


if __name__ == "__main__":
    main()
