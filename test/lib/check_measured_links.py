#!/usr/bin/env python3
"""Check the links frenzy-calibrate --cluster wrote into a cluster file (test helper).

usage: check_measured_links.py CLUSTER.yaml MIN_GBPS MAX_GBPS
Every topology pair and all-reduce must be marked measured and list its
times by size ascending; a pair's bandwidth must lie within [MIN, MAX] Gb/s
(the shaped link's rate band), an all-reduce's bus bandwidth at most MAX
(Open MPI's all-reduce between two nodes runs at about half a pair's rate
here: docs/multinode.md). Prints one line per figure, exits 1 on the first
that is not.
"""
import sys

import yaml


def main():
    path, lo, hi = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    with open(path) as f:
        topo = (yaml.safe_load(f) or {}).get('topology') or {}
    figures = [('pair', e) for e in topo.get('pairs') or []] + \
              [('all-reduce', e) for e in topo.get('allreduce') or []]
    if not figures:
        sys.exit(f'check_measured_links: {path}: no measured pairs or all-reduces')
    for kind, e in figures:
        sizes = [t['bytes'] for t in e.get('times') or []]
        bw = e['bandwidth_gbps']
        what = f"{kind} {','.join(e['nodes'])}: {bw} Gb/s, {len(sizes)} sizes"
        if e.get('measured') is not True or len(sizes) < 2 or sizes != sorted(sizes):
            sys.exit(f'check_measured_links: {what}: not marked measured, or times not ascending')
        low = lo if kind == 'pair' else 0
        if not low < bw <= hi:
            sys.exit(f'check_measured_links: {what}: outside {low}-{hi} Gb/s')
        print(f'{what}: within {low}-{hi} Gb/s')


if __name__ == '__main__':
    main()
