#!/usr/bin/env python3
"""Checks on frenzy-launch --side-report=FILE (test helper, issue 14).

usage:
  check_side_report.py emulation REPORT RANK FACTOR LOW HIGH
      the rank's forward+backward wall time over its CPU time (median over
      steps after the first) is between LOW x FACTOR and HIGH x FACTOR
      (a loaded machine wakes a sleeping rank late: only the upper side
      needs room); prints it
  check_side_report.py step-covers REPORT RANK FACTOR
      the median step is at least 0.9 x FACTOR x the rank's CPU time for
      forward and backward in a step (the slowed rank sets the step)
  check_side_report.py harvest REPORT RANK
      the rank ran side-task steps after the first step, harvested > 0 s,
      and its delay bound is below its harvest; prints the figures
  check_side_report.py same-steps LOG_A LOG_B
      every "step N/M | loss X | lr Y | grad norm Z" agrees exactly
"""
import json
import re
import statistics
import sys


def rank_of(path, r):
    for rk in json.load(open(path))["ranks"]:
        if rk["rank"] == r:
            return rk
    sys.exit(f"FAIL: {path} has no rank {r}")


def median_step(path):
    ranks = json.load(open(path))["ranks"]
    return statistics.median(max(rk["steps"][k]["step_s"] for rk in ranks)
                             for k in range(1, len(ranks[0]["steps"])))


def main():
    cmd = sys.argv[1]
    if cmd == "emulation":
        rk = rank_of(sys.argv[2], int(sys.argv[3]))
        want, lo, hi = (float(x) for x in sys.argv[4:7])
        got = statistics.median(s["compute_s"] / s["compute_cpu_s"]
                                for s in rk["steps"][1:] if s["compute_cpu_s"] > 0)
        ok = lo * want <= got <= hi * want
        print(f"{'ok' if ok else 'FAIL'}: rank {rk['rank']} compute/CPU "
              f"x{got:.2f}, asked x{want:g} (window x{lo * want:g}-"
              f"x{hi * want:g})")
        return 0 if ok else 1
    if cmd == "step-covers":
        rk = rank_of(sys.argv[2], int(sys.argv[3]))
        cpu = statistics.median(s["compute_cpu_s"] for s in rk["steps"][1:])
        step = median_step(sys.argv[2])
        want = 0.9 * float(sys.argv[4]) * cpu
        ok = step >= want
        print(f"{'ok' if ok else 'FAIL'}: median step {1e3 * step:.2f} ms, "
              f"rank {rk['rank']}'s slowed compute {1e3 * want / 0.9:.2f} ms")
        return 0 if ok else 1
    if cmd == "harvest":
        rk = rank_of(sys.argv[2], int(sys.argv[3]))
        steps = rk["steps"][1:]
        n = sum(s["side_steps"] for s in steps)
        h = sum(s["harvested_s"] for s in steps)
        d = sum(s["delay_s"] for s in steps)
        ok = n > 0 and h > 0 and d < h
        print(f"{'ok' if ok else 'FAIL'}: rank {rk['rank']} ran {n} side-task "
              f"steps, harvested {h:.4f} s, delay bound {d:.4f} s")
        return 0 if ok else 1
    if cmd == "same-steps":
        pat = re.compile(r"^step\s+(\d+)/\d+ \| (loss \S+ \| lr \S+(?: \| grad norm \S+)?)", re.M)
        a = dict(pat.findall(open(sys.argv[2]).read()))
        b = dict(pat.findall(open(sys.argv[3]).read()))
        ok = bool(a) and a == b
        print(f"{'ok' if ok else 'FAIL'}: {len(a)} and {len(b)} steps, "
              f"{'identical' if ok else 'different'} losses and norms")
        if not ok:
            for k in sorted(set(a) | set(b), key=int):
                if a.get(k) != b.get(k):
                    print(f"  step {k}: {a.get(k)} vs {b.get(k)}")
        return 0 if ok else 1
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
