#!/usr/bin/env bash
# Issue 24's GPU check of the shared runner on a lent GPU (at most 8 min on
# an H200), in two halves because the GPU machine can neither install
# packages nor run frenzy-opt (no LLVM/MLIR there):
#
#   bench/gpu/verify.sh prepare build/verify   # here: plans, tokens, binaries, libs
#   bench/gpu/verify.sh run build/verify       # there, from the repository root
#
# (DIR inside the checkout, carried to the device machine with the run
# tool's `carry`; `du` at the end of prepare says whether it fits 64 MiB.)
#
# `run` prints one line per check (PASS/FAIL/SKIP with the numbers) and
# exits nonzero when any check failed:
#   1. frenzy-cuda-kernel-check (every kernel against its CPU twin);
#   2. the tiny GPT 20 steps fp32 on CUDA against the CPU backend (1e-5);
#   3. a 2-stage and a TP-2 plan on the one GPU (--share-gpus) against one
#      rank on the CPU (1e-5);
#   4. checkpoint on CUDA at step 10, resume on the CPU to step 20, and the
#      reverse, against an uninterrupted run (equal losses, 1e-5);
#   5. --trace on CUDA (the trace file has per-class CUDA-event times);
#   6. a 2-stage plan with a side task in its bubbles, alternating runs with
#      and without it (main job within 2% of its speed without);
#   7. peak memory against the prediction (the runs' memory lines).
# Written and checked for syntax without a GPU; never run on one yet.
set -uo pipefail
mode=${1:-} dir=${2:-}
if [ -z "$mode" ] || [ -z "$dir" ]; then
  echo "verify.sh: error: usage: bench/gpu/verify.sh prepare|run DIR" >&2
  exit 2
fi
cd "$(dirname "$0")/../.."
root=$PWD

prepare() {
  local build=${BUILD:-build}
  mkdir -p "$dir/bin" "$dir/lib" || exit 1
  for b in frenzy-launch frenzy-cuda-kernel-check; do
    [ -x "$build/bin/$b" ] || { echo "verify.sh: error: $build/bin/$b is not built" >&2; exit 1; }
    cp "$build/bin/$b" "$dir/bin/"
  done
  # The Debian libraries the binaries need beside libc, the driver's and the
  # CUDA toolkit's and NCCL's, which the GPU image has (and which are too
  # large to carry: the carry limit is 64 MiB).
  ldd "$dir/bin/frenzy-launch" "$dir/bin/frenzy-cuda-kernel-check" |
    awk '/=> \// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux|libcuda|libcudart|libcublas|libcublasLt|libnccl)\.' |
    xargs -r -I{} cp -L {} "$dir/lib/"
  python3 scripts/make_corpus.py data/corpus-gpl3.txt "$dir/corpus.tokens" || exit 1
  local m=test/Inputs/oracles/gpt_tiny/gpt_tiny_loss.onnx
  local common="--batch=8 --seq=64 --lr=1e-2 --warmup-steps=5 --clip-norm=1.0"
  local opt="$build/bin/frenzy-opt"
  $opt $m $common --cluster=test/Inputs/cuda/h100-1.yaml -o "$dir/one.plan" &&
  $opt $m $common --global-batch=8 --cluster=test/Inputs/cuda/h100-2.yaml --layout=1,1 -o "$dir/pp2.plan" &&
  $opt $m $common --global-batch=8 --cluster=test/Inputs/cuda/h100-2.yaml --layout=2x2 -o "$dir/tp2.plan" &&
  $opt $m $common --global-batch=8 --cluster=test/Inputs/cuda/h100-1.yaml -o "$dir/g.plan" &&
  $opt $m --batch=1 --seq=16 --cluster=test/Inputs/cuda/h100-1.yaml -o "$dir/side.plan" || exit 1
  # Binaries and libraries are ~78 MiB, over the 64 MiB carry limit: one
  # gzip archive (~22 MiB) travels instead; `run` unpacks it.
  tar -czf "$dir.tar.gz" -C "$(dirname "$dir")" "$(basename "$dir")" || exit 1
  du -sh "$dir" "$dir.tar.gz"
  echo "prepared $dir.tar.gz: carry it to the GPU machine and run bench/gpu/verify.sh run $dir"
}

