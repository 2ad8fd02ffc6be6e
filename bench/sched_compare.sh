#!/bin/bash
# Scheduler comparison (docs/scheduler.md): every policy on
#  1. a 500-job seeded synthetic queue (seed 1, seed 2 held out; 30 jobs/h,
#     an overloaded cluster, and 8 jobs/h, a lightly loaded one),
#  2. 500 jobs of the Philly-derived trace (../shared/traces/philly.csv),
# on a 3-type 64-GPU cluster; then decision time with 1,000 queued jobs
# (all arriving at once) on 1,024 and 2,000 GPUs of five types.
# Prints one metrics line per run. Usage: bench/sched_compare.sh [BUILD_DIR]
# The baselines run in their fast greedy mode here (BASELINE_MODE=program
# for Sia's MILP and Gavel's LP: much slower; bench/sched_policy.sh compares
# the default policy with the MILP Sia).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
sched=$build/bin/frenzy-sched
philly=${PHILLY:-$here/../../shared/traces/philly.csv}
[ -x "$sched" ] || { echo "sched_compare.sh: build frenzy-sched first ($sched)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Five types, `nodes` 8-GPU nodes of each; the last type gets the rest.
big_cluster() { # total
  local total=$1 per=$(( $1 / 40 )) i t n
  echo "name: scale-$total"; echo "nodes:"
  for t in H100-SXM A100-80G A100-40G V100-32G RTX-A6000; do
    n=$per; [ $t = RTX-A6000 ] && n=$(( total / 8 - 4 * per ))
    for ((i = 0; i < n; i++)); do
      echo "  - {name: ${t,,}-$i, gpu: $t, count: 8, link: nvlink}"
    done
  done
  echo "network: {bandwidth_gbps: 200}"
}
big_cluster 1024 > "$tmp/c1024.yaml"
big_cluster 2000 > "$tmp/c2000.yaml"

mode=${BASELINE_MODE:-greedy}
run() { # label, args...
  local label=$1; shift
  for p in fifo gavel sia frenzy frenzy-static; do
    echo "$label $(nice -n 10 "$sched" --policy=$p --baseline-mode="$mode" --emit=metrics "$@")"
  done
  echo "$label $(nice -n 10 "$sched" --policy=frenzy-static --realloc --emit=metrics "$@")"
}

c64=$here/sched/cluster-64-3type.yaml
run "synthetic-500-seed1" --cluster="$c64" --synthetic=500 --seed=1 --jobs-per-hour=30
run "synthetic-500-seed2" --cluster="$c64" --synthetic=500 --seed=2 --jobs-per-hour=30
run "synthetic-500-light" --cluster="$c64" --synthetic=500 --seed=1 --jobs-per-hour=8
if [ -f "$philly" ]; then
  run "philly-500" --cluster="$c64" --philly="$philly" \
    --philly-start="2017-10-03 00:00:00" --trace-jobs=500
  run "philly-500-oct10" --cluster="$c64" --philly="$philly" \
    --philly-start="2017-10-10 00:00:00" --trace-jobs=500
else
  echo "philly: $philly not found (set PHILLY=...)"
fi
run "scale-1024gpu-1000jobs" --cluster="$tmp/c1024.yaml" --synthetic=1000 --jobs-per-hour=100000
run "scale-2000gpu-1000jobs" --cluster="$tmp/c2000.yaml" --synthetic=1000 --jobs-per-hour=100000
