#!/usr/bin/env bash
# Cost-model accuracy on CPU ranks, for two model shapes: the tiny GPT
# (examples/gpt2-tiny.onnx, global batch 8 x 64) and a Llama-style model
# exported by torch.onnx (test/Inputs/models/llama_tiny_loss_op17.onnx:
# RMSNorm, rotary, SwiGLU, untied head; global batch 16 x 32). Per plan
# (one rank; 2-stage 1F1B; GPipe; TP 2; uneven pipelines; for the GPT the
# README's plan: the planner's choice for examples/lab-small.yaml at batch
# 16, six one-stage data-parallel ranks of 4,4,2,2,2,2 sequences, here on
# this machine's CPUs; for the Llama also 4 stages (embedding, 2 layers,
# head), 2 stages x TP 2 and the planner's own choice on 4 ranks) three predictions of the step against the measured
# one:
#   report   - the step frenzy-opt --emit=json/report prints for the plan
#              (the figure the partitioner ranked it by);
#   search   - the partitioner's own formula (lib/Planning/Problem/PlanCost),
#              when the report prints another figure;
#   trace    - the predicted timeline (frenzy-opt --emit=trace);
#   measured - frenzy-launch --trace, RUNS runs of STEPS steps, the first and
#              the last of each left out (warm-up, and a last step no next
#              one follows): per rank the mean of its steps, the slowest
#              rank's, then the median over runs (bench/trace_compare.py).
# Not a test: figures vary by machine and load (printed).
#
# usage: [RT=1] [MODELS="gpt llama"] bench/cost_model_accuracy.sh [RUNS] [STEPS] [PROFILE.yaml]
#   PROFILE defaults to a fresh frenzy-calibrate run on this machine (with
#   both models' reference steps, so each one's kernels are measured).
#   RT=1 runs calibration and every launch under SCHED_FIFO (chrt -f 10; root
#   or CAP_SYS_NICE): on a machine shared with other work the ranks then
#   get the cores as on an idle machine (each run takes well under a second
#   of them; the kernel's RT throttling leaves others 5%). Without it the
#   measured wall clock is the machine's load (docs/calibration.md).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3} STEPS=${2:-12} PROFILE=${3:-}
MODELS=${MODELS:-gpt llama}
GPT=$PWD/examples/gpt2-tiny.onnx
LLAMA=$PWD/test/Inputs/models/llama_tiny_loss_op17.onnx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 scripts/make_corpus.py data/corpus-gpl3.txt "$work/tokens" > /dev/null
rt=()
# Two SCHED_FIFO jobs on the same cores livelock (ranks of equal priority
# spinning in MPI never yield to each other): launches take a machine-wide lock.
if [ "${RT:-0}" = 1 ]; then rt=(flock /tmp/frenzy-rt.lock timeout 300 chrt -f 10); fi
if [ -z "$PROFILE" ]; then
  PROFILE=$work/profile.yaml
  build/bin/frenzy-opt "$LLAMA" --batch=8 --seq=32 --cluster=examples/cpu-1.yaml \
    -o "$work/ref-llama.bin" 2> /dev/null
  for b in 8 2 1; do
    build/bin/frenzy-opt "$GPT" --batch=$b --seq=64 --cluster=examples/cpu-1.yaml \
      -o "$work/ref-b$b.bin" 2> /dev/null
  done
  # The GPT's reference steps last: contention and cold turns are measured
  # on the last one, as before the second model was added.
  "${rt[@]}" build/bin/frenzy-calibrate --plan="$work/ref-llama.bin" --plan="$work/ref-b8.bin" \
    --plan="$work/ref-b2.bin" --plan="$work/ref-b1.bin" -o "$PROFILE" | tail -1