fails=0
say() { echo "$1: $2"; [ "$1" = FAIL ] && fails=$((fails + 1)); }
# Largest relative difference of the step losses of two logs (awk: the GPU
# machine may lack python).
losses() { awk '/^step / {for (i = 1; i <= NF; ++i) if ($i == "loss") print $(i + 1)}' "$1"; }
maxrel() {
  paste <(losses "$1") <(losses "$2") | awk '
    NF < 2 {bad = 1} NF == 2 {d = $1 - $2; if (d < 0) d = -d; m = ($2 < 0 ? -$2 : $2);
      r = m > 0 ? d / m : d; if (r > x) x = r; n++}
    END {if (bad || n == 0) print "nan"; else printf "%.3g\n", x}'
}
within() { awk -v r="$1" -v t="$2" 'BEGIN {exit !(r != "nan" && r <= t)}'; }
check_losses() { # name, log, reference log, tolerance
  local r; r=$(maxrel "$2" "$3")
  if within "$r" "$4"; then say PASS "$1 (max relative loss difference $r <= $4)"
  else say FAIL "$1 (max relative loss difference $r, want <= $4; logs $2 $3)"; fi
}

run() {
  if [ ! -d "$dir" ] && [ -f "$dir.tar.gz" ]; then
    tar -xzf "$dir.tar.gz" -C "$(dirname "$dir")" || exit 1
  fi
  [ -x "$dir/bin/frenzy-launch" ] || { echo "verify.sh: error: $dir/bin/frenzy-launch is missing: run bench/gpu/verify.sh prepare $dir here first" >&2; exit 2; }
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$dir/bin:$PATH"
  local L=frenzy-launch tok="$dir/corpus.tokens" o="$dir/out"
  mkdir -p "$o"
  local start=$SECONDS
  nvidia-smi -L | head -1 || { echo "verify.sh: error: no NVIDIA GPU here (nvidia-smi -L failed)" >&2; exit 2; }
  local mpi=1
  command -v mpirun > /dev/null || { mpi=0; echo "note: no mpirun here: the multi-rank checks are SKIPped"; }

  # 1. The kernels against their CPU twins.
  if timeout 120 frenzy-cuda-kernel-check > "$o/kernels.txt" 2>&1; then
    say PASS "kernel check ($(tail -1 "$o/kernels.txt"))"
  else say FAIL "kernel check (see $o/kernels.txt)"; fi

  # 2. One GPU against the CPU backend, fp32.
  $L "$dir/one.plan" --steps=20 --data="$tok" --threads=4 --seed=5 --backend=cpu > "$o/one.cpu" 2>&1
  $L "$dir/one.plan" --steps=20 --data="$tok" --seed=5 --backend=cuda > "$o/one.cuda" 2>&1
  check_losses "tiny GPT 20 steps fp32, CUDA vs CPU" "$o/one.cuda" "$o/one.cpu" 1e-5

  # 3. A 2-stage and a TP-2 plan on the one GPU (NCCL refuses two ranks of
  #    one GPU: the MPI fallback carries their tensors) against one rank.
  if [ $mpi = 1 ]; then
    for p in pp2 tp2; do
      timeout 120 $L "$dir/$p.plan" --steps=20 --data="$tok" --seed=5 --backend=cuda --share-gpus > "$o/$p.cuda" 2>&1
      check_losses "$p plan on one GPU vs one CPU rank" "$o/$p.cuda" "$o/one.cpu" 1e-5
    done
  else say SKIP "2-stage and TP-2 plans (no mpirun)"; fi

  # 4. Checkpoints are backend-independent: CUDA writes at step 10, the CPU
  #    resumes to 20, and the reverse; each against the uninterrupted run.
  rm -rf "$o/ck-cuda" "$o/ck-cpu"
  $L "$dir/one.plan" --steps=10 --data="$tok" --seed=5 --backend=cuda --checkpoint-dir="$o/ck-cuda" > /dev/null 2>&1
  $L "$dir/one.plan" --steps=20 --data="$tok" --threads=4 --seed=5 --backend=cpu --resume="$o/ck-cuda" > "$o/resume.cpu" 2>&1
  awk '/^step +([0-9]+)\// {split($2, a, "/"); if (a[1] + 0 > 10) print; next}' "$o/one.cpu" > "$o/one.cpu.tail"
  check_losses "checkpoint on CUDA, resume on CPU" "$o/resume.cpu" "$o/one.cpu.tail" 1e-5
  $L "$dir/one.plan" --steps=10 --data="$tok" --threads=4 --seed=5 --backend=cpu --checkpoint-dir="$o/ck-cpu" > /dev/null 2>&1
  $L "$dir/one.plan" --steps=20 --data="$tok" --seed=5 --backend=cuda --resume="$o/ck-cpu" > "$o/resume.cuda" 2>&1
  check_losses "checkpoint on CPU, resume on CUDA" "$o/resume.cuda" "$o/one.cpu.tail" 1e-5

  # 5. --trace on CUDA: per-class times from CUDA events.
  if [ $mpi = 1 ]; then
    timeout 120 $L "$dir/pp2.plan" --steps=3 --data="$tok" --seed=5 --backend=cuda --share-gpus --trace="$o/trace.json" > "$o/trace.log" 2>&1
  else
    $L "$dir/one.plan" --steps=3 --data="$tok" --seed=5 --backend=cuda --trace="$o/trace.json" > "$o/trace.log" 2>&1
  fi
  if [ -s "$o/trace.json" ] && grep -q 'matmul_us' "$o/trace.json"; then
    say PASS "--trace on CUDA ($(wc -c < "$o/trace.json") bytes, op-class times present)"
  else say FAIL "--trace on CUDA (see $o/trace.log)"; fi

  # 6. A side task in the 2-stage plan's bubbles: the main job's tokens/s
  #    with it within 2% of without, alternating runs (median of 3 pairs).
  if [ $mpi = 1 ]; then
    local ratios=()
    for k in 1 2 3; do
      timeout 60 $L "$dir/pp2.plan" --steps=40 --data="$tok" --seed=5 --backend=cuda --share-gpus > "$o/base$k.log" 2>&1
      timeout 60 $L "$dir/pp2.plan" --steps=40 --data="$tok" --seed=5 --backend=cuda --share-gpus \
        --side-task=train:plan="$dir/side.plan",data="$tok",priority=0 > "$o/side$k.log" 2>&1
      local b s
      b=$(awk '/^done:/ {print $4}' "$o/base$k.log") s=$(awk '/^done:/ {print $4}' "$o/side$k.log")
      ratios+=("$(awk -v b="$b" -v s="$s" 'BEGIN {if (b > 0) printf "%.3f", s / b; else print 0}')")
    done
    local med; med=$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n 2p)
    if awk -v m="$med" 'BEGIN {exit !(m >= 0.98)}'; then
      say PASS "side task in bubbles (speed with/without: ${ratios[*]}, median $med >= 0.98)"
    else say FAIL "side task in bubbles (speed with/without: ${ratios[*]}, median $med, want >= 0.98)"; fi
  else say SKIP "side task (no mpirun)"; fi

  # 7. Peak memory against the prediction, as the runs printed it.
  echo "memory (one-rank plain plan): $(grep '^memory:' "$o/one.cuda")"
  [ $mpi = 1 ] && echo "memory (2-stage, last step): $(grep '^step' "$o/pp2.cuda" | tail -1 | sed 's/.*memory MiB/memory MiB/')"
  timeout 120 $L "$dir/g.plan" --steps=5 --data="$tok" --seed=5 --backend=cuda > "$o/g.cuda" 2>&1
  echo "memory (one-rank partitioned plan): $(grep '^memory:' "$o/g.cuda")"

  echo "verify.sh: $((SECONDS - start)) s, $fails failed"
  [ $fails = 0 ]
}

case "$mode" in
  prepare) prepare ;;
  run) run ;;
  *) echo "verify.sh: error: unknown mode '$mode'; usage: bench/gpu/verify.sh prepare|run DIR" >&2; exit 2 ;;
esac
