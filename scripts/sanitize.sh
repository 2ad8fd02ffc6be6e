#!/usr/bin/env bash
# The runtime under AddressSanitizer + UndefinedBehaviorSanitizer
# (FRENZY_SANITIZE=ON, build-asan/): builds frenzy-launch, the runtime unit
# tests and the runtime fuzz replayers with the sanitizers, then runs
#   1. the runtime unit tests (FrenzyRuntimeTests),
#   2. every kept fuzz crash input and seed (test/Inputs/fuzz, fuzz/corpus),
#   3. the runtime lit tests (test/Runtime: one-rank and multi-rank
#      end-to-end runs on MPI ranks) with the sanitized frenzy-launch,
#   4. a slice of the plan mutation bench (bench/plan_mutation.py).
# frenzy-opt is the ordinary build's (build/bin; run scripts/setup.sh
# first): the compiler is not the runtime's concern here, and building it
# with ASan would take most of CI's time.
# Leak checking is on for 1 and 2 and off (detect_leaks=0) where mpirun is
# involved: Open MPI keeps allocations alive past MPI_Finalize by design,
# which LeakSanitizer would report in every multi-rank run.
# Prints one summary line "sanitize: ..." and exits non-zero on any failure.
#   JOBS: ninja -j (default 2); SANITIZE_LIT: lit tests to run (default: the
#   runtime tests below, chosen to fit CI's time: damaged plans, bad input,
#   fuzz replays, one-rank training, multi-rank runs killed and refused);
#   SANITIZE_MUTATIONS: mutation variants (default 200).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ ! -x build/bin/frenzy-opt ]; then
  echo "sanitize: build/bin/frenzy-opt missing; run scripts/setup.sh first" >&2
  exit 2
fi
mkdir -p build-asan
# CPU code only: nvcc takes no -fsanitize, and the CUDA backend cannot run
# here (docs/cuda.md).
if [ ! -f build-asan/build.ninja ]; then
  launcher=()
  if command -v ccache > /dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -G Ninja -B build-asan -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-g \
    -DFRENZY_SANITIZE=ON -DFRENZY_CUDA=OFF "${launcher[@]}" \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py > build-asan/configure.log 2>&1 ||
    { echo "sanitize: cmake failed (build-asan/configure.log)"; exit 2; }
fi
start=$(date +%s)
ninja -C build-asan -j"${JOBS:-2}" frenzy-launch FrenzyRuntimeTests fuzz-plan \
  fuzz-token-data fuzz-checkpoint > build-asan/build.log 2>&1 ||
  { tail -20 build-asan/build.log; echo "sanitize: build failed (build-asan/build.log)"; exit 2; }
built=$(($(date +%s) - start))
# The ordinary frenzy-opt beside the sanitized frenzy-launch, for lit.
ln -sf "$root/build/bin/frenzy-opt" build-asan/bin/frenzy-opt
[ -e build/venv-ort ] && ln -sfn "$root/build/venv-ort" build-asan/venv-ort

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
fail=0 steps=()
note() { steps+=("$1: $2"); [ "$2" = ok ] || fail=1; }
log=build-asan/sanitize.log
: > "$log"
if build-asan/unittests/FrenzyRuntimeTests >> "$log" 2>&1; then note unit ok; else note unit FAILED; fi
replay=ok
for name in plan token-data checkpoint; do
  inputs=(fuzz/corpus/"$name"/*)
  [ -d test/Inputs/fuzz/"$name" ] && inputs+=(test/Inputs/fuzz/"$name"/*)
  build-asan/fuzz/fuzz-"$name" "${inputs[@]}" >> "$log" 2>&1 || replay=FAILED
done
note fuzz-replay "$replay"
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0
lit_out=build-asan/lit.log
default_lit="plan-damaged errors fuzz-regressions train-gpt-tiny multirank-errors"
lit_tests=${SANITIZE_LIT:-$(for t in $default_lit; do printf 'build-asan/test/Runtime/%s.test ' "$t"; done)}
/usr/lib/llvm-19/build/utils/lit/lit.py -sv $lit_tests > "$lit_out" 2>&1
lit_rc=$?
passed=$(awk '/^ *Passed *:/ {print $2}' "$lit_out" | tail -1)
failed=$(awk '/^ *Failed *:/ {print $2}' "$lit_out" | tail -1)
if [ $lit_rc = 0 ]; then note "lit ${passed:-0} passed" ok; else note "lit ${failed:-?} failed" FAILED; fi
mut_out=build-asan/mutation.log
if "${PYTHON:-/usr/bin/python3}" bench/plan_mutation.py --launch build-asan/bin/frenzy-launch \
  --variants "${SANITIZE_MUTATIONS:-200}" --resign --plans one-rank,two-stage > "$mut_out" 2>&1; then
  note "mutation $(awk '$1=="total" {print $2" variants, "$5" crashed, "$6" hung"}' "$mut_out")" ok
else
  note mutation FAILED
fi
echo "sanitize: $( (IFS=';'; echo "${steps[*]}") | sed 's/;/; /g') (build ${built}s, $(($(date +%s) - start))s in all; logs in build-asan/)"
exit $fail
