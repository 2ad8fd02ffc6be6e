#!/usr/bin/env bash
# Partitioner search time for a GPT-3-175B-shaped model (sparse external
# data, no torch) on mixed clusters of 16, 64, 256 and 1024 GPUs of four
# types in 8-GPU nodes (H100-SXM, A100-80G, A100-40G, V100-32G in equal
# shares), 100 Gb/s network. Prints wall time per size (docs/partitioner.md).
#
# usage: bench/plan_scaling.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
[ -f "$work/gpt3.onnx" ] ||
  /usr/bin/python3 scripts/make_external_data_model.py "$work/gpt3.onnx" --shape gpt3-175b > /dev/null
types=(H100-SXM A100-80G A100-40G V100-32G)
for n in 16 64 256 1024; do
  f="$work/cluster-$n.yaml"
  {
    echo "network:"
    echo "  bandwidth_gbps: 100"
    echo "nodes:"
    nodes=$((n / 8))
    for ((i = 0; i < nodes; i++)); do
      t=${types[$((i * 4 / nodes))]}
      echo "  - name: n$i"
      echo "    gpu: $t"
      echo "    count: 8"
      echo "    link: nvlink"
    done
  } > "$f"
  start=$(date +%s.%N)
  build/bin/frenzy-opt "$work/gpt3.onnx" --loss=cross-entropy --seq=2048 \
    --global-batch=1536 --precision=fp16-mixed --cluster="$f" --emit=report \
    > "$work/plan-$n.txt" 2>&1 || true
  end=$(date +%s.%N)
  # 16 GPUs cannot hold 175B parameters (16 bytes each): the error says so.
  grep -E '^(plan|step|throughput)|error' "$work/plan-$n.txt" | cut -c1-200
  awk -v s="$start" -v e="$end" -v n="$n" 'BEGIN { printf "%d GPUs: frenzy-opt wall time %.2f s (import + autodiff + models + search)\n\n", n, e - s }'
done
