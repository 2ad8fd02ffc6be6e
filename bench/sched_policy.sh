#!/bin/bash
# The default policy against the MILP Sia (docs/scheduler.md, "Default policy
# vs MILP Sia"): 500-job synthetic queues on the 64-GPU 3-type cluster at
# three loads (8, 15, 30 jobs/h) for each seed given and on a 96-GPU 4-type
# cluster at two loads, and 500-job Philly windows; one markdown row per
# queue with both policies' average JCT, their ratio, p99 JCT, makespan and
# median decision time, then the mean ratio and the rows where the default
# policy is worse; then the default policy's decision time with 1,000
# queued jobs on 1,024 GPUs of five types.
# The policy's constants were chosen on seeds 1 and 2 and the Philly window
# from 2017-10-03 (rows marked "train"); every other row is held out.
# Usage: bench/sched_policy.sh [BUILD_DIR] [SEEDS...]   (default seeds: 3 4 5)
# Environment: LOADS="8:light 15:medium 30:heavy" (rate:name), WINDOWS
# (Philly window starts, default "2017-10-10 2017-10-17 2017-10-24"),
# PHILLY=path|none (default ../shared/traces/philly.csv beside the checkout),
# SHAPE_SEEDS (seeds on bench/sched/cluster-96-4type.yaml, default 6; "" for
# none) at SHAPE_LOADS (default "12:light 22:medium"),
# SOLVER_SECONDS (CBC's limit per Sia round, default 1), PARALLEL (rows run
# at once, default 1; Sia's MILP takes minutes per row).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}; shift || true
seeds=${*:-3 4 5}
sched=$build/bin/frenzy-sched
philly=${PHILLY:-$here/../../shared/traces/philly.csv}
windows=${WINDOWS:-2017-10-10 2017-10-17 2017-10-24}
solver=${SOLVER_SECONDS:-1}
parallel=${PARALLEL:-1}
[ -x "$sched" ] || { echo "sched_policy.sh: build frenzy-sched first ($sched)" >&2; exit 1; }
c64=$here/sched/cluster-64-3type.yaml
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }

row() { # file, label, set, cluster, args...
  local out=$1 label=$2 set=$3 cluster=$4; shift 4
  local f s
  f=$(nice -n 10 "$sched" --cluster="$cluster" --policy=frenzy --emit=metrics "$@")
  s=$(nice -n 10 "$sched" --cluster="$cluster" --policy=sia --solver-seconds="$solver" --emit=metrics "$@")
  local fa sa
  fa=$(field avg_jct_s <<< "$f"); sa=$(field avg_jct_s <<< "$s")
  printf '| %s | %s | %.0f | %.0f | %s | %.0f | %.0f | %.0f | %.0f | %s | %s |\n' \
    "$label" "$set" "$fa" "$sa" "$(awk -v a="$fa" -v b="$sa" 'BEGIN{printf "%.3f", a/b}')" \
    "$(field p99_jct_s <<< "$f")" "$(field p99_jct_s <<< "$s")" \
    "$(field makespan_s <<< "$f")" "$(field makespan_s <<< "$s")" \
    "$(field decision_median_ms <<< "$f")" "$(field decision_median_ms <<< "$s")" > "$out"
}

n=0
launch() { # label, set, cluster, args...: at most $parallel rows at once
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
  n=$((n + 1))
  row "$tmp/row-$(printf %03d $n)" "$@" &
}
for seed in $seeds; do
  set=held-out; case $seed in 1|2) set=train;; esac
  for load in ${LOADS:-8:light 15:medium 30:heavy}; do
    launch "seed $seed, ${load#*:} (${load%%:*} jobs/h)" $set "$c64" \
      --synthetic=500 --seed="$seed" --jobs-per-hour="${load%%:*}"
  done
done
# A second cluster shape, never tuned on: 96 GPUs of four types.
c96=$here/sched/cluster-96-4type.yaml
for seed in ${SHAPE_SEEDS-6}; do
  for load in ${SHAPE_LOADS:-12:light 22:medium}; do
    launch "96 GPUs 4 types, seed $seed, ${load#*:} (${load%%:*} jobs/h)" held-out "$c96" \
      --synthetic=500 --seed="$seed" --jobs-per-hour="${load%%:*}"
  done
done
if [ -f "$philly" ]; then
  for w in $windows; do
    set=held-out; [ "$w" = 2017-10-03 ] && set=train
    launch "Philly $w, 500 jobs" $set "$c64" --philly="$philly" --philly-start="$w 00:00:00" --trace-jobs=500
  done
elif [ "$philly" != none ]; then
  echo "philly: $philly not found (set PHILLY=...)" >&2
fi
wait
echo "| row | set | frenzy avg JCT (s) | MILP Sia avg JCT (s) | frenzy / Sia | frenzy p99 | Sia p99 | frenzy makespan | Sia makespan | frenzy decision median (ms) | Sia decision median (ms) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
cat "$tmp"/row-*
cat "$tmp"/row-* | awk -F'|' '{ r = $6 + 0; s += r; n++; if (r > 1) worse++;
    if ($3 ~ /held-out/) { hs += r; hn++; if (r > 1) hw++ } }
  END { printf "rows=%d mean_ratio=%.3f rows_worse_than_sia=%d", n, s / n, worse;
    if (hn) printf " held_out_rows=%d held_out_mean_ratio=%.3f held_out_worse=%d", hn, hs / hn, hw;
    printf "\n" }'

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
echo "scale-1024gpu-1000jobs decisions=$(field decisions <<< "$m") decision_median_ms=$(field decision_median_ms <<< "$m") decision_p99_ms=$(field decision_p99_ms <<< "$m") (bar: median <= 10 ms)"
