#!/usr/bin/env python3
"""Drives `frenzy-sched serve` through the service tests (test helper).

usage: serve_drill.py MODE --sched=BIN --cluster=C.yaml --model=M.onnx
                      --data=TOKENS --work=DIR [--ref3=LOG --ref40=LOG]
MODE recovery: 19 jobs of 3 steps and one of 40 (submitted first), the
  service SIGKILLed while the long job holds after its checkpoint of step
  5 (and its processes killed too, as if its node had died) and
  restarted: every job must finish exactly once with the losses of an
  uninterrupted run.
MODE users: a second user (created with useradd) runs a job as itself,
  sees only its own jobs and may not cancel root's.
MODE errors: bad submissions and a job that crashes on every attempt.
MODE resize: the default policy (frenzy, --restart-cost=0) with one long
  job alone on the cluster, then a short one: the long job is resized
  through checkpoint, re-plan and resume (its stop file); the service is
  SIGKILLed once the resize is asked and restarted; both jobs finish
  once with the losses of an uninterrupted run (--ref3, --ref80).
MODE slurm: the recovery drill with 5 jobs through sbatch (under
  netns_slurm.sh), then a controller that does not answer.
Every wait is on state the service reports (its socket, its status), with
a deadline; never a bare sleep.
"""
import json
import os
import pwd
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from compare_losses import losses  # noqa: E402

DEADLINE_S = 240


def arg(name, default=None):
    for a in sys.argv[2:]:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return default


SCHED, CLUSTER, MODEL, DATA, WORK = (arg(n) for n in
                                     ("sched", "cluster", "model", "data",
                                      "work"))
STATE = os.path.join(WORK, "state")
SOCK = os.path.join(STATE, "serve.sock")


def use_state(name):
    global STATE, SOCK
    STATE = os.path.join(WORK, name)
    SOCK = os.path.join(STATE, "serve.sock")


def wait_for(what, cond, limit=DEADLINE_S):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.05)  # a poll interval, not a race: cond is re-checked
    sys.exit(f"FAIL: timed out waiting for {what}")


def listening():
    path = os.path.join(WORK, "serve.out")
    return open(path).read().count("listening") if os.path.exists(path) else 0


def serve(*extra, cluster=None, policy="fifo"):
    before = listening()
    out = open(os.path.join(WORK, "serve.out"), "a")
    p = subprocess.Popen([SCHED, "serve", f"--state-dir={STATE}",
                          f"--cluster={cluster or CLUSTER}", f"--policy={policy}",
                          *extra],
                         stdout=out, stderr=subprocess.STDOUT)
    wait_for("the service to listen",
             lambda: p.poll() is not None or listening() > before)
    if p.poll() is not None:
        sys.exit("FAIL: serve exited: " +
                 open(os.path.join(WORK, "serve.out")).read())
    return p


def client(*args, user=None):
    cmd = [SCHED, *args, f"--socket={SOCK}"]
    if user:
        cmd = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
               "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True)


def submit(*args, user=None):
    r = client("submit", *args, user=user)
    if r.returncode:
        sys.exit("FAIL: submit: " + r.stderr)
    return int(r.stdout)


def status(user=None):
    r = client("status", "--json", user=user)
    if r.returncode:
        sys.exit("FAIL: status: " + r.stderr)
    return {j["id"]: j for j in json.loads(r.stdout)["jobs"]}


def all_final(user=None):
    s = status(user)
    return s if all(j["state"] not in ("queued", "running")
                    for j in s.values()) else None


def session_pids(sid):
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                stat = open(f"/proc/{p}/stat").read()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[3]) == sid:
                out.append(int(p))
    return out


def zombie(pid):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


def hold_at(step):
    """Every job's ranks wait after their checkpoint of `step` while the
    returned file exists (frenzy-launch's FRENZY_TEST_HOLD_DIR, inherited
    through the service, and through sbatch and srun): the drill acts on a
    job that is still running however slow the machine is (40 steps of the
    tiny model take 2 s). The 3-step jobs never reach it."""
    hold = os.path.join(WORK, "hold")
    os.makedirs(hold, exist_ok=True)
    path = os.path.join(hold, f"step-{step}")
    open(path, "w").close()
    os.environ["FRENZY_TEST_HOLD_DIR"] = hold
    return path


