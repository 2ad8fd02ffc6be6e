#!/usr/bin/env bash
# Cost-model accuracy on CPU ranks: for each plan of the tiny GPT (one rank;
# 2-stage 1F1B; GPipe; TP 2; two uneven pipelines; the README's plan: the
# planner's choice for examples/lab-small.yaml at batch 16, six one-stage
# data-parallel ranks of 4,4,2,2,2,2 sequences, here on this machine's CPUs), the predicted timeline (frenzy-opt --emit=trace with
# this machine's device profile) against the measured one (frenzy-launch
# --trace, RUNS runs of STEPS steps, the first and the last of each left
# out: warm-up, and a last step no next one follows).
# Prints per plan the predicted step, the measured step (each run: per rank
# the mean of its steps, the slowest rank's; then the median over runs) and
# the error, and the largest per-rank difference of idle time (as shares of
# the step). Not a test: figures vary by machine and load (printed).
#
# usage: [RT=1] bench/cost_model_accuracy.sh [RUNS] [STEPS] [PROFILE.yaml]
#   PROFILE defaults to a fresh frenzy-calibrate run on this machine.
#   RT=1 runs calibration and every launch under SCHED_FIFO (chrt -f 10; root
#   or CAP_SYS_NICE): on a machine shared with other work the ranks then
#   get the cores as on an idle machine (each run takes well under a second
#   of them; the kernel's RT throttling leaves others 5%). Without it the
#   measured wall clock is the machine's load (docs/calibration.md).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3} STEPS=${2:-12} PROFILE=${3:-}
MODEL=$PWD/examples/gpt2-tiny.onnx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 scripts/make_corpus.py data/corpus-gpl3.txt "$work/tokens" > /dev/null
rt=()
# Two SCHED_FIFO jobs on the same cores livelock (ranks of equal priority
# spinning in MPI never yield to each other): launches take a machine-wide lock.
if [ "${RT:-0}" = 1 ]; then rt=(flock /tmp/frenzy-rt.lock timeout 300 chrt -f 10); fi
if [ -z "$PROFILE" ]; then
  PROFILE=$work/profile.yaml
  for b in 8 2 1; do
    build/bin/frenzy-opt "$MODEL" --batch=$b --seq=64 --cluster=examples/cpu-1.yaml \
      -o "$work/ref-b$b.bin" 2> /dev/null
  done
  "${rt[@]}" build/bin/frenzy-calibrate --plan="$work/ref-b8.bin" --plan="$work/ref-b2.bin" \
    --plan="$work/ref-b1.bin" -o "$PROFILE" | tail -1
fi
PROFILE=$(realpath "$PROFILE")
cluster() { # NAME RANKS
  printf 'name: %s\nnodes:\n  - {name: localhost, gpu: cpu, count: %s}\ngpu_types:\n  - {name: cpu, profile: %s}\n' \
    "$1" "$2" "$PROFILE" > "$work/$1.yaml"
}
cluster cpu1 1; cluster cpu4 4; cluster cpu6 6
# name | cluster | frenzy-opt arguments
plans=(
  "one-rank|cpu1|--batch=8"
  "2-stage-1f1b|cpu4|--global-batch=8 --layout=1,1@4"
  "2-stage-gpipe|cpu4|--global-batch=8 --layout=1,1@4 --schedule=gpipe"
  "tp2|cpu4|--global-batch=8 --layout=2x2@4"
  "uneven-pipelines|cpu4|--global-batch=8 --layout=1,1@3/2@1"
  "readme-lab-small|cpu6|--global-batch=16 --layout=2@4/2@4/2@2/2@2/2@2/2@2"
)
echo "tiny GPT (examples/gpt2-tiny.onnx), global batch 8 x 64, $RUNS runs x $STEPS steps; profile $PROFILE"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores${rt:+, launches under ${rt[*]}}"
for entry in "${plans[@]}"; do
  IFS='|' read -r name cl args <<< "$entry"
  # shellcheck disable=SC2086
  build/bin/frenzy-opt "$MODEL" --seq=64 --cluster="$work/$cl.yaml" $args --emit=trace \
    -o "$work/$name.pred.json" 2> /dev/null
  # shellcheck disable=SC2086
  build/bin/frenzy-opt "$MODEL" --seq=64 --cluster="$work/$cl.yaml" $args -o "$work/$name.bin" 2> /dev/null
done
# Runs interleave the plans, so a change of the machine's load touches all.
for r in $(seq "$RUNS"); do
  for entry in "${plans[@]}"; do
    IFS='|' read -r name cl args <<< "$entry"
    "${rt[@]}" build/bin/frenzy-launch "$work/$name.bin" --steps="$STEPS" --threads=1 --data="$work/tokens" \
      --trace="$work/$name.$r.json" > /dev/null
    /usr/bin/python3 bench/trace_compare.py "$work/$name.pred.json" "$work/$name.$r.json" --json \
      > "$work/$name.$r.cmp"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$work" "$RUNS" "${plans[@]}" <<'PY'
import json, statistics, sys
work, runs, plans = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("%-18s %10s %10s %8s %10s %8s %14s %s" % (
    "plan", "predicted", "measured", "error", "on CPU", "error", "max idle diff",
    "runs (ms)"))
for entry in plans:
    name = entry.split("|")[0]
    cmps = [json.load(open("%s/%s.%d.cmp" % (work, name, r))) for r in range(1, runs + 1)]
    meas = statistics.median(c["step_measured_ms"] for c in cmps)
    pred = cmps[0]["step_predicted_ms"]
    cpu = statistics.median(c["step_cpu_ms"] for c in cmps)
    idle = statistics.median(max(rk["idle_diff_of_step"] for rk in c["ranks"]) for c in cmps)
    print("%-18s %7.2f ms %7.2f ms %+7.1f%% %7.2f ms %+7.1f%% %13.1f%% %s" % (
        name, pred, meas, 100 * (pred / meas - 1), cpu, 100 * (pred / cpu - 1),
        100 * idle, " ".join("%.2f" % c["step_measured_ms"] for c in cmps)))
PY
