#!/usr/bin/env python3
"""Drive a frenzy-elastic run through a change of devices (test helper).

usage: elastic_run.py [--kill-rank=R@STEP] [--cluster-at=STEP:SRC:DEST]
                      [--hup-at=STEP] [--reference=LOG] [--timeout=SEC]
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
ranks to stop (RUN/stop; at most 3 s) before letting them go. --hup-at:
after that, once rank 0 of the newest plan (RUN/ranks-N) has finished step
STEP, send the supervisor SIGHUP (read the cluster file again: devices
lost count as back), freezing the ranks the same way.
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


def rank_state(run_dir, rank, gen=0):
    """(pid, step) from a rank's status file, or None."""
    try:
        w = open(os.path.join(run_dir, f"ranks-{gen}",
                              f"rank-{rank}")).read().split()
        return int(w[3]), int(w[7])
    except (OSError, IndexError, ValueError):
        return None


def signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def newest_generation(run_dir):
    gens = [int(d[6:]) for d in os.listdir(run_dir) if d.startswith("ranks-")]
    return max(gens) if gens else 0


def wait_for_step(p, run_dir, rank, step, deadline, notes, gen=None):
    """Waits until `rank` of generation `gen` (None: the newest) has
    finished `step`; returns the generation, or None."""
    while True:
        g = newest_generation(run_dir) if gen is None else gen
        s = rank_state(run_dir, rank, g)
        if s and s[1] >= step:
            return g
        if p.poll() is not None or time.time() > deadline:
            notes.append(f"FAIL: rank {rank} never reached step {step}\n")
            return None
        time.sleep(0.005)


def freeze(run_dir, gen):
    """SIGSTOPs every rank of a generation; returns their pids and the
    step being run."""
    ranks, r = [], 0
    while (s := rank_state(run_dir, r, gen)):
        ranks.append(s[0])
        r += 1
    signal_all(ranks, signal.SIGSTOP)
    at = max(rank_state(run_dir, q, gen)[1] for q in range(len(ranks)))
    return ranks, at + 1


def wait_for_stop_file(run_dir, deadline):
    # A join writes the stop file; a loss of devices stops the job.
    stop = os.path.join(run_dir, "stop")
    until = min(deadline, time.time() + 3)
    while not os.path.exists(stop) and time.time() < until:
        time.sleep(0.01)


def change(p, run_dir, kill, edit, hup, deadline, notes):
    """Makes the changes asked for when their steps are reached."""
    if kill or edit:
        rank, step = (kill[0], kill[1]) if kill else (0, edit[0])
        if wait_for_step(p, run_dir, rank, step, deadline, notes, 0) is None:
            return
        ranks, at = freeze(run_dir, 0)
        if kill:
            victim = rank_state(run_dir, kill[0])[0]
            os.kill(victim, signal.SIGKILL)
            notes.append(f"killed rank {kill[0]} (pid {victim}) at step {at}\n")
        else:
            tmp = edit[2] + ".new"
            shutil.copyfile(edit[1], tmp)
            os.replace(tmp, edit[2])
            wait_for_stop_file(run_dir, deadline)
            notes.append(f"replaced the cluster file at step {at}\n")
        signal_all(ranks, signal.SIGCONT)
    if hup:
        # The next plan's ranks: wait until they run.
        while newest_generation(run_dir) == 0 and p.poll() is None:
            time.sleep(0.005)
        gen = wait_for_step(p, run_dir, 0, hup, deadline, notes)
        if gen is None:
            return
        ranks, at = freeze(run_dir, gen)
        p.send_signal(signal.SIGHUP)
        wait_for_stop_file(run_dir, deadline)
        notes.append(f"sent SIGHUP at step {at}\n")
        signal_all(ranks, signal.SIGCONT)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kill-rank")
    ap.add_argument("--cluster-at")
    ap.add_argument("--hup-at", type=int)
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
    if kill or edit or opts.hup_at:
        watcher = threading.Thread(target=change, args=(
            p, run_dir, kill, edit, opts.hup_at, deadline, notes))
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
