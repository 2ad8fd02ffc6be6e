#!/usr/bin/env bash
# Checkpoint write and read time on CPU ranks (docs/runtime.md,
# "Checkpoints"), for the tiny GPT and for GPT-2 124M (exported with
# Debian's python3-torch; skipped without it). Each model is trained for
# ROUNDS steps under a pipeline plan with a checkpoint after every step
# (the write times are rank 0's: from the start of the write until the
# step directory is renamed into place), then each checkpoint is resumed
# under other plans (the read time is the slowest rank's: loading and
# resharding its parameters and optimizer moments). Prints every figure
# and the medians. Not a test: figures depend on the machine's disk and
# load (run `uptime` beside it).
#
# usage: bench/checkpoint_bench.sh [ROUNDS] [WORKDIR] [tiny|gpt2|all]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
work=${2:-$(mktemp -d)}
MODELS=${3:-all}
mkdir -p "$work"
launch=build/bin/frenzy-launch opt=build/bin/frenzy-opt
/usr/bin/python3 scripts/make_corpus.py data/corpus-gpl3.txt "$work/tokens" > /dev/null
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# bench NAME MODEL OPT-ARGS WRITE-LAYOUT READ-PLAN-SPECS...
# A read spec is CLUSTER:LAYOUT (LAYOUT empty: the partitioner's choice).
bench() {
  local name=$1 model=$2 args=$3 layout=$4
  shift 4
  local dir="$work/$name"
  rm -rf "$dir" && mkdir -p "$dir"
  $opt "$model" $args --cluster=examples/cpu-4.yaml --layout="$layout" -o "$dir/w.plan" 2> /dev/null
  $launch "$dir/w.plan" --steps="$ROUNDS" --data="$work/tokens" --log-every=1000000 \
    --checkpoint-dir="$dir/ck" --checkpoint-every=1 > "$dir/write.log"
  local mib writes
  mib=$(awk '/^checkpoint: step 1 written/ { gsub(/\(/, "", $7); print $7 }' "$dir/write.log")
  writes=$(awk '/^checkpoint: step [0-9]+ written/ { print $9 }' "$dir/write.log")
  echo "$name: written under --layout=$layout (4 ranks' plan, $mib MiB per checkpoint):" \
    "write seconds" $writes "median $(echo "$writes" | median)"
  local k=0
  for spec in "$@"; do
    k=$((k + 1))
    local cluster=${spec%%:*} rlayout=${spec#*:} reads=""
    $opt "$model" $args --cluster="$cluster" ${rlayout:+--layout=$rlayout} -o "$dir/r$k.plan" 2> /dev/null
    for step in $(seq "$ROUNDS"); do
      # Resume each checkpoint in turn: only steps <= STEP are complete.
      rm -rf "$dir/one" && mkdir -p "$dir/one" &&
        cp -r "$dir/ck/$(printf 'step-%08d' "$step")" "$dir/one/"
      reads="$reads $($launch "$dir/r$k.plan" --steps="$step" --data="$work/tokens" \
        --resume="$dir/one" | awk '/^checkpoint: step [0-9]+ read/ { gsub(/;/, "", $9); print $9 }')"
    done
    echo "$name: read under $(basename "$cluster" .yaml) ${rlayout:-(one program)}:" \
      "read seconds$reads median $(echo $reads | tr ' ' '\n' | median)"
  done
}

[ "$MODELS" = gpt2 ] ||
  bench tiny examples/gpt2-tiny.onnx "--batch=8 --seq=64" "1,1@2/1,1@2" \
    "examples/cpu-4.yaml:0,1,1@4" "examples/cpu-4.yaml:2x2@4" "examples/cpu-1.yaml:"
if [ "$MODELS" = tiny ]; then
  :
elif /usr/bin/python3 -c "import torch" 2> /dev/null; then
  [ -f "$work/gpt2-124m.onnx" ] ||
    /usr/bin/python3 scripts/export_test_models.py --gpt2-124m "$work/gpt2-124m.onnx" > /dev/null 2>&1
  bench gpt2-124m "$work/gpt2-124m.onnx" "--loss=cross-entropy --batch=4 --seq=64" "6,6@2/6,6@2" \
    "examples/cpu-4.yaml:12x2@4" "examples/cpu-1.yaml:"
else
  echo "gpt2-124m: skipped (python3-torch not installed)"
fi
uptime
