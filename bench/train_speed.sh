#!/usr/bin/env bash
# Training speed of single-rank frenzy-launch against PyTorch (Debian's
# python3-torch) on the same model, batches and thread count, in one run.
# The two alternate for ROUNDS rounds (a shared machine's speed drifts);
# prints every round, the median tokens/s of each and the ratio of the
# medians. Not a test: figures vary by machine.
#
# usage: bench/train_speed.sh [BATCH] [SEQ] [STEPS] [THREADS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-8} T=${2:-64} STEPS=${3:-50} THREADS=${4:-1} ROUNDS=${5:-3}
MODEL=test/Inputs/oracles/gpt_tiny/gpt_tiny_loss.onnx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 scripts/make_corpus.py data/corpus-gpl3.txt "$work/tokens" > /dev/null
build/bin/frenzy-opt "$MODEL" --batch="$B" --seq="$T" --cluster=examples/cpu-1.yaml \
  --lr=1e-3 -o "$work/plan.bin" 2> /dev/null
echo "tiny GPT (168k params), batch $B x $T, $STEPS steps, $THREADS thread(s), $ROUNDS rounds"
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for r in $(seq "$ROUNDS"); do
  f=$(build/bin/frenzy-launch "$work/plan.bin" --steps="$STEPS" --data="$work/tokens" \
    --threads="$THREADS" --log-every=1000000 | awk '/^done:/ {print $4}')
  t=$(/usr/bin/python3 scripts/torch_reference_train.py "$MODEL" "$work/tokens" --vocab 1000 \
    --batch "$B" --seq "$T" --steps "$STEPS" --lr 1e-3 --threads "$THREADS" | awk '/^torch:/ {print $2}')
  echo "round $r: frenzy-launch $f, pytorch $t tokens/s"
  echo "$f" >> "$work/frenzy"
  echo "$t" >> "$work/torch"
done
frenzy=$(median < "$work/frenzy")
torch=$(median < "$work/torch")
echo "frenzy-launch: $frenzy tokens/s (median)"
echo "pytorch:       $torch tokens/s (median)"
awk -v f="$frenzy" -v t="$torch" 'BEGIN { printf "ratio frenzy/pytorch: %.2f\n", f / t }'
