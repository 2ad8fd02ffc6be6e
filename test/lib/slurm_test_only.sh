#!/bin/bash
# Validates frenzy-sched's sbatch scripts against a real Slurm controller:
# starts munged, slurmctld and one slurmd per node of the cluster file (all
# on localhost, own ports, typed GPU gres backed by /dev/null-like device
# nodes) in a temporary directory, runs `sbatch --test-only` on each script
# and on a request that must fail (more GPUs than a node has), then stops
# exactly the daemons it started. Needs root (mknod) and Debian's slurmctld,
# slurmd, slurm-client and munge.
# Usage: slurm_test_only.sh CLUSTER.yaml SCRIPT.sbatch...
set -euo pipefail
cluster=$1; shift
dir=$(mktemp -d /tmp/frenzy-slurm.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$dir/munged.pid" ] && kill "$(cat "$dir/munged.pid")" 2>/dev/null || true
  sleep 0.5
  rm -rf "$dir"
}
trap cleanup EXIT
export SLURM_CONF=$dir/slurm.conf
mkdir -p "$dir/state" "$dir/dev"
for i in $(seq 0 15); do mknod "$dir/dev/gpu$i" c 1 3; done
head -c 1024 /dev/urandom > "$dir/munge.key"; chmod 400 "$dir/munge.key"
munged -f --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munged.seed"
# Below Linux's ephemeral range (32768-60999): a port there can be taken by
# any outgoing connection of a test running beside this one (mpirun, the
# emulated nodes), and a slurmd that cannot bind never registers.
base=$(( 20000 + RANDOM % 10000 ))
# Nodes from the cluster file's flow-style entries: {name: N, gpu: T, count: C ...}.
nodes=$(sed -n 's/.*{name: *\([^,]*\), *gpu: *\([^,]*\), *count: *\([0-9]*\).*/\1 \2 \3/p' "$cluster")
[ -n "$nodes" ] || { echo "slurm_test_only.sh: no '{name: .., gpu: .., count: ..}' nodes in $cluster" >&2; exit 1; }
{
  echo "ClusterName=frenzytest"
  echo "SlurmctldHost=localhost"
  echo "SlurmUser=root"
  echo "AuthType=auth/munge"
  echo "AuthInfo=socket=$dir/munge.sock"
  echo "StateSaveLocation=$dir/state"
  echo "SlurmctldPidFile=$dir/slurmctld.pid"
  echo "SlurmctldLogFile=$dir/slurmctld.log"
  echo "SlurmctldPort=$base"
  echo "SlurmdSpoolDir=$dir/spool/%n"
  echo "SlurmdPidFile=$dir/slurmd-%n.pid"
  echo "SlurmdLogFile=$dir/slurmd-%n.log"
  echo "GresTypes=gpu"
  echo "SelectType=select/cons_tres"
  echo "ProctrackType=proctrack/linuxproc"
  echo "TaskPlugin=task/none"
  echo "MpiDefault=none"
  echo "ReturnToService=2"
  # The nodes are declared, not real: trust the declared CPUs and GPUs.
  echo "SlurmdParameters=config_overrides"
  port=$(( base + 1 ))
  while read -r name gpu count; do
    type=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]/_/g')
    echo "NodeName=$name NodeAddr=127.0.0.1 Port=$port CPUs=$(( count > 16 ? count : 16 )) Gres=gpu:$type:$count"
    echo "NodeName=$name Name=gpu Type=$type File=$dir/dev/gpu[0-$(( count - 1 ))]" >> "$dir/gres.conf"
    port=$(( port + 1 ))
    mkdir -p "$dir/spool/$name"
  done <<< "$nodes"
  echo "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} > "$SLURM_CONF"
slurmctld -D -f "$SLURM_CONF" > "$dir/slurmctld.out" 2>&1 & pids+=($!)
sleep 1
daemons=()
while read -r name gpu count; do
  slurmd -D -N "$name" -f "$SLURM_CONF" > "$dir/slurmd-$name.out" 2>&1 & pids+=($!)
  daemons+=("$name:$!")
done <<< "$nodes"
want=$(echo "$nodes" | wc -l)
# Until every node is idle (the daemons' own state), or one of them died;
# the bound only keeps a broken Slurm from hanging the suite (a loaded
# machine took over 30 s here).
dead=""
for _ in $(seq 1 600); do
  idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l || true)
  [ "$idle" = "$want" ] && break
  for d in "${daemons[@]}"; do
    kill -0 "${d#*:}" 2> /dev/null || dead="${d%%:*}"
  done
  [ -n "$dead" ] && break
  sleep 0.5
done
if [ -n "$dead" ]; then
  echo "slurm_test_only.sh: slurmd of node $dead exited" >&2
  tail -n 20 "$dir/slurmd-$dead.out" "$dir/slurmd-$dead.log" >&2 2> /dev/null || true
  exit 1
fi
if [ "$idle" != "$want" ]; then
  echo "slurm_test_only.sh: only $idle of $want nodes became idle" >&2
  sinfo -N -o "%N %T %E" >&2 || true
  tail -n 20 "$dir/slurmctld.log" >&2 || true
  exit 1
fi
for s in "$@"; do
  echo "$(basename "$s"): $(sbatch --test-only "$s" 2>&1)"
done
first=$(echo "$nodes" | head -1)
read -r name gpu count <<< "$first"
type=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]/_/g')
echo "too many GPUs: $(sbatch --test-only -w "$name" --gres=gpu:$type:$(( count + 1 )) --wrap=true 2>&1 || true)"
