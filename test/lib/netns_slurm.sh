#!/usr/bin/env bash
# netns_slurm.sh - a Slurm cluster on netns_cluster.sh's emulated nodes: slurmctld on the head, one slurmd inside each node.
#
#   netns_slurm.sh CLUSTER.yaml -- COMMAND [ARGS...]
#
# Run under netns_cluster.sh. CLUSTER.yaml's nodes ({name: N, gpu: T,
# count: C, host: ADDR}, ADDR one of $NETNS_HOSTS) become Slurm nodes of the
# same names: munged and slurmctld run in the root ("head") namespace at
# $NETNS_HEAD, and each node's slurmd runs in that node's network namespace
# with the node's hostname (a UTS namespace of its own, as netns_agent.sh
# gives a rank), NodeAddr = the node's address. So a batch script, srun and
# its tasks run inside the nodes, as on machines of their own. Each node has
# C typed GPUs (gres gpu:T:C, T as frenzy-sched spells it, backed by device
# files that are /dev/null) for Slurm's planning, and CPUs for the tasks
# that really run (CPU ranks).
#
# COMMAND runs in the root namespace once every node is idle, with
# SLURM_CONF set (sbatch, squeue, scontrol work) and NETNS_SLURM_DIR (the
# daemons' logs). When it ends, fails or the script is interrupted, every
# process in the nodes (slurmd, slurmstepd, the jobs) and the head's daemons
# are ended and the state directory removed. COMMAND's status is the
# script's. Waiting for the nodes is bounded by $NETNS_SLURM_TIMEOUT
# seconds (default 120). Ports are below Linux's ephemeral range (32768-),
# so that no outgoing connection of a test beside this one holds them.
set -euo pipefail
if [[ $# -lt 3 || $2 != -- ]]; then
  echo "usage: netns_slurm.sh CLUSTER.yaml -- COMMAND [ARGS...] (under netns_cluster.sh)" >&2
  exit 2
fi
cluster=$1
shift 2
if [[ -z ${NETNS_CLUSTER_DIR:-} || -z ${NETNS_HEAD:-} ]]; then
  echo "netns_slurm: run under netns_cluster.sh (NETNS_CLUSTER_DIR, NETNS_HEAD unset)" >&2
  exit 2
fi
for t in munged slurmctld slurmd sinfo; do
  command -v "$t" >/dev/null || { echo "netns_slurm: $t is not installed (slurmctld, slurmd, slurm-client, munge)" >&2; exit 2; }
done
limit=${NETNS_SLURM_TIMEOUT:-120}

dir=$(mktemp -d /tmp/netns_slurm.XXXXXX)
chmod 755 "$dir"
pids=()
namespaces=()
child=""
teardown() {
  local rc=$?
  set +e
  if [[ -n $child ]]; then
    kill -TERM "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  # slurmstepd and the jobs' tasks leave slurmd's process tree (they are
  # daemonised); the nodes' namespaces hold only what this cluster started.
  for ns in "${namespaces[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  done
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  [[ -f $dir/munged.pid ]] && kill "$(cat "$dir/munged.pid")" 2>/dev/null
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$dir"
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Nodes from the cluster file's flow-style entries.
nodes=$(sed -n 's/.*{name: *\([^,}]*\), *gpu: *\([^,}]*\), *count: *\([0-9]*\).*host: *\([^,} ]*\).*/\1 \2 \3 \4/p' "$cluster")
if [[ -z $nodes ]]; then
  echo "netns_slurm: no '{name: .., gpu: .., count: .., host: ..}' nodes in $cluster" >&2
  exit 2
fi

export SLURM_CONF=$dir/slurm.conf
mkdir -p "$dir/state" "$dir/dev"
for i in $(seq 0 15); do mknod "$dir/dev/gpu$i" c 1 3; done
head -c 1024 /dev/urandom >"$dir/munge.key"
chmod 400 "$dir/munge.key"
munged -f --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munged.seed"
# The controller's port; the nodes' slurmd ports follow. Each slurmd has a
# network namespace of its own, but the ports still differ so that a node
# name in a log says which daemon it was.
base=$((20000 + RANDOM % 10000))
{
  echo "ClusterName=frenzynetns"
  # Named as the head is (slurmctld checks it), reached at its fixture address.
  echo "SlurmctldHost=$(hostname -s)($NETNS_HEAD)"
  echo "SlurmUser=root"
  echo "SlurmdUser=root"
  echo "AuthType=auth/munge"
  echo "AuthInfo=socket=$dir/munge.sock"
  echo "CredType=cred/munge"
  echo "StateSaveLocation=$dir/state"
  echo "SlurmctldPidFile=$dir/slurmctld.pid"
  echo "SlurmctldLogFile=$dir/slurmctld.log"
  echo "SlurmctldPort=$base"
  echo "SlurmdSpoolDir=$dir/spool/%n"
  echo "TmpFS=$dir/tmp/%n"
  echo "SlurmdPidFile=$dir/slurmd-%n.pid"
  echo "SlurmdLogFile=$dir/slurmd-%n.log"
  echo "SlurmdDebug=info"
  echo "GresTypes=gpu"
  echo "SelectType=select/cons_tres"
  echo "ProctrackType=proctrack/linuxproc"
  echo "TaskPlugin=task/none"
  echo "JobAcctGatherType=jobacct_gather/none"
  echo "MpiDefault=none"
  echo "ReturnToService=2"
  # Heterogeneous jobs are started by the backfill scheduler only (every 30 s by default).
  echo "SchedulerParameters=bf_interval=1"
  # A finished job stays visible to scontrol for this long (its exit code).
  echo "MinJobAge=600"
  # The nodes are declared, not real: trust the declared CPUs and GPUs.
  echo "SlurmdParameters=config_overrides"
  port=$((base + 1))
  while read -r name gpu count host; do
    entry="$NETNS_CLUSTER_DIR/hosts/$host"
    if [[ ! -f $entry ]]; then
      echo "netns_slurm: node $name: host $host is not an emulated node (\$NETNS_HOSTS: $NETNS_HOSTS)" >&2
      exit 2
    fi
    type=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]/_/g')
    echo "NodeName=$name NodeHostname=$(sed -n 2p "$entry") NodeAddr=$host Port=$port CPUs=$((count > 4 ? count : 4)) Gres=gpu:$type:$count"
    echo "NodeName=$name Name=gpu Type=$type File=$dir/dev/gpu[0-$((count - 1))]" >>"$dir/gres.conf"
    port=$((port + 1))
    mkdir -p "$dir/spool/$name" "$dir/tmp/$name"
  done <<<"$nodes"
  echo "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} >"$SLURM_CONF"

slurmctld -D -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
daemons=()
while read -r name gpu count host; do
  entry="$NETNS_CLUSTER_DIR/hosts/$host"
  ns=$(sed -n 1p "$entry")
  namespaces+=("$ns")
  # nsenter, not `ip netns exec`: that one mounts a /sys of its own, without
  # /sys/fs/cgroup, and slurmd refuses to start without its cgroup plugin.
  nsenter --net="/run/netns/$ns" unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' slurmd \
    "$(sed -n 2p "$entry")" slurmd -D -N "$name" -f "$SLURM_CONF" >"$dir/slurmd-$name.out" 2>&1 &
  pids+=($!)
  daemons+=("$name:$!")
done <<<"$nodes"

# Until every node is idle (the controller's state), or a daemon died; the
# bound only keeps a broken Slurm from hanging the caller.
want=$(echo "$nodes" | wc -l)
idle=0
dead=""
deadline=$((SECONDS + limit))
while ((SECONDS < deadline)); do
  idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l || true)
  [[ $idle == "$want" ]] && break
  kill -0 "${pids[0]}" 2>/dev/null || dead="slurmctld"
  for d in "${daemons[@]}"; do
    kill -0 "${d#*:}" 2>/dev/null || dead="slurmd of node ${d%%:*}"
  done
  [[ -n $dead ]] && break
  sleep 0.3
done
if [[ -n $dead ]]; then
  echo "netns_slurm: $dead exited:" >&2
  tail -n 5 "$dir"/*.out "$dir"/*.log >&2 2>/dev/null
  exit 1
fi
if [[ $idle != "$want" ]]; then
  echo "netns_slurm: only $idle of $want nodes became idle within $limit s (NETNS_SLURM_TIMEOUT)" >&2
  sinfo -N -o "%N %T %E" >&2 || true
  tail -n 10 "$dir/slurmctld.log" >&2 || true
  exit 1
fi
echo "netns_slurm: $want nodes idle ($(sinfo -h -N -o '%N' | sort -u | tr '\n' ' '))" >&2

export NETNS_SLURM_DIR=$dir
set +e
"$@" <&0 &
child=$!
wait "$child"
rc=$?
child=""
set -e
exit "$rc"
