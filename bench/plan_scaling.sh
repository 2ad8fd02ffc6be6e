#!/usr/bin/env bash
# Whole frenzy-opt planning runs (import, autodiff, cost and memory models,
# the search, the report) for a Llama-2-7B-shaped model (sparse external
# data, no torch) on clusters of 3, 5, 8 and 10 GPU types at 64, 1,024 and
# 16,384 GPUs: 8-GPU nodes, the types in equal shares of the nodes, a
# 100 Gb/s network; fp16-mixed, global batch 1024 x 4096. Prints wall time
# wall time, CPU time (user + system: the figure that does not depend on
# what else the machine runs) and peak RSS per case (/usr/bin/time -v) and
# the plan's headline; the target is < 1 s and < 300 MB each
# (docs/partitioner.md).
#
# usage: bench/plan_scaling.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
[ -f "$work/llama7b.onnx" ] ||
  /usr/bin/python3 scripts/make_external_data_model.py "$work/llama7b.onnx" > /dev/null
# Catalogue types (include/frenzy/Cluster/GpuCatalogue.h), big and small.
all=(H100-SXM A100-80G RTX4090 V100-32G A100-40G RTX3090 L4 RTX-A6000 T4 H100-PCIe)
printf '| GPU types | GPUs | wall time | CPU time | peak RSS | plan |\n|---|---|---|---|---|---|\n'
for ntypes in 3 5 8 10; do
  types=("${all[@]:0:$ntypes}")
  for n in 64 1024 16384; do
    f="$work/cluster-$ntypes-$n.yaml"
    nodes=$((n / 8))
    {
      echo "network:"
      echo "  bandwidth_gbps: 100"
      echo "nodes:"
      for ((i = 0; i < nodes; i++)); do
        echo "  - name: n$i"
        echo "    gpu: ${types[$((i * ntypes / nodes))]}"
        echo "    count: 8"
        echo "    link: nvlink"
      done
    } > "$f"
    /usr/bin/time -v -o "$work/time-$ntypes-$n.txt" build/bin/frenzy-opt \
      "$work/llama7b.onnx" --loss=cross-entropy --seq=4096 --global-batch=1024 \
      --precision=fp16-mixed --cluster="$f" --emit=report \
      > "$work/plan-$ntypes-$n.txt" 2>&1 || true
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; printf "%.2f s", s }' "$work/time-$ntypes-$n.txt")
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f s", s }' "$work/time-$ntypes-$n.txt")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f MB", $2 / 1024 }' "$work/time-$ntypes-$n.txt")
    head=$( (grep -E '^plan:' "$work/plan-$ntypes-$n.txt" || grep -m1 error "$work/plan-$ntypes-$n.txt") |
      sed -E 's/plan: ([0-9]+) pipeline\(s\), ([0-9]+ of [0-9]+) GPUs, micro-batch ([0-9]+).*/\1 pipelines, \2 GPUs, micro-batch \3/' | cut -c1-120)
    step=$(grep -E '^step:' "$work/plan-$ntypes-$n.txt" | sed -E 's/step: ([0-9.]+) ms.*/step \1 ms/' || true)
    printf '| %d | %d | %s | %s | %s | %s, %s |\n' "$ntypes" "$n" "$wall" "$cpu" "$rss" "$head" "$step"
  done
done
