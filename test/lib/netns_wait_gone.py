#!/usr/bin/env python3
"""Wait until no process matching a pattern runs in the given emulated nodes (test helper).

usage: netns_wait_gone.py TIMEOUT PATTERN NETNS...
Polls `ip netns pids NETNS` (and each pid's command line) until no process
whose command line contains PATTERN ("" matches any) is left in any of the
namespaces; prints `none left in NETNS...` and exits 0, or after TIMEOUT
seconds prints the ones left (`still running after T s: NETNS pid CMD`) and
exits 1. For processes that end by themselves after a job was ended (a rank's
own comm timeout, an Open MPI daemon whose launcher is gone): the test acts
on their state, bounded, instead of sleeping.
"""
import subprocess
import sys
import time


def left(namespaces, pattern):
    out = []
    for ns in namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read()
            except OSError:
                continue
            cmd = cmd.replace(b"\0", b" ").decode(errors="replace").strip()
            if pattern in cmd:
                out.append(f"{ns} {pid} {cmd[:120]}")
    return out


def main():
    timeout, pattern, namespaces = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
    deadline = time.time() + timeout
    while True:
        now = left(namespaces, pattern)
        if not now:
            print(f"none left in {' '.join(namespaces)}")
            return 0
        if time.time() > deadline:
            for line in now:
                print(f"still running after {timeout:.0f} s: {line}")
            return 1
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())
