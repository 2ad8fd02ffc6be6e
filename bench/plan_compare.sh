#!/usr/bin/env bash
# Frenzy's plans against a FlashFlex-style layer split and the best
# homogeneous-subset plan, as predicted tokens/s on the example clusters
# (docs/partitioner.md). GPT-2 1.5B is exported with torch (see
# bench/memory_table.sh); the Llama-2-7B shape is generated without torch.
#
# usage: bench/plan_compare.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
ninja -C build frenzy-plan-compare > /dev/null
[ -f "$work/gpt2-xl/gpt2-xl.onnx" ] || (mkdir -p "$work/gpt2-xl" &&
  /usr/bin/python3 scripts/export_test_models.py --gpt2-1.5b "$work/gpt2-xl/gpt2-xl.onnx")
[ -f "$work/llama7b.onnx" ] ||
  /usr/bin/python3 scripts/make_external_data_model.py "$work/llama7b.onnx" > /dev/null
clusters="examples/lab-mixed.yaml examples/mixed-100g.yaml examples/a100x8.yaml examples/rtx3090x8.yaml"
build/bin/frenzy-plan-compare "$work/gpt2-xl/gpt2-xl.onnx" --seq=1024 --global-batch=512 \
  --precision=fp16-mixed --loss=cross-entropy $clusters
echo
build/bin/frenzy-plan-compare "$work/llama7b.onnx" --seq=4096 --global-batch=256 \
  --precision=fp16-mixed --loss=cross-entropy $clusters
