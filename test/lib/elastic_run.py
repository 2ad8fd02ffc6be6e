#!/usr/bin/env python3
"""Drive a frenzy-elastic run through a change of devices (test helper).

usage: elastic_run.py [--kill-rank=R@STEP] [--kill-node=HOST@STEP]
                      [--cut-link=NETNS@STEP] [--cluster-at=STEP:SRC:DEST]
                      [--hup-at=STEP] [--reference=LOG] [--timeout=SEC]
                      [--expect-fail] -- FRENZY-ELASTIC-COMMAND...
Starts the command and reads its output. Every change happens at an exact
step boundary, decided by the ranks' own state, never by timing: the ranks
hold after the step the change is for (the launcher's test hold: they wait
while HOLD/step-STEP exists, FRENZY_TEST_HOLD_DIR=HOLD, HOLD being
RUN-hold), this script waits until every rank's status file
(RUN/ranks-N/rank-R: pid, step; RUN is the command's --run-dir or
CHECKPOINT-DIR-elastic) reports that step, makes the change and removes the
file to let them go. --kill-rank: after step STEP, SIGKILL rank R's process
(the others are let go at once: the supervisor finds out as in a real
run). --kill-node: the same for every rank whose status file names
HOST (its node's hostname: under netns_cluster.sh the node's namespace).
--cut-link: after step STEP, take the emulated node NETNS's link down
(`ip -n NETNS link set eth0 down`) and let the ranks go: the ranks on the
other nodes find out when their peers there stop answering. --cluster-at: after step STEP (rank 0's plan), copy SRC over DEST (the
cluster file the supervisor watches; written to a temporary name and
renamed, as an editor does) and let the ranks go once the supervisor has
acted (RUN/stop written for a join, or the ranks ended for a loss).
--hup-at: after that, after step STEP of the newest plan (RUN/ranks-N),
send the supervisor SIGHUP (read the cluster file again: devices lost
count as back), holding the ranks the same way until RUN/stop exists.
--copy-at-change=SRC:DEST: at the held step of the change, before making
it, copy the directory SRC to DEST (e.g. the last checkpoint, to compare its
bytes after the run). The command may also be a plain multi-rank
`frenzy-launch ... --checkpoint-dir=DIR --status-dir=DIR-elastic/ranks-0`:
its ranks hold and report the same way.
--timeout only bounds a run that never gets there (a failure).
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


def rank_state(run_dir, rank, gen=0, with_host=False):
    """(pid, step) from a rank's status file (and its host), or None."""
    try:
        w = open(os.path.join(run_dir, f"ranks-{gen}",
                              f"rank-{rank}")).read().split()
        return (int(w[3]), int(w[7])) + ((w[5],) if with_host else ())
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


def held(p, run_dir, gen, step, deadline, notes):
    """Waits until every rank of a generation has finished `step` (they
    hold there); returns their pids and the step they will run next, or
    None."""
    ranks, r = [], 0
    while rank_state(run_dir, r, gen):
        if wait_for_step(p, run_dir, r, step, deadline, notes, gen) is None:
            return None
        ranks.append(rank_state(run_dir, r, gen)[0])
        r += 1
    return ranks, step + 1


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def wait_for_supervisor(p, run_dir, ranks, deadline):
    # A join writes the stop file; a loss of devices ends the ranks.
    stop = os.path.join(run_dir, "stop")
    while (not os.path.exists(stop) and all(alive(q) for q in ranks)
           and p.poll() is None and time.time() < deadline):
        time.sleep(0.005)


def release(hold_dir, step):
    try:
        os.remove(os.path.join(hold_dir, f"step-{step}"))
    except FileNotFoundError:
        pass


def change(p, run_dir, hold_dir, kill, edit, hup, deadline, notes,
           kill_node=None, cut=None, copy=None):
    """Makes the changes asked for when their steps are reached."""
    if kill or edit or kill_node or cut:
        if kill:
            rank, step = kill
        elif edit:
            rank, step = 0, edit[0]
        else:
            rank, step = 0, (kill_node or cut)[1]
        if wait_for_step(p, run_dir, rank, step, deadline, notes, 0) is None:
            return
        got = held(p, run_dir, 0, step, deadline, notes)
        if got is None:
            return
        ranks, at = got
        if copy:
            shutil.copytree(copy[0], copy[1])
        if kill:
            victim = rank_state(run_dir, kill[0])[0]
            os.kill(victim, signal.SIGKILL)
            notes.append(f"killed rank {kill[0]} (pid {victim}) at step {at}\n")
        elif kill_node:
            states = [rank_state(run_dir, r, 0, True) for r in range(len(ranks))]
            victims = [r for r, s in enumerate(states) if s[2] == kill_node[0]]
            for r in victims:
                os.kill(states[r][0], signal.SIGKILL)
            notes.append(f"killed ranks {', '.join(map(str, victims))} "
                         f"(every rank on {kill_node[0]}) at step {at}\n")
        elif cut:
            subprocess.run(["ip", "-n", cut[0], "link", "set", "eth0", "down"],
                           check=True)
            notes.append(f"cut the link of {cut[0]} at step {at}\n")
        else:
            tmp = edit[2] + ".new"
            shutil.copyfile(edit[1], tmp)
            os.replace(tmp, edit[2])
            wait_for_supervisor(p, run_dir, ranks, deadline)
            notes.append(f"replaced the cluster file at step {at}\n")
        release(hold_dir, step)
    if hup:
        # The next plan's ranks: wait until they run.
        while newest_generation(run_dir) == 0 and p.poll() is None:
            time.sleep(0.005)
        gen = wait_for_step(p, run_dir, 0, hup, deadline, notes)
        if gen is None:
            return
        got = held(p, run_dir, gen, hup, deadline, notes)
        if got is None:
            return
        ranks, at = got
        p.send_signal(signal.SIGHUP)
        wait_for_supervisor(p, run_dir, ranks, deadline)
        notes.append(f"sent SIGHUP at step {at}\n")
        release(hold_dir, hup)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kill-rank")
    ap.add_argument("--copy-at-change")
    ap.add_argument("--kill-node")
    ap.add_argument("--cut-link")
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
    kill_node = cut = None
    if opts.kill_node:
        h, s = opts.kill_node.split("@")
        kill_node = (h, int(s))
    if opts.cut_link:
        h, s = opts.cut_link.split("@")
        cut = (h, int(s))
    if opts.cluster_at:
        s, src, dest = opts.cluster_at.split(":")
        edit = (int(s), src, dest)

    # The steps the ranks hold after (made before the run starts, so no
    # rank can pass one before this script is ready).
    hold_dir = run_dir + "-hold"
    os.makedirs(hold_dir, exist_ok=True)
    for step in ([kill[1]] if kill else []) + ([edit[0]] if edit else []) + \
            ([kill_node[1]] if kill_node else []) + ([cut[1]] if cut else []) + \
            ([opts.hup_at] if opts.hup_at else []):
        open(os.path.join(hold_dir, f"step-{step}"), "w").close()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True,
                         env=dict(os.environ, FRENZY_TEST_HOLD_DIR=hold_dir))
    deadline = time.time() + opts.timeout
    out, err, notes = [], [], []
    reader = threading.Thread(target=lambda: err.extend(p.stderr.readlines()))
    reader.start()
    watcher = None
    if kill or edit or opts.hup_at or kill_node or cut:
        watcher = threading.Thread(target=change, args=(
            p, run_dir, hold_dir, kill, edit, opts.hup_at, deadline, notes,
            kill_node, cut,
            opts.copy_at_change.split(":") if opts.copy_at_change else None))
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
