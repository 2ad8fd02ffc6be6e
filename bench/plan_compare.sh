#!/usr/bin/env bash
# Frenzy's plans against the same search without mixed-type pipelines, a
# FlashFlex-style layer split and the best homogeneous-subset plan, as
# predicted tokens/s, with the GPUs each plan uses (docs/partitioner.md).
# Both models are generated without torch (sparse external data): GPT-2
# 1.5B and a Llama-2-7B shape. Besides the example clusters, two generated
# ones where one type (A100-80G) holds the model alone: 8 A100-80G + 8
# RTX 4090 over 100 Gb/s, and 8 A100-80G + 8 T4 over 10 Gb/s.
#
# usage: bench/plan_compare.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
ninja -C build frenzy-plan-compare > /dev/null
[ -f "$work/gpt2-xl.onnx" ] ||
  /usr/bin/python3 scripts/make_external_data_model.py "$work/gpt2-xl.onnx" --shape gpt2-1.5b > /dev/null
[ -f "$work/llama7b.onnx" ] ||
  /usr/bin/python3 scripts/make_external_data_model.py "$work/llama7b.onnx" > /dev/null
pair() { # NAME TYPE_B COUNT_B GBPS
  printf 'network:\n  bandwidth_gbps: %s\nnodes:\n  - name: a100\n    gpu: A100-80G\n    count: 8\n    link: nvlink\n  - name: other\n    gpu: %s\n    count: %s\n    link: pcie\n' \
    "$4" "$2" "$3" > "$work/$1.yaml"
}
pair a100-rtx4090-100g RTX4090 8 100
pair a100-t4-10g T4 8 10
clusters="examples/lab-mixed.yaml examples/mixed-100g.yaml $work/a100-rtx4090-100g.yaml $work/a100-t4-10g.yaml examples/a100x8.yaml examples/rtx3090x8.yaml"
build/bin/frenzy-plan-compare "$work/gpt2-xl.onnx" --seq=1024 --global-batch=512 \
  --precision=fp16-mixed --loss=cross-entropy $clusters
echo
build/bin/frenzy-plan-compare "$work/llama7b.onnx" --seq=4096 --global-batch=256 \
  --precision=fp16-mixed --loss=cross-entropy $clusters