def wait_checkpoint(job, step):
    """Waits until job `job`'s log says it checkpointed `step`."""
    log = os.path.join(status()[job]["dir"], "log")
    wait_for(f"job {job} to checkpoint step {step}", lambda: os.path.exists(log)
             and f"checkpoint: step {step} " in open(log).read())


def kill_beside_long_job(svc, shorts):
    """Submits a 40-step job, then `shorts` 3-step ones; once the long job
    holds at step 5 (hold_at(5)), SIGKILLs the service. Returns the long
    job's id and the launch handle its allocation recorded."""
    ids = [submit(MODEL, "--steps=40", f"--data={DATA}")]
    ids += [submit(MODEL, "--steps=3", f"--data={DATA}") for _ in range(shorts)]
    long_job = ids[0]
    wait_checkpoint(long_job, 5)
    svc.send_signal(signal.SIGKILL)
    svc.wait()
    db = sqlite3.connect(os.path.join(STATE, "queue.db"))
    running = db.execute("SELECT job, handle FROM allocations").fetchall()
    db.close()
    return long_job, [h for j, h in running if j == long_job][0], len(running)


def recovery():
    t0 = time.monotonic()
    hold = hold_at(5)
    svc = serve("--max-restarts=2")
    long_job, victim, recorded = kill_beside_long_job(svc, 19)
    # Its node "dies" while the service is down: every process of the job
    # (the service is down: its database says which).
    sid = int(victim.split(":")[1])
    for pid in session_pids(sid):
        os.kill(pid, signal.SIGKILL)
    # kill() returns before the processes are gone: on a busy machine a
    # service restarted at once could still see the job alive and adopt it.
    # The node is dead once nothing of the session runs (zombies count as
    # gone: nobody reaps them until the service does).
    wait_for(f"job {long_job}'s processes to end",
             lambda: not [p for p in session_pids(sid) if not zombie(p)])
    print(f"killed: the service and job {long_job}; "
          f"{recorded} allocations recorded")
    os.remove(hold)
    t1 = time.monotonic()
    svc = serve("--max-restarts=2")
    final = wait_for("every job to end", all_final)
    t2 = time.monotonic()
    svc.send_signal(signal.SIGTERM)
    svc.wait()
    report(final, long_job)
    sys.stderr.write(f"timing: first service {t1 - t0:.1f} s, restart to "
                     f"all done {t2 - t1:.1f} s, total {t2 - t0:.1f} s\n")


def report(final, long_job):
    """The recovery drills' checks: the restarts' recovery lines, every job
    done once (one done event, one "done:" in its log) with the losses of
    an uninterrupted run."""
    for line in open(os.path.join(WORK, "serve.out")):
        if "recovery took" in line:
            print("serve:", line.split("serve: ")[1].strip())
    states = [j["state"] for j in final.values()]
    print(f"jobs: {len(final)}, done {states.count('done')}")
    db = sqlite3.connect(os.path.join(STATE, "queue.db"))
    dones = db.execute("SELECT job, COUNT(*) FROM events WHERE kind='done' "
                       "GROUP BY job").fetchall()
    leftover = db.execute("SELECT COUNT(*) FROM allocations").fetchone()[0]
    print(f"done events: {sorted(set(n for _, n in dones))} per job, "
          f"{len(dones)} jobs; allocations left {leftover}")
    print(f"job {long_job}: attempts {final[long_job]['attempts']}")
    check_losses(final, long_job)


def check_losses(final, long_job, ref_long="ref40"):
    """Each job's losses against the uninterrupted run of its length."""
    ref3, ref40 = losses(arg("ref3")), losses(arg(ref_long))
    matched = 0
    for i, j in final.items():
        text = open(os.path.join(j["dir"], "log")).read()
        got = losses(os.path.join(j["dir"], "log"))
        ref = ref40 if i == long_job else ref3
        ok = sorted(got) == sorted(ref) and all(
            abs(got[s] - ref[s]) <= 1e-5 * abs(ref[s]) for s in ref)
        matched += ok and text.count("\ndone: ") == 1
        if not ok:
            print(f"job {i}: losses differ: {got} vs {ref}")
    print(f"losses: {matched} of {len(final)} jobs equal to an "
          f"uninterrupted run, each finished once")


