#!/usr/bin/env python3
"""Compare the per-step losses of two training logs (test helper).

usage: compare_losses.py LOG_A LOG_B TOL
Both logs have "step N/M | loss X" lines; every step in both must agree
within TOL relative. Prints the largest difference.
"""
import re
import sys


def losses(path):
    return {int(m.group(1)): float(m.group(2)) for m in re.finditer(
        r"^step\s+(\d+)/\d+ \| loss (\S+)", open(path).read(), re.M)}


def main():
    a, b, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
    common = sorted(set(a) & set(b))
    if not common or len(common) != len(a) or len(common) != len(b):
        print(f"FAIL: steps differ ({len(a)} vs {len(b)}, {len(common)} common)")
        return 1
    worst = max(common, key=lambda s: abs(a[s] - b[s]) / abs(b[s]))
    err = abs(a[worst] - b[worst]) / abs(b[worst])
    ok = err <= tol
    print(f"{'ok' if ok else 'FAIL'}: {len(common)} steps, largest relative "
          f"difference {err:.2e} at step {worst} ({a[worst]} vs {b[worst]})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
