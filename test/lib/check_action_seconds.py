#!/usr/bin/env python3
"""Action.predicted_seconds in plan.bin against the predicted trace (test
helper, issue 14).

usage: check_action_seconds.py PROTO_DIR PLAN.bin PREDICTED_TRACE.json
frenzy-opt records each action's busy seconds from the timeline simulation
that also writes the predicted trace (frenzy-opt --emit=trace). Per rank and
per kind of work, the plan's seconds per step must equal the trace's slices
per step (to the trace's rounding, a nanosecond a slice): forwards,
backwards, sends, receives, the update (norm all-reduce and optimizer) and
the gradient reduction (DP all-reduce and copies). Every forward, backward,
send, receive and update must have a time. Prints per rank the forward and
backward microseconds per step.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import plan_file  # noqa: E402


def load_plan(proto_dir, path):
    pb = plan_file.plan_module(proto_dir)
    plan = pb.Plan()
    plan.ParseFromString(plan_file.payload_of(open(path, "rb").read()))
    return plan, pb.Action


def main():
    plan, A = load_plan(sys.argv[1], sys.argv[2])
    events = [e for e in json.load(open(sys.argv[3]))["traceEvents"]
              if e.get("ph") == "X"]
    kinds = {A.FORWARD: ("forward mb",), A.BACKWARD: ("backward mb",),
             A.SEND: ("send mb",), A.RECV: ("recv mb",),
             A.UPDATE: ("norm all-reduce", "optimizer"),
             A.REDUCE_GRADS: ("dp copy in", "dp all-reduce", "dp copies")}
    bad = 0
    for r in plan.ranks:
        mine = [e for e in events if e["pid"] == r.id]
        steps = sum(1 for e in mine if e["cat"] == "step")
        if not steps:
            sys.exit(f"FAIL: rank {r.id} has no step in the trace")
        shown = {}
        for kind, prefixes in kinds.items():
            plan_us = 1e6 * sum(a.predicted_seconds for a in r.stream
                                if a.kind == kind)
            slices = [e["dur"] for e in mine
                      if e["name"].startswith(prefixes)]
            trace_us = sum(slices) / steps
            # The trace writes times to the nanosecond: each slice rounds.
            tolerance = 1e-3 * len(slices) / steps + 1e-6 * plan_us
            untimed = [a for a in r.stream if a.kind == kind and
                       kind != A.REDUCE_GRADS and not a.predicted_seconds > 0]
            if untimed:
                print(f"FAIL: rank {r.id}: {len(untimed)} action(s) of kind "
                      f"{kind} without predicted_seconds")
                bad += 1
            if abs(plan_us - trace_us) > tolerance:
                print(f"FAIL: rank {r.id} kind {kind}: plan {plan_us:.6f} us "
                      f"per step, trace {trace_us:.6f} us")
                bad += 1
            shown[kind] = plan_us
        print(f"rank {r.id}: forward {shown[A.FORWARD]:.3f} us, backward "
              f"{shown[A.BACKWARD]:.3f} us per step, as the trace")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