def resize():
    use_state("resize")
    # The long job holds after its checkpoint of step 4 until the drill
    # lets it go (frenzy-launch's FRENZY_TEST_HOLD_DIR, inherited through
    # the service), so the short job always meets it there; the short one
    # (3 steps) never reaches step 4.
    hold = hold_at(4)
    svc = serve("--restart-cost=0", policy="frenzy")
    long_job = submit(MODEL, "--steps=80", f"--data={DATA}")
    wait_checkpoint(long_job, 4)
    print(f"alone: job {long_job} on {status()[long_job].get('nodes')}")
    short = submit(MODEL, "--steps=3", f"--data={DATA}")

    def resize_asked():
        db = sqlite3.connect(os.path.join(STATE, "queue.db"))
        n = db.execute("SELECT COUNT(*) FROM events WHERE kind='resize'"
                       ).fetchone()[0]
        db.close()
        return n
    # The service dies with a resize in flight: its restart finishes it
    # from the stop file (the job stopped meanwhile, or stops later).
    wait_for("a resize to be asked", resize_asked)
    svc.send_signal(signal.SIGKILL)
    svc.wait()
    os.remove(hold)  # it stops while none serves
    print("killed: the service, with a resize asked")
    svc = serve("--restart-cost=0", policy="frenzy")
    final = wait_for("both jobs to end", all_final)
    svc.send_signal(signal.SIGTERM)
    svc.wait()
    db = sqlite3.connect(os.path.join(STATE, "queue.db"))
    for job in (long_job, short):
        for kind, detail in db.execute(
                "SELECT kind, detail FROM events WHERE job=? AND kind IN "
                "('resize', 'requeued', 'started', 'done') ORDER BY id",
                (job,)):
            print(f"job {job}: {kind}: {detail}")
    print(f"states: {sorted(j['state'] for j in final.values())}")
    check_losses(final, long_job, "ref80")


