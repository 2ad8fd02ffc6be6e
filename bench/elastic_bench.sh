#!/usr/bin/env bash
# Detection-to-resume time of frenzy-elastic (docs/elastic.md) on CPU ranks:
# a rank's process SIGKILLed (leave: the job is re-planned on the devices
# left and resumed from the last checkpoint) and a node added to the
# cluster file (join: the ranks stop after the next checkpoint, the job is
# re-planned with the new node). Prints, per transition, the seconds from
# the detection to the first new step and their parts (stopping or waiting
# for the checkpoint, re-planning with frenzy-opt, restarting the ranks
# with their first step), and beside them one plain step and one
# checkpoint write, for scale. Medians over ROUNDS runs. Not a test:
# figures vary with the machine and its load (printed with them).
#
# usage: bench/elastic_bench.sh [tiny|gpt2|all|nodes] [ROUNDS]
#   tiny: examples/gpt2-tiny.onnx, global batch 8 x 64; 4 ranks (two nodes
#         of two) -> 3 after the loss; 2 ranks -> 4 after the join
#   gpt2: GPT-2 124M (exported by scripts/export_test_models.py, needs
#         Debian's python3-torch), --loss=cross-entropy, global batch 2 x 64;
#         2 ranks (two nodes of one) -> 1 after the loss; 1 -> 2 after the
#         join (about 4 GiB of memory while it runs)
#   nodes: the tiny GPT on three emulated nodes (test/lib/netns_cluster.sh,
#         as root), n0:1 n1:1 n2:2: every rank of n2 SIGKILLed, and
#         separately n2's link cut (--comm-timeout=3: the detection comes
#         that long after the cut); 4 ranks -> 2 on n0 and n1
set -euo pipefail
cd "$(dirname "$0")/.."
WHICH=${1:-all} ROUNDS=${2:-3}
case "$WHICH" in tiny|gpt2|all|nodes) ;; *)
  echo "elastic_bench.sh: error: unknown model set '$WHICH'; usage: bench/elastic_bench.sh [tiny|gpt2|all|nodes] [ROUNDS]" >&2
  exit 2 ;; esac
case "$ROUNDS" in ''|*[!0-9]*|0)
  echo "elastic_bench.sh: error: ROUNDS must be a whole number >= 1, not '$ROUNDS'" >&2
  exit 2 ;; esac
# The emulated nodes exist while this script runs again inside them.
if [ "$WHICH" = nodes ] && [ -z "${NETNS_HOSTS:-}" ]; then
  exec test/lib/netns_cluster.sh 3 -- "$0" nodes "$ROUNDS"
fi
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$py scripts/make_corpus.py data/corpus-gpl3.txt "$work/tokens" > /dev/null
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

cluster() { # NAME COUNT-n0 [COUNT-n1]
  { echo "name: bench"; echo "nodes:"
    echo "  - {name: n0, gpu: cpu, count: $2}"
    [ -n "${3:-}" ] && echo "  - {name: n1, gpu: cpu, count: $3}"; true; } > "$work/$1.yaml"
}

# One transition, ROUNDS times: prints the medians of the supervisor's
# "resumed:" line.
# run LABEL HARNESS-ARGS -- FRENZY-ELASTIC-ARGS
run() {
  local label=$1; shift
  local hargs=() ; while [ "$1" != "--" ]; do hargs+=("$1"); shift; done; shift
  : > "$work/times"
  for r in $(seq "$ROUNDS"); do
    rm -rf "$work/ckpt" "$work/ckpt-elastic" "$work/ckpt-elastic.log"
    "${setup[@]}"
    $py test/lib/elastic_run.py --timeout=1200 "${hargs[@]}" -- build/bin/frenzy-elastic \
      --data="$work/tokens" --checkpoint-dir="$work/ckpt" "$@" > "$work/out" ||
      { cat "$work/out"; echo "$label: the run failed (log: $work/ckpt-elastic.log)"; exit 1; }
    sed -n 's/.*resumed: step [0-9]* ran \([0-9.]*\) s after the detection ([a-z ]* \([0-9.]*\) s, re-planning \([0-9.]*\) s, restart and first step \([0-9.]*\) s).*/\1 \2 \3 \4/p' \
      "$work/ckpt-elastic.log" | head -1 >> "$work/times"
    # One plain step (rank 0's tokens/s of the steps before the change) and
    # the checkpoint writes, for scale.
    awk -v g="$global" '/^step .*tokens\/s/ { for (i = 1; i <= NF; ++i) if ($(i+1) == "tokens/s") print g / $i }' \
      "$work/ckpt-elastic.log" >> "$work/steps"
    sed -n 's/^checkpoint: step .* (\([0-9.]*\) MiB, \([0-9.]*\) s)$/\2 \1/p' "$work/ckpt-elastic.log" >> "$work/ckpts"
  done
  for k in 1 2 3 4; do awk -v k=$k '{ print $k }' "$work/times" | median; done | paste -sd' ' |
    awk -v l="$label" '{ printf "%-34s %7s s  (stop/wait %s s, re-plan %s s, restart+first step %s s)\n", l, $1, $2, $3, $4 }'
}

