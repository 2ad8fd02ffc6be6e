#!/usr/bin/env bash
# Runs the whole test suite (check-frenzy) N times in a row while BUSY
# processes spin beside it, as a loaded CI machine would (issue 24: no test
# may race the clock). Prints each round's lit summary and exits nonzero if
# any round failed. The busy loops end with this script, even on failure.
#   scripts/suite_under_load.sh [ROUNDS=3] [BUSY=2]
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
busy=${2:-2}
pids=()
cleanup() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2> /dev/null; }
trap cleanup EXIT
for _ in $(seq "$busy"); do
  sh -c 'while :; do :; done' &
  pids+=($!)
done
echo "suite_under_load: $rounds rounds of check-frenzy beside $busy busy processes"
failed=0
for r in $(seq "$rounds"); do
  log=$(mktemp)
  start=$(date +%s)
  ninja -C build check-frenzy > "$log" 2>&1
  rc=$?
  echo "round $r: rc=$rc, $(( $(date +%s) - start )) s;" \
    "$(grep -E '^ *(Passed|Failed|Unsupported) *:' "$log" | tr -s ' ' | tr '\n' ' ')"
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
    grep -E '^(FAIL|  FAIL|\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\* TEST)' "$log" | head -20
    cp "$log" "build/suite_under_load.round$r.log"
    echo "  full log: build/suite_under_load.round$r.log"
  fi
  rm -f "$log"
done
echo "suite_under_load: $((rounds - failed)) of $rounds rounds passed"
[ "$failed" -eq 0 ]
