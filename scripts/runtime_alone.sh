#!/usr/bin/env bash
# The runtime built on its own, as on a training node without LLVM/MLIR
# (docs/runtime.md): configures runtime/ in a fresh directory with
# /usr/lib/llvm-19 hidden (CMAKE_IGNORE_PREFIX_PATH) and find_package(MLIR)
# and find_package(LLVM) disabled, and checks CMake never asked for either
# (it lists both disabling variables as unused) and that no LLVM/MLIR path
# reached the build. Unless --configure-only, it then builds frenzy-launch,
# frenzy-elastic, frenzy-calibrate and the runtime's unit tests, runs the
# unit tests (ctest), checks the binaries link no LLVM/MLIR, and, where the
# full build's frenzy-opt is there (build/bin), trains a one-rank and a
# two-rank plan for 2 steps with the runtime-only frenzy-launch.
# A CI step, not a lit test: a cold build of the runtime (CUDA kernels
# included where nvcc is found) takes minutes on 2 cores; test/Runtime/
# no-mlir.test runs the --configure-only half on every check-frenzy.
#   usage: scripts/runtime_alone.sh [--configure-only] [BUILD_DIR]
#   BUILD_DIR: default build-rt (emptied first); JOBS: ninja -j (default 2);
#   FRENZY_CUDA: passed on (AUTO by default). ccache is used when present.
# Prints one summary line "runtime-alone: ..." and exits non-zero on any
# failure, after the failing step's output.
set -uo pipefail
only_configure=0
if [ "${1:-}" = "--configure-only" ]; then
  only_configure=1
  shift
fi
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$src/build-rt}
fail() {
  echo "runtime-alone: FAIL: $*"
  exit 1
}

rm -rf "$dir" && mkdir -p "$dir" || fail "cannot create $dir"
dir=$(cd "$dir" && pwd)
launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
            -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$src/runtime" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFRENZY_CUDA="${FRENZY_CUDA:-AUTO}" "${launcher[@]}" \
  -DCMAKE_IGNORE_PREFIX_PATH=/usr/lib/llvm-19 \
  -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON \
  > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; fail "configure"; }
# CMake reads CMAKE_DISABLE_FIND_PACKAGE_X only when find_package(X) runs:
# both listed as unused means neither was ever looked for.
for p in MLIR LLVM; do
  grep -q "^ *CMAKE_DISABLE_FIND_PACKAGE_$p\$" "$dir/configure.log" ||
    { cat "$dir/configure.log"; fail "the configure called find_package($p)"; }
done
# No include directory, library or package of LLVM/MLIR (the cache holds
# this script's own hiding options, skipped; the source and build paths are
# cut first, as they may say mlir: test/Runtime/no-mlir.test's do).
leak=$(cat "$dir/build.ninja" "$dir/CMakeCache.txt" | sed -e "s|$dir||g" -e "s|$src||g" |
       grep -i -e 'llvm-[0-9]' -e mlir |
       grep -v -e CMAKE_DISABLE_FIND_PACKAGE_ -e CMAKE_IGNORE_PREFIX_PATH)
[ -z "$leak" ] || { echo "$leak" | head -5; fail "LLVM/MLIR reached the runtime-only build"; }
cuda=$(grep -o 'CUDA backend [A-Z]*' "$dir/configure.log" | head -1)
if [ $only_configure = 1 ]; then
  echo "runtime-alone: configured without LLVM/MLIR in $dir ($cuda)"
  exit 0
fi

start=$SECONDS
ninja -C "$dir" -j"${JOBS:-2}" > "$dir/build.log" 2>&1 ||
  { tail -40 "$dir/build.log"; fail "build"; }
took=$((SECONDS - start))
bin=$dir/bin
for t in frenzy-launch frenzy-elastic frenzy-calibrate; do
  [ -x "$bin/$t" ] || fail "$t was not built"
  "$bin/$t" --help > /dev/null || fail "$t --help"
  if ldd "$bin/$t" | grep -qi -e mlir -e libLLVM; then
    fail "$t links LLVM/MLIR"
  fi
done
(cd "$dir" && ctest --output-on-failure > "$dir/ctest.log" 2>&1) ||
  { tail -40 "$dir/ctest.log"; fail "unit tests (ctest)"; }
tests="unit tests: $(grep -o '[0-9]*% tests passed.*' "$dir/ctest.log" | head -1)"

trained="not trained (no build/bin/frenzy-opt)"
opt=$src/build/bin/frenzy-opt
if [ -x "$opt" ]; then
  work=$dir/train && mkdir -p "$work"
  python3 "$src/scripts/make_corpus.py" "$src/data/corpus-gpl3.txt" \
    "$work/corpus.tokens" > /dev/null || fail "make_corpus.py"
  for c in cpu-1 cpu-4; do
    layout=()
    [ $c = cpu-4 ] && layout=(--layout=1,1@4)
    "$opt" "$src/examples/gpt2-tiny.onnx" --batch=8 --seq=64 \
      --cluster="$src/examples/$c.yaml" "${layout[@]}" -o "$work/$c.plan" \
      > /dev/null 2>&1 || fail "frenzy-opt for $c"
    "$bin/frenzy-launch" "$work/$c.plan" --steps=2 --data="$work/corpus.tokens" \
      > "$work/$c.log" 2>&1 || { cat "$work/$c.log"; fail "frenzy-launch on $c"; }
    grep -q '^step *2/2 | loss' "$work/$c.log" || fail "no step 2 in $work/$c.log"
  done
  trained="trained gpt2-tiny 2 steps on 1 and 2 ranks"
fi
echo "runtime-alone: ok: built without LLVM/MLIR in ${took} s ($cuda), $tests, $trained"
