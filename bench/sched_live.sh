#!/usr/bin/env bash
# sched_live.sh - the live mode's predicted against measured JCT per job (issue 27).
#
#   [RT=1] bench/sched_live.sh [POLICIES]        (default: "fifo frenzy")
#
# The bench's live queue is test/Inputs/scheduler/live-queue.yaml: six
# tiny-GPT-2 jobs (10-40 steps, arrivals 0-2.5 s) on two one-rank CPU
# "nodes" (test/Inputs/scheduler/cpu-live.yaml). Before the queue:
#   1. frenzy-calibrate measures the cpu type's profile here and now (one-
#      rank plans at 1 and 8 sequences: the micro-batch sizes the options
#      run), and the cluster file gets it (gpu_types: profile:);
#   2. frenzy-opt --emit=job-options makes the option table with it;
#   3. frenzy-sched --live --start-cost=measure times each GPU count's
#      start-up (plan, launch, one step) before its queue starts.
# Then per policy: the per-job table frenzy-sched prints and one summary
# line (measured/predicted JCT: range, jobs within 20%, average JCTs).
# RT=1 runs calibration and live runs under SCHED_FIFO (chrt -f 10; root):
# on a machine shared with other work the jobs then get the cores as on an
# idle one (bench/cost_model_accuracy.sh does the same). Not a test: the
# figures depend on the machine and its load (printed).
set -euo pipefail
cd "$(dirname "$0")/.."
policies=${1:-fifo frenzy}
bin=$PWD/build/bin
inputs=$PWD/test/Inputs/scheduler
work=$(mktemp -d /tmp/sched_live.XXXXXX)
trap 'rm -rf "$work"' EXIT
rt=()
if [ "${RT:-0}" = 1 ]; then rt=(flock /tmp/frenzy-rt.lock timeout 600 chrt -f 10); fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)${RT:+ (RT=$RT)}"
python3 scripts/make_corpus.py data/corpus-gpl3.txt "$work/corpus.tokens" > /dev/null
model=$PWD/examples/gpt2-tiny.onnx
for b in 8 1; do
  "$bin/frenzy-opt" "$model" --batch=$b --seq=64 --cluster=examples/cpu-1.yaml \
      -o "$work/ref-b$b.bin" 2> /dev/null
done
"${rt[@]}" "$bin/frenzy-calibrate" --plan="$work/ref-b8.bin" --plan="$work/ref-b1.bin" \
    -o "$work/cpu.yaml" --force 2>&1 | tail -1
# cpu-live.yaml with the measured profile for its cpu type.
{
  echo "name: cpu-live-calibrated"
  echo "gpu_types:"
  echo "  - {name: cpu, profile: $work/cpu.yaml}"
  sed -n '/^nodes:/,$p' "$inputs/cpu-live.yaml"
} > "$work/cluster.yaml"
"$bin/frenzy-opt" "$model" --seq=64 --global-batch=8 --cluster="$work/cluster.yaml" \
    --emit=job-options -o "$work/tiny.opts" 2> /dev/null
sed -e "s|%OPTS%|$work/tiny.opts|" -e "s|%ONNX%|$model|" \
    "$inputs/live-queue.yaml" > "$work/queue.yaml"
for policy in $policies; do
  echo "== $policy"
  "${rt[@]}" "$bin/frenzy-sched" --cluster="$work/cluster.yaml" --jobs="$work/queue.yaml" \
      --policy="$policy" --live --out-dir="$work/run-$policy" --frenzy-opt="$bin/frenzy-opt" \
      --frenzy-launch="$bin/frenzy-launch" --live-data="$work/corpus.tokens" \
      --live-limit=300 --start-cost=measure 2>&1 | grep -v "frenzy-opt: wrote" |
    tee "$work/$policy.out"
  awk -F'\t' -v p="$policy" '
    /^live-/ { r = $9 + 0; n++; if (r >= 0.8 && r <= 1.2) ok++
               if (n == 1 || r < lo) lo = r; if (n == 1 || r > hi) hi = r }
    END { printf "%s: measured/predicted JCT %.2f-%.2f, %d of %d jobs within 20%%\n", p, lo, hi, ok, n }
  ' "$work/$policy.out"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
