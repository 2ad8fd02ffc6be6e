#!/usr/bin/env python3
"""Kill a training run after a checkpoint, resume it, compare (test helper).

usage: kill_resume.py DIR STEPS EVERY -- FRENZY-LAUNCH-COMMAND...
Runs the command uninterrupted for STEPS steps; runs it again with
--checkpoint-dir=DIR/ckpt --checkpoint-every=EVERY and kills it (SIGKILL to
mpirun and every process below it) once the checkpoint of step EVERY is
reported. The ranks wait after step EVERY until killed (the launcher's test
hold, FRENZY_TEST_HOLD_DIR with DIR/hold/step-EVERY), so the kill lands
after that checkpoint and before any later one however slowly this script
gets to run on a loaded machine. Then it resumes with --resume=DIR/ckpt;
the resumed steps EVERY+1..STEPS must have the uninterrupted run's losses
(within 1e-6 relative). Logs go to DIR.
"""
import os
import re
import signal
import subprocess
import sys

from proctree import descendants


def kill_all(pid):
    for q in [pid] + descendants(pid):
        try:
            os.kill(q, signal.SIGKILL)
        except ProcessLookupError:
            pass


def losses(text):
    return {int(m.group(1)): float(m.group(2)) for m in re.finditer(
        r"^step\s+(\d+)/\d+ \| loss (\S+)", text, re.M)}


def main():
    out, steps, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    cmd = sys.argv[sys.argv.index("--") + 1:] + [f"--steps={steps}"]
    ckpt = os.path.join(out, "ckpt")
    full = subprocess.run(cmd, capture_output=True, text=True, check=True)
    open(os.path.join(out, "full.log"), "w").write(full.stdout)

    run = cmd + [f"--checkpoint-dir={ckpt}", f"--checkpoint-every={every}"]
    hold = os.path.join(out, "hold")
    os.makedirs(hold, exist_ok=True)
    open(os.path.join(hold, f"step-{every}"), "w").close()
    p = subprocess.Popen(run, stdout=subprocess.PIPE, text=True,
                         start_new_session=True,
                         env=dict(os.environ, FRENZY_TEST_HOLD_DIR=hold))
    killed_log = []
    for line in p.stdout:
        killed_log.append(line)
        if line.startswith(f"checkpoint: step {every} written"):
            kill_all(p.pid)
            break
    p.wait()
    open(os.path.join(out, "killed.log"), "w").write("".join(killed_log))
    if p.returncode != -signal.SIGKILL:
        print(f"FAIL: the run was not killed (exit {p.returncode})")
        return 1
    latest = open(os.path.join(ckpt, "latest")).read().split()
    print(f"killed after the checkpoint of step {every}; latest: {' '.join(latest)}")

    resumed = subprocess.run(cmd + [f"--resume={ckpt}"], capture_output=True,
                             text=True, check=True)
    open(os.path.join(out, "resumed.log"), "w").write(resumed.stdout)
    a, b = losses(full.stdout), losses(resumed.stdout)
    want = list(range(every + 1, steps + 1))
    if sorted(b) != want:
        print(f"FAIL: the resumed run logged steps {sorted(b)}, expected {want}")
        return 1
    worst = max(want, key=lambda s: abs(a[s] - b[s]) / abs(a[s]))
    err = abs(a[worst] - b[worst]) / abs(a[worst])
    ok = err <= 1e-6
    print(f"{'ok' if ok else 'FAIL'}: steps {every + 1}-{steps} resumed, "
          f"largest relative difference {err:.2e} at step {worst}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
