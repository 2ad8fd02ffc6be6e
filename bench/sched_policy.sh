#!/bin/bash
# The default policy against the MILP Sia (docs/scheduler.md, "Default policy
# vs MILP Sia"): synthetic queues of 500 jobs on the 64-GPU 3-type cluster at
# three loads (8, 15, 30 jobs/h) and the seeds given (the policy's constants
# were chosen on seeds 1 and 2 and Philly 2017-10-03; 3 and 4 are held out),
# and two 500-job Philly windows (2017-10-17 and 2017-10-10); one line per
# row with both policies' average and p99 JCT and makespan, then the mean
# ratio (LOADS="8:light" runs one load; PHILLY=none skips the windows). Then the default policy's decision time with
# 1,000 queued jobs on 1,024 GPUs of five types.
# Sia's MILP gets --solver-seconds per round (default 1 here).
# Usage: bench/sched_policy.sh [BUILD_DIR] [SEEDS...]   (default seeds: 3 4)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}; shift || true
seeds=${*:-3 4}
sched=$build/bin/frenzy-sched
philly=${PHILLY:-$here/../../shared/traces/philly.csv}
solver=${SOLVER_SECONDS:-1}
[ -x "$sched" ] || { echo "sched_policy.sh: build frenzy-sched first ($sched)" >&2; exit 1; }
c64=$here/sched/cluster-64-3type.yaml
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
row() { # label, args...
  local label=$1; shift
  local f s
  f=$(nice -n 10 "$sched" --cluster="$c64" --policy=frenzy --emit=metrics "$@")
  s=$(nice -n 10 "$sched" --cluster="$c64" --policy=sia --solver-seconds="$solver" --emit=metrics "$@")
  printf '%s frenzy_avg=%s sia_avg=%s ratio=%s frenzy_p99=%s sia_p99=%s frenzy_makespan=%s sia_makespan=%s\n' \
    "$label" "$(field avg_jct_s <<< "$f")" "$(field avg_jct_s <<< "$s")" \
    "$(awk -v a="$(field avg_jct_s <<< "$f")" -v b="$(field avg_jct_s <<< "$s")" 'BEGIN{printf "%.3f", a/b}')" \
    "$(field p99_jct_s <<< "$f")" "$(field p99_jct_s <<< "$s")" \
    "$(field makespan_s <<< "$f")" "$(field makespan_s <<< "$s")"
}
{
  for seed in $seeds; do
    for load in ${LOADS:-8:light 15:medium 30:heavy}; do
      row "seed$seed-${load#*:}" --synthetic=500 --seed="$seed" --jobs-per-hour="${load%%:*}"
    done
  done
  if [ -f "$philly" ]; then
    row "philly-500-oct17" --philly="$philly" --philly-start="2017-10-17 00:00:00" --trace-jobs=500
    row "philly-500-oct10" --philly="$philly" --philly-start="2017-10-10 00:00:00" --trace-jobs=500
  elif [ "$philly" != none ]; then
    echo "philly: $philly not found (set PHILLY=...)" >&2
  fi
} > "$tmp/rows.txt"
cat "$tmp/rows.txt"
awk '{ split($4, r, "="); s += r[2]; n++; if (r[2] > 1) worse++ }
  END { printf "rows=%d mean_ratio=%.3f rows_worse_than_sia=%d\n", n, s / n, worse }' "$tmp/rows.txt"

# Decision time: 1,000 jobs arriving within a minute on 1,024 GPUs of five
# types (H100-SXM, A100-80G, A100-40G, V100-32G, RTX-A6000; 8-GPU nodes).
{
  echo "name: scale-1024"; echo "nodes:"
  for t in H100-SXM A100-80G A100-40G V100-32G RTX-A6000; do
    n=25; [ $t = RTX-A6000 ] && n=28
    for ((i = 0; i < n; i++)); do echo "  - {name: ${t,,}-$i, gpu: $t, count: 8, link: nvlink}"; done
  done
  echo "network: {bandwidth_gbps: 200}"
} > "$tmp/c1024.yaml"
m=$(nice -n 10 "$sched" --cluster="$tmp/c1024.yaml" --synthetic=1000 --jobs-per-hour=100000 --policy=frenzy --emit=metrics)
echo "scale-1024gpu-1000jobs decision_median_ms=$(field decision_median_ms <<< "$m") decision_p99_ms=$(field decision_p99_ms <<< "$m") (bar: median <= 10 ms)"
