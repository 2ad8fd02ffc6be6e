#!/usr/bin/env python3
"""Print a plan's node map and each rank's node (test helper).

usage: print_plan_nodes.py PROTO_DIR PLAN.bin
"node NAME host HOST" per entry of the node map (none when the cluster
file named no hosts), then "rank R node NAME" per rank.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import plan_file  # noqa: E402


def main():
    proto_dir, plan_path = sys.argv[1], sys.argv[2]
    plan = plan_file.plan_module(proto_dir).Plan()
    plan.ParseFromString(plan_file.payload_of(open(plan_path, "rb").read()))
    for n in plan.nodes:
        print(f"node {n.name} host {n.host}")
    for r in plan.ranks:
        print(f"rank {r.id} node {r.node}")


if __name__ == "__main__":
    main()
