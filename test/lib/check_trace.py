#!/usr/bin/env python3
"""Validates a Frenzy timeline (frenzy-launch --trace, frenzy-opt --emit=trace)
as Chrome-trace JSON: a traceEvents list whose complete events ("X") carry a
name, category, numeric ts/dur >= 0, pid and tid; every rank the file
declares (otherData.ranks) has a process name and at least one forward
slice. Prints one summary line; exits 1 with the reason otherwise.

usage: check_trace.py TRACE.json [measured|predicted]
"""
import json
import sys


def fail(msg):
    print("check_trace: " + msg)
    sys.exit(1)


def main():
    path = sys.argv[1]
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: not JSON: %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("%s: no traceEvents list" % path)
    meta = doc.get("otherData", {})
    kind = meta.get("frenzy_trace")
    if len(sys.argv) > 2 and kind != sys.argv[2]:
        fail("%s: a %s trace, expected %s" % (path, kind, sys.argv[2]))
    ranks = meta.get("ranks")
    if not isinstance(ranks, int) or ranks < 1:
        fail("%s: otherData.ranks missing" % path)
    named, forwards, slices = set(), {}, 0
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "M" and e.get("name") == "process_name":
            named.add(e["pid"])
        if ph != "X":
            continue
        slices += 1
        for key in ("name", "cat", "ts", "dur", "pid", "tid"):
            if key not in e:
                fail("%s: slice without '%s': %s" % (path, key, e))
        if not isinstance(e["ts"], (int, float)) or e["dur"] < 0:
            fail("%s: bad time in %s" % (path, e))
        if e["name"].startswith("forward mb "):
            forwards[e["pid"]] = forwards.get(e["pid"], 0) + 1
    for r in range(ranks):
        if r not in named:
            fail("%s: rank %d has no process" % (path, r))
        if not forwards.get(r):
            fail("%s: rank %d has no forward slice" % (path, r))
    print("%s trace: %d ranks, %d slices, forward slices per rank %s" %
          (kind, ranks, slices, [forwards[r] for r in range(ranks)]))


main()
