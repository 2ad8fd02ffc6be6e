#!/usr/bin/env python3
"""Make a semantically broken but correctly signed plan (test helper).

usage: alter_plan.py IN.plan OUT.plan CHANGE
CHANGE: layer-norm-scale  the first layer_norm's scale gets one more element
        gather-axis       the first gather's axis becomes 7
        bare-v3           version 3 and no header (a plan of the old format)
        side-task-index   the first side-task slot names a task past the list
        no-action-seconds every action's predicted_seconds cleared (a plan
                          written before frenzy-opt recorded them)
        tp-program        the first stage of several ranks runs a program of
                          another TP degree (what frenzy-opt refuses to write)
The plan is decoded, changed, re-encoded and re-signed
(scripts/plan_file.py), so only the runtime's validator can refuse it.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import plan_file  # noqa: E402


def main():
    src, dst, change = sys.argv[1:4]
    pb = plan_file.plan_module(os.path.join(os.path.dirname(__file__), "..", "..", "proto"))
    plan = pb.Plan()
    plan.ParseFromString(plan_file.payload_of(open(src, "rb").read()))
    prog = plan.program
    if change == "layer-norm-scale":
        ins = next(i for i in prog.instrs if i.op == "layer_norm")
        scale = prog.tensors[ins.inputs[1]]
        scale.shape[-1] += 1
    elif change == "gather-axis":
        ins = next(i for i in prog.instrs if i.op == "gather")
        ins.attrs["axis"].i = 7
    elif change == "side-task-index":
        a = next(a for r in plan.ranks for a in r.stream
                 if a.kind == pb.Action.SIDE_TASK)
        a.side_task.task = len(plan.side_tasks)
    elif change == "no-action-seconds":
        for r in plan.ranks:
            for a in r.stream:
                a.ClearField("predicted_seconds")
    elif change == "tp-program":
        # A layout of two one-stage pipelines (TP 2 and unsplit): the TP
        # stage takes the other's program (and its instruction lists, which
        # index that program), keeping its own ranks and batch share.
        sp = next(s for s in plan.stages if len(s.ranks) > 1)
        other = next(s for s in plan.stages if len(s.ranks) != len(sp.ranks))
        keep = (sp.pipeline, sp.stage, list(sp.ranks), sp.micro_batches, sp.first_micro_batch)
        sp.CopyFrom(other)
        sp.pipeline, sp.stage, _, sp.micro_batches, sp.first_micro_batch = keep
        del sp.ranks[:]
        sp.ranks.extend(keep[2])
    elif change == "bare-v3":
        plan.version = 3
        open(dst, "wb").write(plan.SerializeToString())
        return
    else:
        sys.exit(__doc__)
    open(dst, "wb").write(plan_file.frame(plan.SerializeToString()))


if __name__ == "__main__":
    main()
