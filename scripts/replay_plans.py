#!/usr/bin/env python3
"""Re-runs every frenzy-opt invocation scripts/record_plans.sh recorded, with
another binary, and compares what it writes with the recorded output byte
for byte. Usage: replay_plans.py RECORD_DIR FRENZY_OPT OUT_DIR. A run whose
input the test changed or removed afterwards shows as DIFF or NOOUT: replay
the recording with the old binary too to tell those apart."""
import glob, os, subprocess, sys, filecmp
base = sys.argv[1]; binary = sys.argv[2]; outdir = sys.argv[3]
os.makedirs(outdir, exist_ok=True)
same = diff = err = 0
for cmd in sorted(glob.glob(base + '/*.cmd')):
    key = os.path.basename(cmd)[:-4]
    raw = open(cmd, 'rb').read()
    cwd, rest = raw.split(b'\n', 1)
    args = [a.decode() for a in rest.split(b'\0')[:-1]]
    new_out = os.path.join(outdir, key + '.out')
    out = []
    i = 0
    while i < len(args):
        if args[i] == '-o':
            out += ['-o', new_out]; i += 2; continue
        if args[i].startswith('-o='):
            out.append('-o=' + new_out); i += 1; continue
        out.append(args[i]); i += 1
    if os.path.exists(new_out): os.remove(new_out)
    p = subprocess.run([binary] + out, cwd=cwd.decode(), capture_output=True)
    rc_old = open(base + '/' + key + '.rc').read().strip()
    if not os.path.exists(new_out):
        err += 1
        print('NOOUT', key, 'rc', p.returncode, 'was', rc_old, ' '.join(args)[:300], p.stderr.decode()[-300:])
        continue
    if filecmp.cmp(new_out, base + '/' + key + '.out', shallow=False):
        same += 1
    else:
        diff += 1
        print('DIFF', key, ' '.join(args)[:400])
print('same', same, 'diff', diff, 'noout', err)
