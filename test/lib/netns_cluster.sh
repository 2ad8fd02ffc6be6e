#!/usr/bin/env bash
# netns_cluster.sh - emulated nodes on one machine: network namespaces joined through a bridge, tc-shaped links.
#
#   netns_cluster.sh [--rates=R0,R1,...] [--delay=MS] [--burst=BYTES] [--shaper=tbf|htb] N -- COMMAND [ARGS...]
#
# Creates N nodes, runs COMMAND in the root namespace with the cluster
# described in its environment, and removes everything when COMMAND ends,
# fails, or the script is interrupted (one trap does it all, so a failed test
# never leaves a namespace behind). COMMAND's exit status is the script's.
#
# Layout (X: a private /24 chosen per run, 10.213.X.0/24):
#   node i   namespace fz<X>n<i>, eth0 = 10.213.X.(i+1), hostname fz<X>n<i>
#            (set by the launch agent in a UTS namespace of its own)
#   switch   namespace fz<X>sw holding the bridge; the bridge lives in a
#            namespace of its own, not the root one, so the root namespace's
#            firewall (a FORWARD policy of DROP, br_netfilter) never sees the
#            bridged frames
#   head     the root namespace reaches the nodes over one more veth pair,
#            10.213.X.254, so that mpirun (and its out-of-band channel) runs
#            where the user runs frenzy-launch
# Each node's link is shaped in both directions with tbf at its rate
# (--rates, one per node, the last repeated; default 1gbit); --delay adds
# netem delay where the kernel has sch_netem, and says so where it has not.
# --burst sets tbf's bucket (default or `auto`: 10 ms of the rate, at least
# 64 KiB; `Nms`: N ms of the rate, same floor; or bytes): a
# bucket lets a message smaller than it through at the unshaped rate after
# an idle spell, which a real link of that rate never does; the network
# model's bench uses 1ms (bench/netns_network_model.sh).
# --shaper=htb shapes with an htb class (rate = ceil) instead of tbf; --burst
# is then its burst and cburst (same default): the class may not borrow above
# its rate, so the only excess is the burst itself.
#
# COMMAND sees:
#   NETNS_CLUSTER_DIR  state directory; hosts/<address> names each node
#   NETNS_HOSTS        the nodes' addresses, space-separated, node order
#   NETNS_NODES        the nodes' namespace names (= hostnames), node order
#   NETNS_SUBNET       10.213.X.0/24 (for Open MPI's *_if_include)
#   NETNS_AGENT        the launch agent command for Open MPI's plm_rsh_agent
#   NETNS_HEAD         10.213.X.254, the root namespace's address
#   OMPI_MCA_btl_tcp_if_include, OMPI_MCA_oob_tcp_if_include = NETNS_SUBNET:
#                      any mpirun under COMMAND keeps its daemons' and ranks'
#                      TCP to the emulated links (else the head advertises
#                      its other interfaces, which the nodes cannot reach)
#   OMPI_MCA_mpi_yield_when_idle=1: waiting ranks yield their core (the
#                      nodes share this machine's cores; see below)
set -euo pipefail

rates="1gbit"
delay=""
burst=""
shaper=tbf
while [[ $# -gt 0 && $1 == --* ]]; do
  case "$1" in
    --rates=*) rates="${1#--rates=}" ;;
    --delay=*) delay="${1#--delay=}" ;;
    --burst=*) burst="${1#--burst=}" ;;
    --shaper=tbf | --shaper=htb) shaper="${1#--shaper=}" ;;
    --shaper=*) echo "netns_cluster: unknown shaper '${1#--shaper=}': use --shaper=tbf or --shaper=htb" >&2; exit 2 ;;
    --) break ;;
    *) echo "netns_cluster: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ $# -lt 3 || $2 != -- || ! $1 =~ ^[0-9]+$ || $1 -lt 1 || $1 -gt 200 ]]; then
  echo "usage: netns_cluster.sh [--rates=R0,R1,...] [--delay=MS] [--burst=BYTES] [--shaper=tbf|htb] N -- COMMAND [ARGS...] (N: 1 to 200)" >&2
  exit 2
