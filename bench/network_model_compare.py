#!/usr/bin/env python3
"""Predicted against measured network times of one plan across nodes.

Reads the trace frenzy-opt --emit=trace predicts and the one frenzy-launch
--trace=FILE measures (runtime/plan/TraceFormat.h; the measured one's ranks
are on one clock, runtime/dist/TraceGather.h) and prints one line per
figure, predicted / measured / ratio, each a median over the steps after
--skip (warm-up) and before the last:

  step           the slowest rank's step
  dp all-reduce  the "dp all-reduce" slice (from every member's arrival to
                 its return: the link's time, not the wait for the others)
  transfer       a stage-boundary message, from the sender's post ("send"
                 starts) to the receiver having it ("recv" ends), over the
                 messages whose receiver was already waiting when the send
                 started (otherwise a late receiver's pickup hides the time
                 on the link); all messages when none was

usage: network_model_compare.py PREDICTED.json MEASURED.json [--skip=N] [--label=TEXT]
"""
import json
import re
import statistics
import sys


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("network_model_compare: %s: cannot read a trace: %s" % (path, e))
    return [e for e in doc.get("traceEvents", []) if e.get("ph") == "X"]


def steps(events, skip):
    """Per step index: (start, end) of each rank's step slice."""
    per_rank = {}
    for e in events:
        if e["cat"] == "step":
            per_rank.setdefault(e["pid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for r in per_rank:
        per_rank[r].sort()
        n = len(per_rank[r])
        per_rank[r] = per_rank[r][skip:n - 1] if n > skip + 1 else per_rank[r]
    return per_rank


def within(per_rank, r, ts):
    return any(a <= ts < b for a, b in per_rank.get(r, []))


SEND = re.compile(r"^send mb (\d+) t(\d+) to (\d+)$")
RECV = re.compile(r"^recv mb (\d+) t(\d+) from (\d+)$")
WAIT = re.compile(r"^wait recv mb (\d+) t(\d+) from (\d+)$")


def figures(events, skip):
    per_rank = steps(events, skip)
    nsteps = min(len(v) for v in per_rank.values())
    step = [max(per_rank[r][i][1] - per_rank[r][i][0] for r in per_rank)
            for i in range(nsteps)]
    dp = [e["dur"] for e in events
          if e["name"] == "dp all-reduce" and within(per_rank, e["pid"], e["ts"])]
    sends, recvs, waits = {}, {}, {}
    for e in events:
        for pat, into in ((SEND, sends), (RECV, recvs), (WAIT, waits)):
            m = pat.match(e["name"])
            if m:
                mb, t, peer = map(int, m.groups())
                src, dst = (e["pid"], peer) if into is sends else (peer, e["pid"])
                into.setdefault((src, dst, t, mb), []).append(e)
    waited, every = [], []
    for key, ss in sends.items():
        rs, ws = recvs.get(key, []), waits.get(key, [])
        for s in ss:
            if not within(per_rank, s["pid"], s["ts"]):
                continue
            # The receive of this send: the first that ends after it starts.
            later = [r for r in rs if r["ts"] + r["dur"] >= s["ts"]]
            if not later:
                continue
            r = min(later, key=lambda r: r["ts"])
            t = r["ts"] + r["dur"] - s["ts"]
            every.append(t)
            w = [x for x in ws if x["ts"] <= s["ts"] <= x["ts"] + x["dur"] + 1]
            if w or r["ts"] <= s["ts"]:
                waited.append(t)
    transfer = waited or every
    med = lambda v: statistics.median(v) / 1e3 if v else None
    return {"step": med(step), "dp all-reduce": med(dp), "transfer": med(transfer)}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    skip = 2
    label = ""
    for a in sys.argv[1:]:
        if a.startswith("--skip="):
            skip = int(a[7:])
        elif a.startswith("--label="):
            label = a[8:]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    pred, meas = figures(load(args[0]), 0), figures(load(args[1]), skip)
    for k in ("step", "dp all-reduce", "transfer"):
        p, m = pred[k], meas[k]
        if p is None and m is None:
            continue
        ratio = "%.2f" % (p / m) if p and m else "-"
        print("%s%-14s predicted %8s ms  measured %8s ms  predicted/measured %s" % (
            label, k, "%.3f" % p if p is not None else "-",
            "%.3f" % m if m is not None else "-", ratio))


if __name__ == "__main__":
    main()
