#!/usr/bin/env python3
"""Run a command that must fail, within a time bound (test helper).

usage: expect_failure_within.py SECONDS -- COMMAND...
Prints "ok: exit N within SECONDS s" when the command exits non-zero in
time, then its output (stdout and stderr together); otherwise prints why
and exits 1 (a command still running at the bound is killed, with its
process group).
"""
import os
import signal
import subprocess
import sys


def main():
    bound = float(sys.argv[1])
    cmd = sys.argv[sys.argv.index("--") + 1:]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        print(f"FAIL: still running after {bound:.0f} s")
        print(out)
        return 1
    if p.returncode == 0:
        print("FAIL: exit 0")
        print(out)
        return 1
    print(f"ok: exit {p.returncode} within {bound:.0f} s")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
