#!/usr/bin/env python3
"""Predicted against measured timeline of one plan.

Reads the trace frenzy-opt --emit=trace predicts and the one frenzy-launch
--trace=FILE measures (both Chrome-trace JSON, runtime/plan/TraceFormat.h)
and prints, per rank, the step time, busy time (compute and transfers) and
idle time (waits and gaps) of both, and per op class (matmul, attention,
elementwise, communication, optimizer, and 'runtime' for the runtime's own
work between kernels) the measured/predicted ratio. Measured figures are
means over the traced steps after the first --skip ones (warm-up) and before
the last (no next step follows it); the
predicted trace holds several steady steps, summarised the same way. The
measured step is also given on the CPU (the process's CPU time in the step,
the slowest rank's): on a machine shared with other work, what the step
would take if no other process took the CPU (an MPI rank's waits spin, so
they count).

usage: trace_compare.py PREDICTED.json MEASURED.json [--skip=N] [--json]
"""
import json
import signal
import statistics
import sys

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`

CLASSES = ["matmul", "attention", "elementwise", "communication", "optimizer",
           "runtime"]


def load(path, kind):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("trace_compare: %s: cannot read a trace: %s" % (path, e))
    meta = doc.get("otherData", {}) if isinstance(doc, dict) else {}
    if meta.get("frenzy_trace") != kind:
        sys.exit("trace_compare: %s: not a %s Frenzy trace (make it with %s)" %
                 (path, kind, "frenzy-opt --emit=trace" if kind == "predicted"
                  else "frenzy-launch --trace=FILE"))
    return meta["ranks"], [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def steps_of(events, ranks, skip, last=False):
    """Per rank, per traced step: (duration, busy, class times, CPU time,
    forward/backward wall time, their CPU time) in us. `last`: keep the
    run's last step (a measured trace's is left out: no next step follows
    it, so a rank whose turn on a shared core comes late ends it early -
    3.5 against 9.3 ms - and the predicted trace leaves its last out too)."""
    out = {r: [] for r in range(ranks)}
    by_pid = {}
    for e in events:
        by_pid.setdefault(e["pid"], []).append(e)
    for r in range(ranks):
        evs = by_pid.get(r, [])
        steps = sorted((e for e in evs if e["cat"] == "step"),
                       key=lambda e: e["ts"])
        if not last and len(steps) > skip + 1:
            steps = steps[:-1]
        for s in steps[skip:] if len(steps) > skip else steps:
            lo, hi = s["ts"], s["ts"] + s["dur"]
            busy, cls = 0.0, dict.fromkeys(CLASSES, 0.0)
            fb, fb_cpu = 0.0, 0.0
            for e in evs:
                if e["cat"] in ("step", "wait", "bubble", "side-task"):
                    continue
                # The part of the slice inside the step: a slice the step
                # does not contain (the previous step's optimizer, ending
                # where this step starts) counts only what overlaps. (A
                # fixed tolerance does not fit both traces: the predicted
                # one is in a GPU's microseconds, where a whole optimizer
                # can last less than one.)
                a, b = max(e["ts"], lo), min(e["ts"] + e["dur"], hi)
                if b <= a or e["dur"] <= 0:
                    continue
                part = (b - a) / e["dur"]
                busy += b - a
                if e["name"].startswith(("forward mb", "backward mb")):
                    fb += b - a
                    fb_cpu += part * e.get("args", {}).get("cpu_us", e["dur"])
                if e["cat"] == "comm":
                    cls["communication"] += b - a
                    continue
                inside = 0.0
                for c in CLASSES[:5]:
                    v = part * e.get("args", {}).get(c + "_us", 0.0)
                    cls[c] += v
                    inside += v
                cls["runtime"] += max(0.0, (b - a) - inside)
            out[r].append((s["dur"], busy, cls,
                           s.get("args", {}).get("cpu_us", s["dur"]), fb, fb_cpu))
    return out


def mean_of(rows, f):
    """The mean over a rank's steps: ranks that share cores take turns in
    patterns that repeat every 2-3 steps (a rank's steps alternate, e.g.,
    7 and 17 ms), so neither one step nor a median is the period a run's
    throughput shows; the mean is (the bench takes the median over runs)."""
    return statistics.fmean(f(x) for x in rows) if rows else float("nan")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    skip = 1
    for a in sys.argv[1:]:
        if a.startswith("--skip="):
            skip = int(a[7:])
    as_json = "--json" in sys.argv
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    pranks, pev = load(args[0], "predicted")
    mranks, mev = load(args[1], "measured")
    if pranks != mranks:
        sys.exit("trace_compare: the predicted trace has %d ranks, the "
                 "measured %d: traces of different plans" % (pranks, mranks))
    pred = steps_of(pev, pranks, 0, last=True)
    meas = steps_of(mev, mranks, skip)
    for r in range(pranks):
        if not pred[r] or not meas[r]:
            sys.exit("trace_compare: rank %d has no step in one of the traces"
                     % r)
    # The step: per rank the mean of its steps, then the slowest rank's.
    # Steps overlap (nothing waits for every rank between two steps), so
    # one traced step's slowest rank is the period plus whichever rank was
    # late that step (with ranks sharing cores, by milliseconds). The
    # predicted trace holds several steady steps, summarised the same way.
    nsteps = min(len(meas[r]) for r in range(mranks))
    step_meas = max(mean_of(meas[r], lambda x: x[0]) for r in range(mranks))
    step_pred = max(mean_of(pred[r], lambda x: x[0]) for r in range(pranks))
    step_cpu = max(mean_of(meas[r], lambda x: x[3]) for r in range(mranks))
    result = {"ranks": [], "classes": {}, "step_predicted_ms": step_pred / 1e3,
              "step_measured_ms": step_meas / 1e3,
              "step_error": step_pred / step_meas - 1,
              "step_cpu_ms": step_cpu / 1e3,
              "cpu_error": step_pred / step_cpu - 1,
              "steps_measured": nsteps}
    for r in range(pranks):
        p_step = mean_of(pred[r], lambda x: x[0])
        p_busy = mean_of(pred[r], lambda x: x[1])
        m_step = mean_of(meas[r], lambda x: x[0])
        m_busy = mean_of(meas[r], lambda x: x[1])
        row = {"rank": r, "pred_step_ms": p_step / 1e3, "meas_step_ms": m_step / 1e3,
               "pred_busy_ms": p_busy / 1e3, "meas_busy_ms": m_busy / 1e3,
               "pred_idle_ms": (step_pred - p_busy) / 1e3,
               "meas_idle_ms": (step_meas - m_busy) / 1e3,
               "pred_fb_ms": mean_of(pred[r], lambda x: x[4]) / 1e3,
               "meas_fb_ms": mean_of(meas[r], lambda x: x[4]) / 1e3,
               "meas_fb_cpu_ms": mean_of(meas[r], lambda x: x[5]) / 1e3}
        # Idle against the step: both as shares of their own step.
        row["idle_diff_of_step"] = abs((step_pred - p_busy) / step_pred -
                                       (step_meas - m_busy) / step_meas)
        # The same per measured step (its idle over its length), median
        # and mean over the steps: a step a stall hit (under SCHED_FIFO
        # the kernel's RT throttling stops every rank for 50 ms now and
        # then) moves the mean, not the median.
        shares = [(x[0] - x[1]) / x[0] for x in meas[r] if x[0] > 0]
        row["pred_idle_share"] = (step_pred - p_busy) / step_pred
        row["meas_idle_share_median"] = statistics.median(shares)
        row["meas_idle_share_mean"] = statistics.fmean(shares)
        result["ranks"].append(row)
    for c in CLASSES:
        pc = sum(mean_of(pred[r], lambda x: x[2][c]) for r in range(pranks))
        mc = sum(mean_of(meas[r], lambda x: x[2][c]) for r in range(mranks))
        result["classes"][c] = {"pred_ms": pc / 1e3, "meas_ms": mc / 1e3,
                                "ratio": mc / pc if pc > 0 else None}
    if as_json:
        print(json.dumps(result))
        return
    print("step: predicted %.2f ms, measured %.2f ms (mean of %d steps): "
          "%+.1f%%; on the CPU %.2f ms: %+.1f%%" %
          (step_pred / 1e3, step_meas / 1e3, nsteps, 100 * result["step_error"],
           step_cpu / 1e3, 100 * result["cpu_error"]))
    print("%-5s %11s %11s %11s %11s %11s %11s %9s" %
          ("rank", "step pred", "step meas", "busy pred", "busy meas",
           "idle pred", "idle meas", "idle diff"))
    for row in result["ranks"]:
        print("%-5d %8.2f ms %8.2f ms %8.2f ms %8.2f ms %8.2f ms %8.2f ms %8.1f%%"
              % (row["rank"], row["pred_step_ms"], row["meas_step_ms"],
                 row["pred_busy_ms"], row["meas_busy_ms"], row["pred_idle_ms"],
                 row["meas_idle_ms"], 100 * row["idle_diff_of_step"]))
    print("forward+backward per rank (predicted / measured wall / measured "
          "on the CPU): " + ", ".join(
              "%d: %.2f/%.2f/%.2f ms" % (row["rank"], row["pred_fb_ms"],
                                         row["meas_fb_ms"], row["meas_fb_cpu_ms"])
              for row in result["ranks"]))
    print("%-14s %12s %12s %18s" % ("op class", "predicted", "measured",
                                     "measured/predicted"))
    for c, v in result["classes"].items():
        ratio = "%.2f" % v["ratio"] if v["ratio"] is not None else "-"
        print("%-14s %9.2f ms %9.2f ms %18s" % (c, v["pred_ms"], v["meas_ms"],
                                                ratio))


main()