fi
n=$1
shift 2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
IFS=, read -r -a rateList <<<"$rates"

state="$(mktemp -d /tmp/netns_cluster.XXXXXX)"
X=""
created_ns=()
created_links=()
child=""
teardown() {
  local rc=$?
  set +e
  if [[ -n $child ]]; then
    kill -TERM "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  # Deleting a namespace deletes the veth ends inside it (and their peers);
  # the head's veth is deleted by name in case its peer's namespace never
  # came to be.
  for l in "${created_links[@]}"; do ip link del "$l" 2>/dev/null; done
  for ns in "${created_ns[@]}"; do
    # Processes still in a node (a daemon left by a failed launch) would
    # keep its network alive after `ip netns del`: end them first.
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  rm -rf "$state"
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A free /24: no route to it and no namespace of ours by that number (a run
# killed with SIGKILL leaves both). The lock makes the choice and the
# creation of the head's link one step among parallel runs.
exec 9>/run/frenzy-netns-cluster.lock
flock 9
for cand in $(shuf -i 1-250); do
  if ! ip -4 route show | grep -q "^10\.213\.$cand\.0/24" &&
     ! ip netns list | grep -q "^fz${cand}[ns]"; then
    X=$cand
    break
  fi
done
if [[ -z $X ]]; then
  echo "netns_cluster: no free 10.213.x.0/24 subnet" >&2
  exit 1
fi
sw="fz${X}sw"
ip netns add "$sw"
created_ns+=("$sw")
head_if="fz${X}h"
ip link add "$head_if" type veth peer name "fz${X}hb"
created_links+=("$head_if")
ip addr add "10.213.$X.254/24" dev "$head_if"
ip link set "$head_if" up
flock -u 9
exec 9>&-

ip link set "fz${X}hb" netns "$sw"
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
ip -n "$sw" link set lo up
ip -n "$sw" link set "fz${X}hb" master br0 up

# tbf's bucket must hold at least one timer tick of traffic at the rate, or
# the link runs below it: 10 ms of the rate, no less than 64 KiB.
# --burst=Nms: N ms of the rate (same floor); --burst=BYTES as tc reads it.
burst_of() {
  local r=$1 bits ms=10
  if [[ $burst =~ ^([0-9]+)ms$ ]]; then
    ms=${BASH_REMATCH[1]}
  elif [[ -n $burst && $burst != auto ]]; then
    echo "$burst"
    return
  fi
  bits=$(python3 - "$r" <<'EOF'
import re, sys
m = re.fullmatch(r'([0-9.]+)([kmg]?)bit', sys.argv[1].lower())
if not m:
    sys.exit(1)
print(int(float(m.group(1)) * {'': 1, 'k': 1e3, 'm': 1e6, 'g': 1e9}[m.group(2)]))
EOF
  ) || { echo "netns_cluster: rate '$r' is not like 1gbit, 500mbit or 100kbit" >&2; return 1; }
  local b=$((bits / 8 * ms / 1000))
  echo $((b < 65536 ? 65536 : b))
}

netem_ok=""
if [[ -n $delay ]]; then
  # Probed on the switch's loopback: the kernel has sch_netem or it has not.
  if ip netns exec "$sw" tc qdisc add dev lo root netem delay "${delay}ms" 2>/dev/null; then
    ip netns exec "$sw" tc qdisc del dev lo root
    netem_ok=1
  else
    echo "netns_cluster: this kernel has no sch_netem: links get no added delay (--delay=$delay ignored)" >&2
  fi
fi
# shape DEV-IN-NS NS RATE: tbf at RATE, under netem's delay when there is one.
shape() {
  local ns=$1 dev=$2 rate=$3 bucket
  bucket=$(burst_of "$rate")
  if [[ $shaper == htb ]]; then
    # One class at rate = ceil; netem (when asked) is its leaf qdisc.
    ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: htb default 1
    ip netns exec "$ns" tc class add dev "$dev" parent 1: classid 1:1 htb \
        rate "$rate" ceil "$rate" burst "$bucket" cburst "$bucket" quantum 65536
    if [[ -n $netem_ok ]]; then
      ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:1 handle 10: netem delay "${delay}ms"
    fi
  elif [[ -n $netem_ok ]]; then
    ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: netem delay "${delay}ms"
    ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:1 handle 10: tbf rate "$rate" burst "$bucket" latency 50ms
  else
    ip netns exec "$ns" tc qdisc add dev "$dev" root tbf rate "$rate" burst "$bucket" latency 50ms
  fi
}

mkdir -p "$state/hosts"
hosts=()
nodes=()
for ((i = 0; i < n; ++i)); do
  ns="fz${X}n$i"
  addr="10.213.$X.$((i + 1))"
  rate="${rateList[$((i < ${#rateList[@]} ? i : ${#rateList[@]} - 1))]}"
  ip netns add "$ns"
  created_ns+=("$ns")
  ip -n "$ns" link add eth0 type veth peer name "fz${X}n${i}b"
  ip -n "$ns" link set "fz${X}n${i}b" netns "$sw"
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$sw" link set "fz${X}n${i}b" master br0 up
  shape "$ns" eth0 "$rate"
  shape "$sw" "fz${X}n${i}b" "$rate"
  # The agent reads: namespace, hostname (one per line).
  printf '%s\n%s\n' "$ns" "$ns" >"$state/hosts/$addr"
  hosts+=("$addr")
  nodes+=("$ns")
  echo "netns_cluster: node $i: namespace $ns, address $addr, link $rate${netem_ok:+, delay ${delay}ms}" >&2
done

# Every node reaches the head before COMMAND starts: a broken fixture is
# reported here, not as an Open MPI daemon that never calls back.
python3 - "10.213.$X.254" "${nodes[@]}" <<'EOF'
import socket, subprocess, sys
head, nodes = sys.argv[1], sys.argv[2:]
srv = socket.create_server((head, 0))
srv.settimeout(10)
port = srv.getsockname()[1]
for ns in nodes:
    p = subprocess.Popen(['ip', 'netns', 'exec', ns, 'python3', '-c',
                          'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 5)',
                          head, str(port)])
    try:
        srv.accept()[0].close()
    except socket.timeout:
        p.kill()
        sys.exit(f'netns_cluster: node {ns} does not reach the head {head}')
    p.wait()
EOF

export NETNS_CLUSTER_DIR="$state"
export NETNS_HOSTS="${hosts[*]}"
export NETNS_NODES="${nodes[*]}"
export NETNS_SUBNET="10.213.$X.0/24"
export NETNS_AGENT="$here/netns_agent.sh $state"
export NETNS_HEAD="10.213.$X.254"
export OMPI_MCA_btl_tcp_if_include="$NETNS_SUBNET"
export OMPI_MCA_oob_tcp_if_include="$NETNS_SUBNET"
# The emulated nodes share this machine's cores, which Open MPI cannot see
# (each node looks undersubscribed): ranks that busy-poll while waiting
# starve the others and the kernel's packet processing, and a message then
# waits for a scheduler tick (measured: 8-byte ping-pongs of exactly 4 ms,
# HZ=250, with 3 one-rank nodes on 2 cores; 0.01 ms with this set). A
# waiting rank yields instead, as Open MPI does by itself on a node it
# knows is oversubscribed.
export OMPI_MCA_mpi_yield_when_idle=1
# Not exec: the trap must run after COMMAND. In the background and waited
# for, because bash runs a trap only after a foreground command ends: a
# SIGTERM (a test runner's timeout) ends COMMAND and the cluster at once.
set +e
"$@" <&0 &
child=$!
wait "$child"
rc=$?
child=""
set -e
exit "$rc"
