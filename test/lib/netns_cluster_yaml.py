#!/usr/bin/env python3
"""Write a CPU cluster file for netns_cluster.sh's emulated nodes (test helper).

usage: netns_cluster_yaml.py [--gpu=T0,T1,...] [--profile=FILE] COUNTS [HOST_OVERRIDE...]
COUNTS is the ranks per node, comma-separated (1,1 or 2,2,1); node i is
named n<i> and its host is the i-th address of $NETNS_HOSTS, unless an
override `i=HOST` names another (bad-input tests). --gpu gives node i's GPU
type (the last one repeats; default cpu): typed GPUs for planning (a Slurm
gres on netns_slurm.sh's nodes), CPU ranks where no GPU is visible.
--profile gives the cpu type a measured device profile (absolute path,
frenzy-calibrate). Printed on stdout.
"""
import os
import sys


def main():
    args = sys.argv[1:]
    gpus = ['cpu']
    if args and args[0].startswith('--gpu='):
        gpus = args.pop(0)[len('--gpu='):].split(',')
    profile = None
    if args and args[0].startswith('--profile='):
        profile = os.path.abspath(args.pop(0)[len('--profile='):])
    counts = [int(c) for c in args[0].split(',')]
    hosts = os.environ.get('NETNS_HOSTS', '').split()
    over = dict(a.split('=', 1) for a in args[1:])
    if len(hosts) < len(counts):
        sys.exit(f'netns_cluster_yaml: {len(counts)} nodes asked, '
                 f'NETNS_HOSTS has {len(hosts)} (run under netns_cluster.sh)')
    print('name: emulated-nodes')
    if profile:
        print('gpu_types:')
        print(f'  - {{name: cpu, profile: {profile}}}')
    print('nodes:')
    for i, c in enumerate(counts):
        host = over.get(str(i), hosts[i])
        gpu = gpus[min(i, len(gpus) - 1)]
        print(f'  - {{name: n{i}, gpu: {gpu}, count: {c}, host: {host}}}')


if __name__ == '__main__':
    main()
