#!/bin/bash
# Checks the faithful baselines against Sia's own simulator (docs/scheduler.md,
# "Checking the baselines"): translates Sia's saturn workload-1 (160 jobs, 64
# GPUs of three types) with bench/sia_saturn.py, replays it with the MILP Sia,
# the LP Gavel (both objectives) and the default policy, and prints each
# average JCT and Sia/Gavel against the 0.32 Sia's simulator reports.
# Reads local files only. Usage:
#   SIA_DATA=DIR bench/sia_check.sh [BUILD_DIR]
# DIR: the artifact's sia-simulator folder layout (bench/sia_saturn.py says
# which files); default ../shared/traces/sia-saturn.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
sched=$build/bin/frenzy-sched
data=${SIA_DATA:-$here/../../shared/traces/sia-saturn}
[ -x "$sched" ] || { echo "sia_check.sh: build frenzy-sched first ($sched)" >&2; exit 1; }
[ -f "$data/workloads/saturn/workload-1.csv" ] || {
  echo "sia_check.sh: no $data/workloads/saturn/workload-1.csv (set SIA_DATA to a copy of the Sia artifact's sia-simulator folder)" >&2
  exit 1
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 "$here/sia_saturn.py" "$data" "$tmp"
cd "$tmp"
jct() { nice -n 10 "$sched" --cluster=cluster.yaml --jobs=queue.yaml --emit=metrics "$@" |
  tee -a metrics.txt | sed -n 's/.*avg_jct_s=\([0-9.]*\).*/\1/p'; }
sia=$(jct --policy=sia)
maxmin=$(jct --policy=gavel)
sum=$(jct --policy=gavel --gavel-objective=max-sum-throughput)
siag=$(jct --policy=sia --baseline-mode=greedy)
gavelg=$(jct --policy=gavel --baseline-mode=greedy)
fr=$(jct --policy=frenzy)
cat metrics.txt
awk -v s="$sia" -v m="$maxmin" -v t="$sum" -v sg="$siag" -v gg="$gavelg" -v f="$fr" 'BEGIN {
  printf "saturn-1 sia/gavel(max-min LP) = %.3f  sia/gavel(max-sum-throughput LP) = %.3f  greedy modes: %.3f  (Sia simulator: 0.32; within 15%%: 0.272-0.368)\n", s / m, s / t, sg / gg
  printf "saturn-1 frenzy/sia = %.3f\n", f / s }'
