#!/usr/bin/env bash
# Planning on very large clusters: wall time and peak memory of frenzy-opt
# for GPT-2 tiny on 8-GPU A100 nodes, 12,500 nodes = 100,000 GPUs by default
# (the cluster-file limits allow 1,048,576; docs/hardening.md). Prints one
# line per run: the partition report, then the plan.bin written.
#
# usage: bench/large_cluster.sh [NODES] [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-12500}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
f="$work/cluster-$nodes.yaml"
/usr/bin/python3 -c "
import sys
print('nodes:')
for i in range(int(sys.argv[1])):
    print(f'  - name: n{i}\n    gpu: A100-80G\n    count: 8\n    link: nvlink')" "$nodes" > "$f"
gpus=$((nodes * 8))
run() {
  /usr/bin/time -f "%e %M" -o "$work/time" build/bin/frenzy-opt examples/gpt2-tiny.onnx \
    --seq=64 --global-batch="$gpus" --cluster="$f" "$@" > "$work/out" 2> "$work/err" || {
    cat "$work/err"; exit 1; }
  read -r secs kb < "$work/time"
}
run --emit=report
echo "$gpus GPUs, --emit=report: $(head -1 "$work/out" | cut -c1-60)...: ${secs} s, peak ${kb} KiB"
run -o "$work/plan.bin"
echo "$gpus GPUs, -o plan.bin ($(stat -c %s "$work/plan.bin") bytes): ${secs} s, peak ${kb} KiB"
