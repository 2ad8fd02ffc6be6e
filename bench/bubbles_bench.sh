#!/bin/sh
# Predicted vs measured bubbles per rank (issue 14): gpt2-tiny in two stages
# on an A100-80G and a V100-32G, run on this machine's CPU ranks with
# frenzy-launch --emulate-speed=plan:BASE (each rank's forward and backward
# scaled to its stage's predicted time, docs/sidetasks.md), RUNS times.
# Prints the bubble analysis' per-rank fraction (frenzy-opt --emit=bubbles)
# and the measured one (bench/measured_bubbles.py, median over the runs'
# steps). Usage: [RT=1] bench/bubbles_bench.sh [BUILD=build] [RUNS=5] [STEPS=10]
# SCHED=gpipe plans GPipe instead of 1F1B.
# RT=1 runs the ranks under SCHED_FIFO (chrt -f 10): on a shared machine
# the other processes otherwise decide the timeline.
set -eu
BUILD=${1:-build}
RUNS=${2:-5}
STEPS=${3:-10}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat > "$T/mixed2.yaml" <<YAML
name: mixed2
network: {bandwidth_gbps: 400, latency_us: 5}
nodes:
  - {name: a100-0, gpu: A100-80G, count: 1}
  - {name: v100-0, gpu: V100-32G, count: 1}
YAML
python3 "$SRC/scripts/make_corpus.py" "$SRC/data/corpus-gpl3.txt" "$T/corpus.tokens" >/dev/null
ARGS="$SRC/examples/gpt2-tiny.onnx --global-batch=8 --seq=64 --cluster=$T/mixed2.yaml --layout=1,1@4 --schedule=${SCHED:-1f1b}"
"$BUILD/bin/frenzy-opt" $ARGS --emit=bubbles | grep -E "^  p[0-9]+ s[0-9]+ \(|total:"
"$BUILD/bin/frenzy-opt" $ARGS -o "$T/p.plan" 2>/dev/null
RTRUN=""
# Two SCHED_FIFO jobs on the same cores livelock: launches take a machine-wide lock.
if [ "${RT:-0}" = 1 ]; then RTRUN="flock /tmp/frenzy-rt.lock chrt -f 10"; fi
i=1
while [ "$i" -le "$RUNS" ]; do
  $RTRUN "$BUILD/bin/frenzy-launch" "$T/p.plan" --steps="$STEPS" --data="$T/corpus.tokens" \
    --emulate-speed=plan:3 --trace="$T/run$i.json" > "$T/run$i.log" 2>&1
  i=$((i + 1))
done
python3 "$SRC/bench/measured_bubbles.py" --skip=3 "$T"/run*.json
uptime
