#!/usr/bin/env bash
# netns_link_rate.sh - the TCP rate the tc-shaped links of netns_cluster.sh's emulated nodes achieve.
#
#   bench/netns_link_rate.sh [RATES] [MEGABYTES] [NETNS_CLUSTER_OPTIONS...]   (e.g. --shaper=htb --burst=1ms)
#
# Three nodes with links RATES (default 1gbit,10gbit,10gbit); one TCP stream
# from node 1 to node 0 (limited by node 0's link), from node 0 to node 1
# (node 0's link again, the other way), and from node 1 to node 2 (both 10
# Gbit/s). Prints one line per stream (docs/multinode.md has a table).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rates=${1:-1gbit,10gbit,10gbit}
mb=${2:-300}
"$here/test/lib/netns_cluster.sh" --rates="$rates" "${@:3}" 3 -- bash -c '
  set -e
  read -r -a ns <<<"$NETNS_NODES"
  read -r -a ip <<<"$NETNS_HOSTS"
  python3 "$0/test/lib/tcp_rate.py" "${ns[1]}" "${ns[0]}" "${ip[0]}" "$1"
  python3 "$0/test/lib/tcp_rate.py" "${ns[0]}" "${ns[1]}" "${ip[1]}" "$1"
  python3 "$0/test/lib/tcp_rate.py" "${ns[1]}" "${ns[2]}" "${ip[2]}" "$1"
' "$here" "$mb"
