#!/usr/bin/env python3
"""Drive a frenzy-elastic run through a change of devices (test helper).

usage: elastic_run.py [--kill-rank=R@STEP] [--cluster-at=STEP:SRC:DEST]
                      [--reference=LOG] [--from=STEP] [--timeout=SEC]
                      [--expect-fail] -- FRENZY-ELASTIC-COMMAND...
Starts the command and reads its output. The change happens at a step the
ranks report in their status files (RUN/ranks-0/rank-R: pid, step; RUN is
the command's --run-dir or CHECKPOINT-DIR-elastic), polled every 5 ms; the
ranks of the first plan are frozen (SIGSTOP) while the change is made, so
a step of a few milliseconds cannot run past the checkpoint the test
expects. --kill-rank: once rank R has finished step STEP, SIGKILL its
process (the others are let go again: the supervisor finds out as in a real
run). --cluster-at: once rank 0 has finished step STEP, copy SRC over DEST
(the cluster file the supervisor watches; written to a temporary name and
renamed, as an editor does) and wait until the supervisor has asked the
ranks to stop (RUN/stop; at most 3 s) before letting them go.
Prints the supervisor's own lines (frenzy-elastic: ...) and its errors.
--reference: every step from --from to the last (the last report of each
step: resumed steps are reported again) must have the loss of that step in
LOG (an uninterrupted run) within 1e-5 relative. The command must succeed
unless --expect-fail. The whole output goes to RUN.log.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from proctree import descendants

STEP = re.compile(r"^step\s+(\d+)/\d+ \| loss (\S+)", re.M)


def arg(cmd, name):
    for a in cmd:
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


def rank_state(run_dir, rank):
    """(pid, step) from a rank's status file, or None."""
    try:
        w = open(os.path.join(run_dir, "ranks-0", f"rank-{rank}")).read().split()
        return int(w[3]), int(w[7])
    except (OSError, IndexError, ValueError):
        return None


def signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def change(p, run_dir, kill, edit, deadline, notes):
    """Makes the one change asked for when its step is reached."""
    rank, step = (kill[0], kill[1]) if kill else (0, edit[0])
    while True:
        s = rank_state(run_dir, rank)
        if s and s[1] >= step:
            break
        if p.poll() is not None or time.time() > deadline:
            notes.append(f"FAIL: rank {rank} never reached step {step}\n")
            return
        time.sleep(0.005)
    ranks, r = [], 0
    while (s := rank_state(run_dir, r)):
        ranks.append(s[0])
        r += 1
    signal_all(ranks, signal.SIGSTOP)
    at = max(rank_state(run_dir, q)[1] for q in range(len(ranks)))
    if kill:
        victim = rank_state(run_dir, kill[0])[0]
        os.kill(victim, signal.SIGKILL)
        notes.append(f"killed rank {kill[0]} (pid {victim}) at step {at + 1}\n")
    else:
        tmp = edit[2] + ".new"
        shutil.copyfile(edit[1], tmp)
        os.replace(tmp, edit[2])
        stop = os.path.join(run_dir, "stop")
        # A join writes the stop file; a loss of devices stops the job.
        until = time.time() + 3
        while not os.path.exists(stop) and time.time() < until:
            time.sleep(0.01)
        notes.append(f"replaced the cluster file at step {at + 1}\n")
    signal_all(ranks, signal.SIGCONT)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kill-rank")
    ap.add_argument("--cluster-at")
    ap.add_argument("--reference")
    ap.add_argument("--from", dest="first", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--expect-fail", action="store_true")
    argv = sys.argv[1:]
    cut = argv.index("--")
    opts, cmd = ap.parse_args(argv[:cut]), argv[cut + 1:]
    run_dir = arg(cmd, "--run-dir") or arg(cmd, "--checkpoint-dir") + "-elastic"
    kill = edit = None
    if opts.kill_rank:
        r, s = opts.kill_rank.split("@")
        kill = (int(r), int(s))
    if opts.cluster_at:
        s, src, dest = opts.cluster_at.split(":")
        edit = (int(s), src, dest)

    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    deadline = time.time() + opts.timeout
    out, err, notes = [], [], []
    reader = threading.Thread(target=lambda: err.extend(p.stderr.readlines()))
    reader.start()
    watcher = None
    if kill or edit:
        watcher = threading.Thread(target=change, args=(
            p, run_dir, kill, edit, deadline, notes))
        watcher.start()
    timer = threading.Timer(opts.timeout, lambda: [
        os.kill(q, signal.SIGKILL) for q in descendants(p.pid) + [p.pid]])
    timer.start()
    for line in p.stdout:
        out.append(line)
    p.wait()
    timed_out = not timer.is_alive()
    timer.cancel()
    reader.join()
    if watcher:
        watcher.join()
    text = "".join(out)
    with open(run_dir + ".log", "w") as log:
        log.write(text + "".join(err))
    print("".join(notes), end="")
    for line in out:
        if line.startswith("frenzy-elastic:"):
            print(line, end="")
    for line in err:
        if "error" in line:
            print(line, end="")
    if timed_out:
        print(f"FAIL: frenzy-elastic still ran after {opts.timeout:.0f} s")
        return 1
    if opts.expect_fail != (p.returncode != 0):
        print(f"FAIL: frenzy-elastic exited with {p.returncode}")
        return 1
    if opts.reference:
        want = {int(s): float(l) for s, l in
                STEP.findall(open(opts.reference).read())}
        got = {int(s): float(l) for s, l in STEP.findall(text)}
        steps = [s for s in sorted(want) if s >= opts.first]
        missing = [s for s in steps if s not in got]
        if missing or not steps:
            print(f"FAIL: steps {missing} missing from the elastic run")
            return 1
        worst = max(steps, key=lambda s: abs(got[s] - want[s]) / abs(want[s]))
        rel = abs(got[worst] - want[worst]) / abs(want[worst])
        ok = rel <= 1e-5
        print(f"{'ok' if ok else 'FAIL'}: steps {steps[0]}-{steps[-1]} match "
              f"the uninterrupted run, largest relative difference "
              f"{rel:.2e} at step {worst}")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
