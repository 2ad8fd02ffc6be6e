#!/usr/bin/env python3
"""Compares the initializers of a model before and after training.

usage: compare_initializers.py BEFORE.onnx AFTER.onnx --same NAME... [--changed-others]
Prints "ok" when every --same initializer is byte-identical (the whole
TensorProto: dims, type, data) and, with --changed-others, every other
initializer differs; else prints what failed and exits 1.
"""
import argparse
import sys

import onnx

ap = argparse.ArgumentParser()
ap.add_argument("before")
ap.add_argument("after")
ap.add_argument("--same", nargs="+", default=[])
ap.add_argument("--changed-others", action="store_true")
a = ap.parse_args()
before = {t.name: t.SerializeToString() for t in onnx.load(a.before).graph.initializer}
after = {t.name: t.SerializeToString() for t in onnx.load(a.after).graph.initializer}
bad = [f"{n}: missing" for n in a.same if n not in before or n not in after]
bad += [f"{n}: changed" for n in a.same if n in before and before[n] != after.get(n)]
if a.changed_others:
    bad += [f"{n}: unchanged" for n in before if n not in a.same and before[n] == after.get(n)]
if bad:
    print("FAIL", "; ".join(bad))
    sys.exit(1)
print(f"ok: {len(a.same)} byte-identical, {len(before) - len(a.same)} others")
