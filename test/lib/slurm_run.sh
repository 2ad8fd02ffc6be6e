#!/usr/bin/env bash
# slurm_run.sh - submit an sbatch script (really, not --test-only) and wait for the job to leave the queue.
#
#   slurm_run.sh [--limit=SECONDS] SCRIPT LOG [SBATCH_OPTIONS...]
#
# Submits SCRIPT with its output to LOG, waits until the controller no longer
# lists the job as pending, running or completing (its state, polled; not a
# guess of how long it takes), then prints one line per component:
#   slurm job ID[+K]: STATE exit CODE:SIGNAL on NODES   (K: hetjob component)
# and exits 0 when every component COMPLETED, 1 otherwise. Past --limit
# (default 120 s) the job is cancelled and one line says so (exit 1): a job
# that hangs never hangs the caller. Needs SLURM_CONF (netns_slurm.sh).
set -euo pipefail
limit=120
if [[ ${1:-} == --limit=* ]]; then
  limit=${1#--limit=}
  shift
fi
if [[ $# -lt 2 ]]; then
  echo "usage: slurm_run.sh [--limit=SECONDS] SCRIPT LOG [SBATCH_OPTIONS...]" >&2
  exit 2
fi
script=$1 log=$2
shift 2
id=$(sbatch --parsable -o "$log" "$@" "$script")
id=${id%%;*}
deadline=$((SECONDS + limit))
while squeue -h -j "$id" -o %T 2>/dev/null | grep -q .; do
  if ((SECONDS >= deadline)); then
    scancel "$id" 2>/dev/null || true
    echo "slurm_run: job $id still $(squeue -h -j "$id" -o %T | sort -u | tr '\n' ' ')after $limit s (--limit): cancelled" >&2
    exit 1
  fi
  sleep 0.3
done
# One record per component (a heterogeneous job lists each).
ok=1
while read -r comp state code nodes; do
  echo "slurm job ${comp%+}: $state exit $code on $nodes"
  [[ $state == COMPLETED ]] || ok=0
done < <(scontrol show job "$id" -o | sed -n \
  's/^JobId=\([0-9]*\) \(HetJobId=[0-9]* HetJobOffset=\([0-9]*\) \)\{0,1\}.*JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\) .* NodeList=\([^ ]*\) .*/\1+\3 \4 \5 \6/p')
[[ $ok == 1 ]]