def slurm_jobs():
    """Slurm's jobs of this service by frenzy job: the controller lists
    finished jobs too (-t all, for MinJobAge)."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%j"],
                         capture_output=True, text=True,
                         check=True).stdout.split()
    per = {}
    for name in out:
        if "-job-" in name:
            job = int(name.split("-job-")[1].split(".")[0])
            per[job] = per.get(job, 0) + 1
    return dict(sorted(per.items()))


def events(job, kind):
    db = sqlite3.connect(os.path.join(STATE, "queue.db"))
    rows = db.execute("SELECT detail FROM events WHERE job=? AND kind=? "
                      "ORDER BY id", (job, kind)).fetchall()
    db.close()
    return [d for d, in rows]


def slurm():
    """4 jobs of 3 steps and one of 40 through sbatch (netns_slurm.sh's
    cluster); while the long job holds after its checkpoint of step 5 the
    service is SIGKILLed and the long job cancelled in Slurm (its node
    "died"): the restarted service finds it CANCELLED, resumes it from its
    checkpoint and adopts or collects the others. Then slurmctld is stopped
    (SIGSTOP: it takes connections and never answers): a submission's
    attempt fails with the timeout's line, status still answers; once it
    runs again the job runs."""
    t0 = time.monotonic()
    hold = hold_at(5)
    opts = ("--backend=slurm", "--max-restarts=2", "--slurm-timeout=20")
    svc = serve(*opts)
    long_job, handle, recorded = kill_beside_long_job(svc, 4)
    victim = handle.split(":")[1]
    subprocess.run(["scancel", victim], check=True)
    wait_for(f"slurm job {victim} to leave the queue",
             lambda: not subprocess.run(["squeue", "-h", "-j", victim],
                                        capture_output=True,
                                        text=True).stdout.strip())
    print(f"killed: the service; slurm job of job {long_job} cancelled; "
          f"{recorded} allocations recorded")
    os.remove(hold)
    t1 = time.monotonic()
    svc = serve(*opts)
    final = wait_for("every job to end", all_final)
    t2 = time.monotonic()
    report(final, long_job)
    print(f"slurm jobs per job: {slurm_jobs()}")
    print(f"job {long_job} requeued: {events(long_job, 'requeued')}")
    svc.send_signal(signal.SIGTERM)
    svc.wait()
    # The controller stops answering.
    ctld = int(open(os.path.join(os.environ["NETNS_SLURM_DIR"],
                                 "slurmctld.pid")).read())
    svc = serve("--backend=slurm", "--max-restarts=3", "--slurm-timeout=3")
    os.kill(ctld, signal.SIGSTOP)
    try:
        late = submit(MODEL, "--steps=3", f"--data={DATA}")
        why = wait_for("an attempt to fail",
                       lambda: events(late, "requeued"))
        print(f"slurmctld stopped: job {late} requeued: {why[0]}")
        print(f"status answers: jobs {sorted(status())}")
    finally:
        os.kill(ctld, signal.SIGCONT)
    final = wait_for("every job to end", all_final)
    print(f"slurmctld back: job {late} {final[late]['state']} after "
          f"{final[late]['attempts']} attempts")
    # Submissions the stopped controller took after sbatch had timed out
    # were never recorded: cancelled (held, they never ran).
    rows = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%j %T"],
                          capture_output=True, text=True,
                          check=True).stdout.split("\n")
    mine = sorted(r.split("-job-")[1] for r in rows
                  if f"-job-{late}." in r)
    print(f"job {late}'s slurm jobs: {mine}")
    svc.send_signal(signal.SIGTERM)
    svc.wait()
    t3 = time.monotonic()
    sys.stderr.write(f"timing: first service {t1 - t0:.1f} s, restart to "
                     f"all done {t2 - t1:.1f} s, controller drill "
                     f"{t3 - t2:.1f} s, total {t3 - t0:.1f} s\n")


def users():
    name = "frenzy-sched-test"
    try:
        other = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", name], check=True)
        other = pwd.getpwnam(name)
    os.chmod(WORK, 0o755)
    svc = serve("--socket-mode=0666")
    mine = submit(MODEL, "--steps=400", f"--data={DATA}")
    theirs = submit(MODEL, "--steps=2", f"--data={DATA}", user=other)
    r = client("cancel", str(mine), user=other)
    print(f"other user cancels job {mine}: exit {r.returncode}: "
          f"{r.stderr.strip()}")
    print(f"other user sees jobs {sorted(status(other))}; root sees "
          f"{sorted(status())}")
    wait_for("the other user's job to end", lambda: all_final(other))
    j = status(other)[theirs]
    st = os.stat(j["dir"])
    print(f"job {theirs}: {j['state']}, directory owner "
          f"{'other' if st.st_uid == other.pw_uid else st.st_uid} mode "
          f"{oct(st.st_mode & 0o777)}")
    r = client("cancel", str(mine))
    print(f"root cancels job {mine}: {r.stdout.strip()}")
    print(f"job {mine}: {status()[mine]['state']}")
    svc.send_signal(signal.SIGTERM)
    svc.wait()


def errors():
    svc = serve("--max-restarts=1")
    junk = os.path.join(WORK, "junk.tokens")
    with open(junk, "wb") as f:
        f.write(b"not tokens" * 10)
    crash = submit(MODEL, "--steps=2", f"--data={junk}")
    with open(os.path.join(WORK, "bad.onnx"), "w") as f:
        f.write("not a model")
    for args in ([os.path.join(WORK, "bad.onnx"), "--steps=2",
                  f"--data={DATA}"],
                 [MODEL, "--steps=2", f"--data={DATA}", "--deadline=+-60"],
                 [MODEL, "--steps=2"]):
        print(client("submit", *args).stderr.strip())
    good = submit(MODEL, "--steps=2", f"--data={DATA}")
    final = wait_for("both jobs to end", all_final)
    for i in (crash, good):
        print(f"job {i}: {final[i]['state']} after {final[i]['attempts']} "
              f"attempts: {final[i]['reason']}")
    print(f"jobs in the queue: {sorted(final)}")
    svc.send_signal(signal.SIGTERM)
    svc.wait()
    # A cluster whose only device is too small for the model.
    use_state("small")
    svc = serve(cluster=arg("small-cluster"))
    print(client("submit", MODEL, "--steps=2",
                 f"--data={DATA}").stderr.strip())
    print(f"jobs in the queue: {sorted(status())}")
    svc.send_signal(signal.SIGTERM)
    svc.wait()


if __name__ == "__main__":
    {"recovery": recovery, "users": users, "errors": errors,
     "resize": resize, "slurm": slurm}[sys.argv[1]]()
