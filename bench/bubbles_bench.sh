#!/bin/sh
# Predicted vs measured bubbles per rank (issue 14): gpt2-tiny in two stages
# on an A100-80G and a V100-32G (STAGES=3: three, on an RTX 3090, an A100
# and a V100), run on this machine's CPU ranks with frenzy-launch
# --emulate-speed=plan:3 (every action of the plan takes its predicted time
# x one scale, docs/sidetasks.md), RUNS times. Prints per rank the bubble
# share of the step two predictions give, the bubble analysis' (frenzy-opt
# --emit=bubbles: the partition's stage times, what side-task placement
# uses) and the timeline simulation's (frenzy-opt --emit=trace), the
# measured one (bench/trace_compare.py: per run the median over steps of
# each step's share, then the median over runs) and the relative error of
# each prediction. Usage: [RT=1] [STAGES=2|3] [SCHED=1f1b|gpipe]
#   bench/bubbles_bench.sh [BUILD=build] [RUNS=5] [STEPS=10]
# RT=1 runs the ranks under SCHED_FIFO (chrt -f 10): on a shared machine
# the other processes otherwise decide the timeline.
set -eu
BUILD=${1:-build}
RUNS=${2:-5}
STEPS=${3:-10}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if [ "${STAGES:-2}" = 3 ]; then
  cat > "$T/cluster.yaml" <<YAML
name: mixed3
network: {bandwidth_gbps: 800, latency_us: 2}
nodes:
  - {name: n0, gpu: RTX3090, count: 1}
  - {name: n1, gpu: A100-80G, count: 1}
  - {name: n2, gpu: V100-32G, count: 1}
YAML
  LAYOUT=1,1,0@4
else
  cat > "$T/cluster.yaml" <<YAML
name: mixed2
network: {bandwidth_gbps: 400, latency_us: 5}
nodes:
  - {name: a100-0, gpu: A100-80G, count: 1}
  - {name: v100-0, gpu: V100-32G, count: 1}
YAML
  LAYOUT=1,1@4
fi
python3 "$SRC/scripts/make_corpus.py" "$SRC/data/corpus-gpl3.txt" "$T/corpus.tokens" >/dev/null
ARGS="$SRC/examples/gpt2-tiny.onnx --global-batch=8 --seq=64 --cluster=$T/cluster.yaml --layout=$LAYOUT --schedule=${SCHED:-1f1b}"
"$BUILD/bin/frenzy-opt" $ARGS --emit=bubbles > "$T/bubbles.txt"
grep -E "^  p[0-9]+ s[0-9]+ \(|total:" "$T/bubbles.txt"
"$BUILD/bin/frenzy-opt" $ARGS -o "$T/p.plan" 2>/dev/null
"$BUILD/bin/frenzy-opt" $ARGS --emit=trace -o "$T/pred.json" 2>/dev/null
RTRUN=""
# Two SCHED_FIFO jobs on the same cores livelock: launches take a machine-wide lock.
if [ "${RT:-0}" = 1 ]; then RTRUN="flock /tmp/frenzy-rt.lock timeout 600 chrt -f 10"; fi
echo "load before: $(uptime)"
i=1
while [ "$i" -le "$RUNS" ]; do
  $RTRUN "$BUILD/bin/frenzy-launch" "$T/p.plan" --steps="$STEPS" --data="$T/corpus.tokens" \
    --emulate-speed=plan:3 --trace="$T/run$i.json" > "$T/run$i.log" 2>&1
  python3 "$SRC/bench/trace_compare.py" "$T/pred.json" "$T/run$i.json" --skip=3 --json > "$T/cmp$i.json"
  i=$((i + 1))
done
echo "load after: $(uptime)"
python3 - "$T" "$RUNS" <<'PY'
import json, re, statistics as st, sys
T, runs = sys.argv[1], int(sys.argv[2])
analysis = {}
for line in open(f"{T}/bubbles.txt"):
    m = re.match(r"  p\d+ s\d+ \(.*rank (\d+)\): idle .* \(([0-9.]+)%\)", line)
    if m:
        analysis[int(m.group(1))] = float(m.group(2)) / 100
pred, meas = {}, {}
for i in range(1, runs + 1):
    for row in json.load(open(f"{T}/cmp{i}.json"))["ranks"]:
        pred[row["rank"]] = row["pred_idle_share"]
        meas.setdefault(row["rank"], []).append(row["meas_idle_share_median"])
for r in sorted(meas):
    m = st.median(meas[r])
    a, p = analysis.get(r, float("nan")), pred[r]
    print(f"rank {r}: measured {100*m:.2f}% (runs " + " ".join(f"{100*x:.2f}" for x in meas[r]) +
          f"); analysis {100*a:.2f}% (error {100*abs(m/a-1):.1f}%); simulation {100*p:.2f}% (error {100*abs(m/p-1):.1f}%)")
PY
