#!/usr/bin/env bash
# Training speed of single-rank frenzy-launch against PyTorch (Debian's
# python3-torch) on the same model, batches and thread count, in one run.
# Prints tokens/s of both and the ratio. Not a test: figures vary by machine.
#
# usage: bench/train_speed.sh [BATCH] [SEQ] [STEPS] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-8} T=${2:-64} STEPS=${3:-50} THREADS=${4:-1}
MODEL=test/Inputs/oracles/gpt_tiny/gpt_tiny_loss.onnx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 scripts/make_corpus.py data/corpus-gpl3.txt "$work/tokens" > /dev/null
build/bin/frenzy-opt "$MODEL" --batch="$B" --seq="$T" --cluster=examples/cpu-1.yaml \
  --lr=1e-3 -o "$work/plan.bin" 2> /dev/null
frenzy=$(build/bin/frenzy-launch "$work/plan.bin" --steps="$STEPS" --data="$work/tokens" \
  --threads="$THREADS" --log-every=1000000 | awk '/^done:/ {print $4}')
torch=$(/usr/bin/python3 scripts/torch_reference_train.py "$MODEL" "$work/tokens" --vocab 1000 \
  --batch "$B" --seq "$T" --steps "$STEPS" --lr 1e-3 --threads "$THREADS" | awk '/^torch:/ {print $2}')
echo "tiny GPT (168k params), batch $B x $T, $STEPS steps, $THREADS thread(s)"
echo "frenzy-launch: $frenzy tokens/s"
echo "pytorch:       $torch tokens/s"
awk -v f="$frenzy" -v t="$torch" 'BEGIN { printf "ratio frenzy/pytorch: %.2f\n", f / t }'
