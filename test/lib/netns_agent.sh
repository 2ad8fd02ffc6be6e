#!/usr/bin/env bash
# netns_agent.sh - the ssh of netns_cluster.sh's emulated nodes: runs a command in a node's namespace (Open MPI's plm_rsh_agent).
#
#   netns_agent.sh STATE_DIR [SSH_OPTIONS...] HOST COMMAND...
#
# Open MPI calls its rsh agent as it calls ssh: HOST, then the remote command
# as words that ssh would join with spaces and hand to the remote shell; so
# does this agent. HOST is a node's address (or its name): STATE_DIR/hosts/
# names the node's namespace and hostname. The command runs in the node's
# network namespace and in a UTS namespace of its own whose hostname is the
# node's, so that a rank on the node sees the node's address and name, as it
# would on a machine of its own. An unknown HOST fails as ssh does (255).
set -u
if [[ $# -lt 3 ]]; then
  echo "usage: netns_agent.sh STATE_DIR HOST COMMAND..." >&2
  exit 255
fi
state=$1
shift
# Options an ssh-style caller may put before the host (e.g. -x, -o K=V).
while [[ $# -gt 0 && $1 == -* ]]; do
  case "$1" in
    -o|-p|-l|-i) shift 2 ;;
    *) shift ;;
  esac
done
host=${1:-}
shift
entry=""
if [[ -n $host && -f "$state/hosts/$host" ]]; then
  entry="$state/hosts/$host"
else
  for f in "$state"/hosts/*; do
    [[ -f $f && $(sed -n 2p "$f") == "$host" ]] && entry=$f
  done
fi
if [[ -z $entry ]]; then
  echo "netns_agent: $host: no such emulated node (in $state/hosts)" >&2
  exit 255
fi
ns=$(sed -n 1p "$entry")
name=$(sed -n 2p "$entry")
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$1" && exec sh -c "$2"' agent "$name" "$*"
