#!/usr/bin/env python3
"""Write a CPU cluster file for netns_cluster.sh's emulated nodes (test helper).

usage: netns_cluster_yaml.py COUNTS [HOST_OVERRIDE...]
COUNTS is the ranks per node, comma-separated (1,1 or 2,2,1); node i is
named n<i> and its host is the i-th address of $NETNS_HOSTS, unless an
override `i=HOST` names another (bad-input tests). Printed on stdout.
"""
import os
import sys


def main():
    counts = [int(c) for c in sys.argv[1].split(',')]
    hosts = os.environ.get('NETNS_HOSTS', '').split()
    over = dict(a.split('=', 1) for a in sys.argv[2:])
    if len(hosts) < len(counts):
        sys.exit(f'netns_cluster_yaml: {len(counts)} nodes asked, '
                 f'NETNS_HOSTS has {len(hosts)} (run under netns_cluster.sh)')
    print('name: emulated-nodes')
    print('nodes:')
    for i, c in enumerate(counts):
        host = over.get(str(i), hosts[i])
        print(f'  - {{name: n{i}, gpu: cpu, count: {c}, host: {host}}}')


if __name__ == '__main__':
    main()
