#!/usr/bin/env python3
"""Compare the predicted peak memory with frenzy-launch's measured one.

usage: compare_peak.py PREDICTION_LOG LAUNCH_LOG TOL [NAME]
PREDICTION_LOG has "peak: N B" (frenzy-opt -frenzy-test-print-memory),
LAUNCH_LOG has "memory: peak N bytes" (frenzy-launch). Exits 1 when
|measured - predicted| / measured > TOL.
"""
import re
import sys

pred = int(re.search(r"^peak: (\d+) B", open(sys.argv[1]).read(), re.M).group(1))
meas = int(re.search(r"^memory: peak (\d+) bytes", open(sys.argv[2]).read(), re.M).group(1))
tol = float(sys.argv[3])
name = sys.argv[4] if len(sys.argv) > 4 else sys.argv[2]
err = abs(meas - pred) / meas
print(f"{'ok' if err <= tol else 'FAIL'} {name}: predicted {pred} B, measured {meas} B, "
      f"error {100 * err:.3f}%")
sys.exit(0 if err <= tol else 1)
