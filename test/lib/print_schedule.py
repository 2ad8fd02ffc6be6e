#!/usr/bin/env python3
"""Print a plan's schedule compactly (test helper).

usage: print_schedule.py PROTO_DIR PLAN.bin
One line per rank: "rank R (pN sS): F0 >T@P ..." where F/B are forward and
backward of a micro-batch, <T@P / >T@P receive / send tensor T from / to
rank P, then R (reduce gradients), U (update), Y (tied sync). Then one line
per communication group.
"""
import os
import subprocess
import sys
import tempfile


def main():
    proto_dir, plan_path = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={out}",
                        os.path.join(proto_dir, "plan.proto")], check=True)
        sys.path.insert(0, out)
        import plan_pb2
        plan = plan_pb2.Plan()
        data = open(plan_path, "rb").read()
        # plan.bin: a 32-byte header (proto/plan/PlanFile.h), then the plan.
        if data[:8] != b"FRZPLAN\n":
            sys.exit(f"{plan_path}: not a Frenzy plan")
        plan.ParseFromString(data[32:])
    A = plan_pb2.Action
    for r in plan.ranks:
        items = []
        for a in r.stream:
            if a.kind == A.FORWARD:
                items.append(f"F{a.micro_batch}")
            elif a.kind == A.BACKWARD:
                items.append(f"B{a.micro_batch}")
            elif a.kind == A.SEND:
                items.append(f">{a.tensor}@{a.peer}")
            elif a.kind == A.RECV:
                items.append(f"<{a.tensor}@{a.peer}")
            elif a.kind == A.SIDE_TASK:
                # S<task>x<steps>: a side-task slot (issue 14).
                items.append(f"S{a.side_task.task}x{a.side_task.steps}")
            else:
                items.append({A.REDUCE_GRADS: "R", A.UPDATE: "U",
                              A.SYNC_PARAMS: "Y"}[a.kind])
        print(f"rank {r.id} (p{r.pipeline} s{r.stage}) {r.schedule}: " + " ".join(items))
    kinds = {0: "DP", 1: "TIED", 2: "TP"}
    for g in plan.groups:
        n = len(g.members[0].pieces) if g.members else len(g.tensors)
        print(f"group {kinds[g.kind]} ranks {list(g.ranks)} tensors {n}")
    starts = [max((a.predicted_start for a in r.stream), default=0) for r in plan.ranks]
    print(f"timeline: last action starts at {max(starts) * 1e3:.3f} ms")


if __name__ == "__main__":
    sys.exit(main())
