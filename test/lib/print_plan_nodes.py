#!/usr/bin/env python3
"""Print a plan's node map and each rank's node (test helper).

usage: print_plan_nodes.py PROTO_DIR PLAN.bin
"node NAME host HOST" per entry of the node map (none when the cluster
file named no hosts), then "rank R node NAME" per rank.
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
    for n in plan.nodes:
        print(f"node {n.name} host {n.host}")
    for r in plan.ranks:
        print(f"rank {r.id} node {r.node}")


if __name__ == "__main__":
    main()