summary() {
  printf "  one step %.3f s (median), one checkpoint write %.3f s for %s MiB (median)\n" \
    "$(median < "$work/steps")" "$(awk '{ print $1 }' "$work/ckpts" | median)" \
    "$(awk '{ print $2 }' "$work/ckpts" | median)"
  : > "$work/steps"; : > "$work/ckpts"
}

echo "load: $(uptime | sed 's/.*load average/load average/'); $(nproc) cores; $ROUNDS round(s)"
: > "$work/steps"; : > "$work/ckpts"
if [ "$WHICH" = tiny ] || [ "$WHICH" = all ]; then
  M=examples/gpt2-tiny.onnx; global=$((8 * 64))
  common=("$M" --global-batch=8 --seq=64)
  echo "tiny GPT (examples/gpt2-tiny.onnx), global batch 8 x 64, checkpoints every 5 steps"
  setup=(cluster c 2 2)
  run "leave: 4 ranks -> 3 (kill at 12)" --kill-rank=3@11 -- --cluster="$work/c.yaml" \
    "${common[@]}" --steps=20 --checkpoint-every=5
  cluster two 2 2
  setup=(cluster c 2)
  run "join: 2 ranks -> 4 (node at 9)" --cluster-at="8:$work/two.yaml:$work/c.yaml" -- \
    --cluster="$work/c.yaml" "${common[@]}" --steps=20 --checkpoint-every=5
  summary
fi
if [ "$WHICH" = gpt2 ] || [ "$WHICH" = all ]; then
  M=$work/gpt2-124m.onnx; global=$((2 * 64))
  if ! $py -c "import torch" 2> /dev/null; then
    echo "gpt-2 124M: skipped (python3-torch not installed)"
    exit 0
  fi
  $py scripts/export_test_models.py --gpt2-124m "$M" > /dev/null 2>&1
  common=("$M" --loss=cross-entropy --global-batch=2 --seq=64)
  echo "GPT-2 124M, global batch 2 x 64, checkpoints every 2 steps"
  setup=(cluster c 1 1)
  run "leave: 2 ranks -> 1 (kill at 4)" --kill-rank=1@3 -- --cluster="$work/c.yaml" \
    "${common[@]}" --steps=5 --checkpoint-every=2 --stall-timeout=1200
  cluster two 1 1
  setup=(cluster c 1)
  run "join: 1 rank -> 2 (node at 2)" --cluster-at="1:$work/two.yaml:$work/c.yaml" -- \
    --cluster="$work/c.yaml" "${common[@]}" --steps=4 --checkpoint-every=2 --stall-timeout=1200
  summary
fi
if [ "$WHICH" = nodes ]; then
  M=examples/gpt2-tiny.onnx; global=$((8 * 64))
  common=("$M" --global-batch=8 --seq=64 --launch-agent="$NETNS_AGENT" --comm-timeout=3)
  set -- $NETNS_NODES
  echo "tiny GPT on 3 emulated nodes (n0:1 n1:1 n2:2), global batch 8 x 64, checkpoints every 4 steps"
  setup=(eval "$py test/lib/netns_cluster_yaml.py 1,1,2 > $work/c.yaml")
  run "node lost: n2's ranks killed at 7" --kill-node="$3@6" -- --cluster="$work/c.yaml" \
    "${common[@]}" --steps=12 --checkpoint-every=4
  setup=(eval "ip -n $3 link set eth0 up")
  run "node lost: n2's link cut at 7" --cut-link="$3@6" -- --cluster="$work/c.yaml" \
    "${common[@]}" --steps=12 --checkpoint-every=4
  summary
fi
