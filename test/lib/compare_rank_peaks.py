#!/usr/bin/env python3
"""Check each rank's measured peak memory against the plan's prediction.

usage: compare_rank_peaks.py LAUNCH_LOG TOL NAME
LAUNCH_LOG is a multi-rank frenzy-launch log; its last step line has
"memory MiB (rank: used/predicted) 0:U/P 1:U/P ...". Prints one line per
rank and exits 1 when any |used - predicted| / predicted > TOL.
"""
import re
import sys

log, tol, name = sys.argv[1], float(sys.argv[2]), sys.argv[3]
lines = [l for l in open(log) if "memory MiB (rank: used/predicted)" in l]
if not lines:
    sys.exit(f"{log}: no step line with per-rank memory")
pairs = re.findall(r" (\d+):([0-9.]+)/([0-9.]+)", lines[-1].split("used/predicted)")[1])
bad = 0
for rank, used, pred in pairs:
    err = (float(used) - float(pred)) / float(pred)
    ok = abs(err) <= tol
    bad += not ok
    print(f"{'ok' if ok else 'FAIL'} {name} rank {rank}: measured {used} MiB, "
          f"predicted {pred} MiB, {100 * err:+.1f}%")
sys.exit(1 if bad or not pairs else 0)