fi
PROFILE=$(realpath "$PROFILE")
cluster() { # NAME RANKS
  printf 'name: %s\nnodes:\n  - {name: localhost, gpu: cpu, count: %s}\ngpu_types:\n  - {name: cpu, profile: %s}\n' \
    "$1" "$2" "$PROFILE" > "$work/$1.yaml"
}
cluster cpu1 1; cluster cpu4 4; cluster cpu6 6
# name | model | cluster | frenzy-opt arguments
plans=()
for m in $MODELS; do
  case $m in
  gpt) plans+=(
    "gpt-one-rank|$GPT|cpu1|--seq=64 --global-batch=8"
    "gpt-2-stage-1f1b|$GPT|cpu4|--seq=64 --global-batch=8 --layout=1,1@4"
    "gpt-2-stage-gpipe|$GPT|cpu4|--seq=64 --global-batch=8 --layout=1,1@4 --schedule=gpipe"
    "gpt-tp2|$GPT|cpu4|--seq=64 --global-batch=8 --layout=2x2@4"
    "gpt-uneven|$GPT|cpu4|--seq=64 --global-batch=8 --layout=1,1@3/2@1"
    "gpt-readme|$GPT|cpu6|--seq=64 --global-batch=16 --layout=2@4/2@4/2@2/2@2/2@2/2@2");;
  llama) plans+=(
    "llama-one-rank|$LLAMA|cpu1|--seq=32 --global-batch=16"
    "llama-2-stage-1f1b|$LLAMA|cpu4|--seq=32 --global-batch=16 --layout=1,1@8"
    "llama-2-stage-gpipe|$LLAMA|cpu4|--seq=32 --global-batch=16 --layout=1,1@8 --schedule=gpipe"
    "llama-4-stage-1f1b|$LLAMA|cpu4|--seq=32 --global-batch=16 --layout=0,1,1,0@8"
    "llama-tp2|$LLAMA|cpu4|--seq=32 --global-batch=16 --layout=2x2@8"
    "llama-2-stage-x-tp2|$LLAMA|cpu4|--seq=32 --global-batch=16 --layout=1x2,1x2@8"
    "llama-uneven|$LLAMA|cpu4|--seq=32 --global-batch=16 --layout=1,1@6/2@2"
    "llama-searched|$LLAMA|cpu4|--seq=32 --global-batch=16");;
  *) echo "cost_model_accuracy: unknown model '$m' in MODELS (gpt, llama)" >&2; exit 1;;
  esac
done
echo "$MODELS, $RUNS runs x $STEPS steps; profile $PROFILE"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores${rt:+, launches under ${rt[*]}}"
for entry in "${plans[@]}"; do
  IFS='|' read -r name model cl args <<< "$entry"
  # shellcheck disable=SC2086
  build/bin/frenzy-opt "$model" --cluster="$work/$cl.yaml" $args --emit=json > "$work/$name.report.json" 2> /dev/null
  # shellcheck disable=SC2086
  build/bin/frenzy-opt "$model" --cluster="$work/$cl.yaml" $args --emit=trace \
    -o "$work/$name.pred.json" 2> /dev/null
  # shellcheck disable=SC2086
  build/bin/frenzy-opt "$model" --cluster="$work/$cl.yaml" $args -o "$work/$name.bin" 2> /dev/null
done
# Runs interleave the plans, so a change of the machine's load touches all.
for r in $(seq "$RUNS"); do
  for entry in "${plans[@]}"; do
    IFS='|' read -r name model cl args <<< "$entry"
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
print("%-20s %9s %9s %9s %9s %8s %8s %8s %7s  %s" % (
    "plan", "report", "search", "trace", "measured", "rep/meas", "trc/meas",
    "rep/trc", "idle", "runs (ms)"))
for entry in plans:
    name = entry.split("|")[0]
    rep = json.load(open("%s/%s.report.json" % (work, name)))
    report = rep["step_seconds"] * 1e3
    search = rep.get("search_step_seconds", rep["step_seconds"]) * 1e3
    cmps = [json.load(open("%s/%s.%d.cmp" % (work, name, r))) for r in range(1, runs + 1)]
    meas = statistics.median(c["step_measured_ms"] for c in cmps)
    trace = cmps[0]["step_predicted_ms"]
    idle = statistics.median(max(rk["idle_diff_of_step"] for rk in c["ranks"]) for c in cmps)
    print("%-20s %6.2f ms %6.2f ms %6.2f ms %6.2f ms %8.2f %8.2f %8.3f %6.1f%%  %s" % (
        name, report, search, trace, meas, report / meas, trace / meas,
        report / trace, 100 * idle, " ".join("%.2f" % c["step_measured_ms"] for c in cmps)))
PY
