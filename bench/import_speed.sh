#!/usr/bin/env bash
# Import speed and peak memory of frenzy-opt on large models (a benchmark,
# not a test): a Llama-2-7B-shaped model with external data (sparse, never
# read) and, when python3-torch is present, GPT-2 124M with inline weights.
# Usage: bench/import_speed.sh [BUILD_DIR]     prints one line per model.
set -euo pipefail
build=${1:-build}
opt="$build/bin/frenzy-opt"
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x "$opt" ] || { echo "bench: $opt not built (ninja -C $build frenzy-opt)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }

measure() { # name, then the frenzy-opt arguments; best of 3 runs
  local name=$1 best_s=999 best_kb=0
  shift
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$work/t" "$opt" "$@" --emit=summary > "$work/summary"
    read -r s kb < "$work/t"
    if awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s; best_kb=$kb; fi
  done
  params=$(grep '^parameters:' "$work/summary" | awk '{print $2}')
  printf '%-28s %14s params  %6.2f s  %8.1f MiB peak RSS\n' "$name" "$params" "$best_s" \
    "$(awk "BEGIN{print $best_kb/1024}")"
}

$py scripts/make_external_data_model.py "$work/llama7b.onnx" > /dev/null
measure "llama-2-7b (external data)" "$work/llama7b.onnx" --batch=1 --seq=4096
if $py -c 'import torch' 2> /dev/null; then
  $py scripts/export_test_models.py --gpt2-124m "$work/gpt2.onnx" 2> /dev/null
  measure "gpt-2 124M (inline weights)" "$work/gpt2.onnx" --batch=8 --seq=1024
else
  echo "gpt-2 124M: skipped (python3-torch not installed)"
fi
