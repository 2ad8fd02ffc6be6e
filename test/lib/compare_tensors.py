#!/usr/bin/env python3
"""Compare raw little-endian float32 tensors (test helper).

usage: compare_tensors.py abs|rel TOL ACTUAL.bin REFERENCE [NAME]
       compare_tensors.py grads TOL OUTDIR REFDIR
  abs: max |actual - reference| <= TOL
  rel: ||actual - reference|| / ||reference|| <= TOL
  REFERENCE is a .bin file, or a number for a one-element tensor.
  grads: rel for every REFDIR/NAME.bin against OUTDIR/grad.NAME.bin.
Prints one line per comparison; exits 1 when any is over TOL.
"""
import array
import math
import os
import sys


def load(path):
    a = array.array("f")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder != "little":
        a.byteswap()
    return a


def compare(mode, tol, actual, ref, name):
    x = load(actual)
    try:
        y = array.array("f", [float(ref)])
    except ValueError:
        y = load(ref)
    if len(x) != len(y):
        print(f"FAIL {name}: {len(x)} elements vs {len(y)} in the reference")
        return 1
    if mode == "abs":
        err = max((abs(a - b) for a, b in zip(x, y)), default=0.0)
    else:
        num = math.sqrt(sum((a - b) ** 2 for a, b in zip(x, y)))
        den = math.sqrt(sum(b * b for b in y))
        err = num / den if den else num
    ok = err <= tol and not math.isnan(err)
    print(f"{'ok' if ok else 'FAIL'} {name}: {mode} error {err:.3e} (tolerance {tol:g})")
    return 0 if ok else 1


def main():
    mode, tol = sys.argv[1], float(sys.argv[2])
    if mode == "grads":
        out, ref = sys.argv[3], sys.argv[4]
        names = sorted(f[:-4] for f in os.listdir(ref) if f.endswith(".bin"))
        if not names:
            print(f"FAIL: no reference gradients in {ref}")
            return 1
        return max(compare("rel", tol, os.path.join(out, f"grad.{n}.bin"),
                           os.path.join(ref, f"{n}.bin"), f"grad.{n}")
                   for n in names)
    name = sys.argv[5] if len(sys.argv) > 5 else sys.argv[3]
    return compare(mode, tol, sys.argv[3], sys.argv[4], name)


if __name__ == "__main__":
    sys.exit(main())
