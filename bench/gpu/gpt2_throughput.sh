#!/usr/bin/env bash
# GPT-2 124M training throughput on one GPU: frenzy-launch's CUDA backend
# against PyTorch eager (bf16 autocast, fp32 master weights, AdamW) on the
# same batch, sequence length and step count, in one run, with tokens/s and
# MFU for each and the ratio (issue 16's target: MFU >= 40% on H100 and
# ratio >= 1.0). Also prints the CUDA kernels' own timings at these shapes
# (frenzy-cuda-kernel-check --bench). Without a GPU it prints SKIP with the
# reason and exits 0: nothing is measured here on a CPU-only machine.
#
# usage: bench/gpu/gpt2_throughput.sh [BATCH] [SEQ] [STEPS]
#   PYTHON=python with torch (default python3); FRENZY_PLAN=plan.bin to use
#   a plan made elsewhere (frenzy-opt needs MLIR, which a GPU node may lack);
#   FRENZY_LAUNCH_ARGS for extra frenzy-launch flags (e.g. --init=seed).
# frenzy's figure is the median of the per-step tokens/s from step 3 on
# (steps 1-2 include cuBLASLt's algorithm search and the allocator's first
# segments); PyTorch's is timed after 3 warm-up steps.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:-8} T=${2:-1024} STEPS=${3:-20}
# Checked before anything runs (a typo must not turn into a GPU-time error).
for v in "$B" "$T" "$STEPS"; do
  case "$v" in ''|*[!0-9]*|0)
    echo "gpt2_throughput.sh: error: BATCH, SEQ and STEPS must be whole numbers >= 1, not '$v'; usage: bench/gpu/gpt2_throughput.sh [BATCH] [SEQ] [STEPS]" >&2
    exit 2 ;; esac
done
py=${PYTHON:-python3}
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "SKIP: no NVIDIA GPU here (nvidia-smi -L failed); nothing measured"
  exit 0
fi
nvidia-smi -L | head -1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# PyTorch eager: tokens/s and MFU.
$py bench/gpu/torch_gpt2_train.py --batch "$B" --seq "$T" --steps "$STEPS" \
  | tee "$work/torch.txt"
torch_tps=$(awk '/^torch:/ {print $2}' "$work/torch.txt")

# The CUDA kernels alone at GPT-2 shapes.
if [ -x build/bin/frenzy-cuda-kernel-check ]; then
  build/bin/frenzy-cuda-kernel-check --bench
fi

# frenzy-launch on the CUDA backend.
plan=${FRENZY_PLAN:-}
if [ -z "$plan" ] && [ -x build/bin/frenzy-opt ]; then
  if $py scripts/export_test_models.py --gpt2-124m "$work/gpt2.onnx" > /dev/null 2>&1; then
    printf 'name: h100-1\nnodes:\n  - name: n0\n    gpu: H100-SXM\n    count: 1\n' \
      > "$work/cluster.yaml"
    build/bin/frenzy-opt "$work/gpt2.onnx" --batch="$B" --seq="$T" \
      --cluster="$work/cluster.yaml" -o "$work/plan.bin" > /dev/null && plan=$work/plan.bin
  fi
fi
launch=build/bin/frenzy-launch
if [ -z "$plan" ]; then
  echo "SKIP frenzy: no plan (set FRENZY_PLAN, or build frenzy-opt and have torch+onnx for the export)"
elif [ ! -x "$launch" ] || ! "$launch" --help 2>&1 | grep -q -- "--backend"; then
  echo "SKIP frenzy: $launch has no CUDA backend (--backend missing: built without CUDA or before issue 16's executor)"
else
  $py scripts/make_corpus.py data/corpus-gpl3.txt "$work/tokens" > /dev/null 2>&1 || true
  # shellcheck disable=SC2086
  "$launch" "$plan" --backend=cuda --steps="$STEPS" --data="$work/tokens" \
    --log-every=1 ${FRENZY_LAUNCH_ARGS:-} | tee "$work/frenzy.txt"
  frenzy_tps=$(awk '/^step/ && $2 + 0 >= 3 { for (i = 1; i < NF; i++) if ($(i + 1) == "tokens/s") print $i }' \
    "$work/frenzy.txt" | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
  if [ -n "$frenzy_tps" ] && [ -n "$torch_tps" ]; then
    params=124439808
    peak=$(awk '/MFU/ {for (i = 1; i <= NF; i++) if ($i == "(peak") print $(i + 1)}' "$work/torch.txt")
    awk -v f="$frenzy_tps" -v t="$torch_tps" -v p="$params" -v T="$T" -v pk="$peak" 'BEGIN {
      fl = 6 * p + 12 * 12 * T * 768
      printf "frenzy: %.0f tokens/s, MFU %.1f%%\n", f, f * fl / (pk * 1e12) * 100
      printf "ratio frenzy/pytorch-eager: %.2f\n", f / t }'
  fi
fi
