#!/usr/bin/env python3
"""Compare a resumed run's losses with an uninterrupted run's (test helper).

usage: compare_resumed.py FULL_LOG RESUMED_LOG FIRST LAST TOL
The resumed log must have "step N/M | loss X" lines for exactly the steps
FIRST..LAST, and each must agree with the full log's within TOL relative.
Prints the largest difference.
"""
import re
import sys


def losses(path):
    return {int(m.group(1)): float(m.group(2)) for m in re.finditer(
        r"^step\s+(\d+)/\d+ \| loss (\S+)", open(path).read(), re.M)}


def main():
    full, resumed = losses(sys.argv[1]), losses(sys.argv[2])
    first, last, tol = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    want = list(range(first, last + 1))
    if sorted(resumed) != want:
        print(f"FAIL: the resumed run logged steps {sorted(resumed)}, expected {first}-{last}")
        return 1
    missing = [s for s in want if s not in full]
    if missing:
        print(f"FAIL: the full run did not log steps {missing}")
        return 1
    worst = max(want, key=lambda s: abs(full[s] - resumed[s]) / abs(full[s]))
    err = abs(full[worst] - resumed[worst]) / abs(full[worst])
    ok = err <= tol
    print(f"{'ok' if ok else 'FAIL'}: steps {first}-{last} resumed, largest relative "
          f"difference {err:.2e} at step {worst} ({full[worst]} vs {resumed[worst]})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
