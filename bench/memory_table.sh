#!/usr/bin/env bash
# Predicted per-rank peak memory across layouts for GPT-2 124M, GPT-2 1.5B
# and a Llama-2-7B-shaped model (the tables in docs/memory.md), plus the
# MemoryModel query speed. GPT-2 models are exported with Debian's
# python3-torch (1.5B: ~6 GB of external data, a few minutes, ~12 GB RAM);
# the Llama shape is generated with sparse external data (no torch).
#
# usage: bench/memory_table.sh [WORKDIR]   (default: a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
ninja -C build frenzy-memory-bench > /dev/null
[ -f "$work/gpt2-124m.onnx" ] ||
  /usr/bin/python3 scripts/export_test_models.py --gpt2-124m "$work/gpt2-124m.onnx"
[ -f "$work/gpt2-xl/gpt2-xl.onnx" ] || (mkdir -p "$work/gpt2-xl" &&
  /usr/bin/python3 scripts/export_test_models.py --gpt2-1.5b "$work/gpt2-xl/gpt2-xl.onnx")
[ -f "$work/llama7b.onnx" ] ||
  /usr/bin/python3 scripts/make_external_data_model.py "$work/llama7b.onnx"
for m in gpt2-124m.onnx gpt2-xl/gpt2-xl.onnx; do
  build/bin/frenzy-memory-bench "$work/$m" --seq=1024 --global-batch=64 --loss=cross-entropy
  echo
done
build/bin/frenzy-memory-bench "$work/llama7b.onnx" --seq=4096 --global-batch=64 --loss=cross-entropy
