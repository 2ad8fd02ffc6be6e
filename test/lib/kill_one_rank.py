#!/usr/bin/env python3
"""Kill one rank of a running multi-rank job; the others must stop (test
helper).

usage: kill_one_rank.py TIMEOUT -- FRENZY-LAUNCH-COMMAND...
Starts the command, waits for its first step line, SIGKILLs one rank process
(a frenzy-launch below mpirun, not mpirun itself) and waits: the job must end
with a non-zero status within TIMEOUT seconds. Prints how long it took and
the launcher's last message lines.
"""
import os
import signal
import subprocess
import sys
import time

from proctree import children


def main():
    timeout = float(sys.argv[1])
    cmd = sys.argv[sys.argv.index("--") + 1:]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    lines = []
    for line in p.stdout:
        lines.append(line)
        if line.startswith("step "):
            break
    ranks = [c for c in children(p.pid)
             if "frenzy-launch" in open(f"/proc/{c}/cmdline").read()]
    if not ranks:
        print("FAIL: no rank process found below mpirun")
        return 1
    victim = sorted(ranks)[-1]
    os.kill(victim, signal.SIGKILL)
    t0 = time.time()
    try:
        rest, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        print(f"FAIL: the job still ran {timeout:.0f} s after a rank was killed")
        return 1
    took = time.time() - t0
    tail = [l for l in rest.splitlines() if "rank" in l or "signal" in l]
    print(f"{'ok' if p.returncode != 0 else 'FAIL'}: exit {p.returncode} "
          f"{took:.1f} s after killing a rank")
    print("\n".join(tail[-3:]))
    return 0 if p.returncode != 0 else 1


if __name__ == "__main__":
    sys.exit(main())
