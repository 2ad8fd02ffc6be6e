#!/usr/bin/env bash
# Builds the libFuzzer harnesses (build-fuzz/, clang, FRENZY_FUZZ=ON) and
# runs every target in build-fuzz/fuzz/targets.txt for SECONDS each (default
# 60), one at a time, starting from a copy of its committed seed corpus.
# Prints one line per target: executions, corpus size, crashes. New crash
# inputs land in build-fuzz/fuzz/crashes/NAME/ (keep each as a regression
# test under test/Inputs/fuzz/). Exit status: 1 when any target crashed.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Env: JOBS (ninja -j, default 1), CLANG / CLANGXX (default clang / clang++),
#      FUZZ_SEED=N and FUZZ_RUNS=N for a reproducible run (CI),
#      FUZZ_KEEP_CORPUS=1 to keep growing build-fuzz/fuzz/corpus/NAME.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
cc=${CLANG:-clang}
cxx=${CLANGXX:-clang++}
if ! command -v "$cxx" > /dev/null; then
  echo "fuzz: $cxx not found; install clang (Debian: clang libclang-rt-14-dev)" >&2
  exit 2
fi
mkdir -p build-fuzz
# CPU code only: the harnesses reach no CUDA code, and nvcc takes no
# -fsanitize.
if [ ! -f build-fuzz/build.ninja ]; then
  launcher=()
  if command -v ccache > /dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -G Ninja -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DFRENZY_FUZZ=ON -DFRENZY_CUDA=OFF \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py > build-fuzz/build.log 2>&1 ||
    { echo "fuzz: cmake failed (build-fuzz/build.log)" >&2; exit 2; }
fi
targets=(frenzy-fuzzers)
if [ $# -gt 0 ]; then targets=("${@/#/fuzz-}"); fi
ninja -C build-fuzz -j"${JOBS:-1}" "${targets[@]}" >> build-fuzz/build.log 2>&1 ||
  { echo "fuzz: build failed (build-fuzz/build.log)" >&2; exit 2; }

# FUZZ_SEED fixes libFuzzer's random seed: CI's smoke run then tries the
# same inputs on every run (a gate must not fail by chance); exploration is
# the long runs without it.
# FUZZ_RUNS caps the executions: with FUZZ_SEED a run then tries exactly the
# inputs a run here tried, however fast the machine (the time limit still
# stops it early on a slow one, trying a prefix of them).
seed=()
if [ -n "${FUZZ_SEED:-}" ]; then seed=(-seed="$FUZZ_SEED"); fi
if [ -n "${FUZZ_RUNS:-}" ]; then seed+=(-runs="$FUZZ_RUNS"); fi
status=0
while IFS='=' read -r name seeds; do
  [ -n "$name" ] || continue
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  corpus=build-fuzz/fuzz/corpus/$name
  crashes=build-fuzz/fuzz/crashes/$name
  if [ "${FUZZ_KEEP_CORPUS:-0}" != 1 ]; then rm -rf "$corpus"; fi
  mkdir -p "$corpus" "$crashes"
  cp -n "$seeds"/* "$corpus"/ 2> /dev/null
  log=build-fuzz/fuzz/$name.log
  # -timeout: an input taking longer is a hang; -rss_limit_mb: a runaway
  # allocation is a finding, not an out-of-memory kill of the machine.
  # allow_user_poisoning=0: LLVM's headers poison BumpPtrAllocator slabs
  # when compiled with ASan, but Debian's MLIR libraries that allocate them
  # are not, so ASan reports MLIR's own context set-up as use-after-poison.
  # UBSan: FRENZY_FUZZ builds it recoverable (no -fno-sanitize-recover), so
  # without halt_on_error a report is printed and the input counts as fine.
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:allow_user_poisoning=0 \
    build-fuzz/fuzz/fuzz-"$name" -max_total_time="$secs" -timeout=10 "${seed[@]}" \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$corpus" > "$log" 2>&1
  rc=$?
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  found=$(find "$crashes" -type f | wc -l)
  size=$(find "$corpus" -type f | wc -l)
  echo "fuzz $name: ${execs:-0} executions in ${secs}s, corpus $size files, $found crash inputs (exit $rc)"
  if [ "$rc" != 0 ] || [ "$found" != 0 ]; then status=1; fi
done < build-fuzz/fuzz/targets.txt
exit $status
