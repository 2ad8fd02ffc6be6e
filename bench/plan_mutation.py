#!/usr/bin/env python3
"""Mutation bench for plan.bin: damaged plans must be refused, never run.

Builds four plans with frenzy-opt (one rank, two pipeline stages, TP 2, and
the README's lab plan on examples/lab-mixed.yaml), then makes variants of
each by changing 1-4 bytes (XOR with a random non-zero value) at positions
spread over the whole file: every header byte, and first positions
stratified over the file's length so the payload is covered evenly. Each
variant runs `frenzy-launch PLAN --steps=2` under a timeout and is
classified:

  refused   non-zero exit, one line on stderr "frenzy-launch: error: ..."
  ran       exit 0
  crashed   a signal, a sanitizer report, or a refusal of more than one line
  hung      the timeout

Mode --resign re-signs the header after changing payload bytes, so the plan
validator (not the checksum) must catch them. Refusals are then split by
who refused (checksum/header, protobuf parse, validator, later at run time)
and plans that ran are compared with the unaltered plan's loss and decoded
to name the fields the mutation changed (docs/hardening.md explains them).

usage: bench/plan_mutation.py [--variants N] [--resign] [--launch PATH]
                              [--timeout S] [--seed N] [--keep DIR]
"""
import argparse
import collections
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import plan_file  # noqa: E402

PLANS = [  # name, frenzy-opt arguments
    ("one-rank", ["--batch=2", "--seq=16", "--cluster=examples/cpu-1.yaml"]),
    ("two-stage", ["--batch=4", "--seq=16", "--cluster=examples/cpu-4.yaml", "--layout=1,1@2"]),
    ("tp2", ["--batch=4", "--seq=16", "--cluster=examples/cpu-4.yaml", "--layout=2x2@2"]),
    ("lab", ["--batch=8", "--seq=64", "--cluster=examples/lab-mixed.yaml"]),
]
SANITIZER = re.compile(r"ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer|"
                       r"Segmentation fault|double free|free\(\): |malloc\(\)|terminate called|"
                       r"Assertion .* failed|Aborted|core dumped")
LOSS = re.compile(r"loss (\S+)")


def run(launch, plan, tokens, timeout):
    """(kind, stderr first line, loss or None)."""
    # Two steps: step 1's loss comes before any update, step 2's shows what
    # the update did (a changed optimizer setting).
    cmd = [launch, plan, "--steps=2", f"--data={tokens}"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           errors="replace", start_new_session=True)
    except subprocess.TimeoutExpired as e:
        # start_new_session: mpirun and its ranks die with the group.
        return "hung", "", None
    err = [l for l in p.stderr.splitlines() if l.strip()]
    both = p.stdout + p.stderr
    if p.returncode < 0 or p.returncode >= 128 or SANITIZER.search(both):
        return "crashed", (err or [both[-200:]])[0], None
    if p.returncode == 0:
        return "ran", "", " ".join(LOSS.findall(p.stdout)) or None
    if len(err) == 1 and err[0].startswith("frenzy-launch: error: "):
        return "refused", err[0], None
    # A rank that fails at run time prints its one line and aborts the job;
    # mpirun then adds its own abort notice (not frenzy-launch's output).
    # Several ranks may fail the same way at once (each holding the bad
    # parameter): one line each.
    ours = [l for l in err if l.startswith("frenzy-launch:")]
    if ours and all(re.match(r"frenzy-launch: rank \d+ .*: error: .*; ending all ranks$", l)
                    for l in ours):
        return "refused", ours[0], None
    return "crashed", " | ".join(err[:3]), None  # not one line: a finding


def refuser(line):
    if "ending all ranks" in line:
        return "a rank at run time"
    if "invalid plan:" in line:
        return "validator"
    if "do not parse" in line:
        return "protobuf parse"
    if any(s in line for s in ("checksum", "truncated plan", "not a Frenzy plan",
                               "format version", "reserved header", "header promises")):
        return "header/checksum"
    return "at run time"


def mutate(data, first, rng, lo):
    out = bytearray(data)
    positions = {first}
    for _ in range(rng.randint(0, 3)):
        positions.add(rng.randrange(lo, len(data)))
    for p in positions:
        out[p] ^= rng.randint(1, 255)
    return bytes(out), sorted(positions)


def field_diff(pb, a, b):
    """Dotted field paths where two plans differ (repeated indices as [])."""
    x, y = pb.Plan(), pb.Plan()
    try:
        x.ParseFromString(a)
        y.ParseFromString(b)
    except Exception:
        return ["(unparseable)"]
    out = set()

    def walk(m, n, path):
        if m.__class__ is not n.__class__:
            out.add(path)
            return
        names = {f.name for f, _ in m.ListFields()} | {f.name for f, _ in n.ListFields()}
        for name in sorted(names):
            fd = m.DESCRIPTOR.fields_by_name[name]
            u, v = getattr(m, name), getattr(n, name)
            p = f"{path}.{name}" if path else name
            if fd.label == fd.LABEL_REPEATED:
                if fd.message_type and not fd.message_type.GetOptions().map_entry:
                    if len(u) != len(v):
                        out.add(p + " (count)")
                    for i in range(min(len(u), len(v))):
                        walk(u[i], v[i], p + "[]")
                elif list(u) != list(v) if not fd.message_type else dict(u) != dict(v):
                    out.add(p)
            elif fd.message_type:
                walk(u, v, p)
            elif u != v:
                out.add(p)
    walk(x, y, "")
    return sorted(out) or ["(no field: re-encoding of equal values)"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", type=int, default=1200, help="total variants (default 1200)")
    ap.add_argument("--resign", action="store_true", help="re-sign the header after mutating")
    ap.add_argument("--launch", default=os.path.join(ROOT, "build/bin/frenzy-launch"))
    ap.add_argument("--opt", default=os.path.join(ROOT, "build/bin/frenzy-opt"))
    ap.add_argument("--tokens", default=os.path.join(ROOT, "build/corpus-gpl3.tokens"))
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plans", default=",".join(n for n, _ in PLANS))
    ap.add_argument("--keep", help="copy crashed/hung variants here")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="plan-mutation-")
    if not os.path.exists(args.tokens):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/make_corpus.py"),
                        os.path.join(ROOT, "data/corpus-gpl3.txt"), args.tokens], check=True)
    pb = plan_file.plan_module(os.path.join(ROOT, "proto")) if args.resign else None
    chosen = [p for p in PLANS if p[0] in args.plans.split(",")]
    per_plan = args.variants // len(chosen)
    table = collections.OrderedDict()
    who = collections.Counter()
    examples = {}
    harmless = collections.Counter()
    findings = []
    started = time.time()
    for name, opts in chosen:
        path = os.path.join(work, name + ".plan")
        subprocess.run([args.opt, os.path.join(ROOT, "examples/gpt2-tiny.onnx"), *opts,
                        "-o", path], check=True, cwd=ROOT, capture_output=True)
        data = open(path, "rb").read()
        kind, line, base_loss = run(args.launch, path, args.tokens, args.timeout)
        if kind != "ran":
            sys.exit(f"{name}: the unaltered plan does not run: {line}")
        lo = plan_file.HEADER if args.resign else 0
        # Every header byte once (plain mode), then stratified first positions.
        firsts = [] if args.resign else list(range(plan_file.HEADER))
        n = max(per_plan - len(firsts), 1)
        span = len(data) - lo
        firsts += [lo + int((i + rng.random()) * span / n) for i in range(n)]
        counts = collections.Counter()
        for i, first in enumerate(firsts):
            variant, positions = mutate(data, first, rng, lo)
            if args.resign:
                variant = plan_file.frame(variant[plan_file.HEADER:])
            vpath = os.path.join(work, f"{name}-{i}.plan")
            open(vpath, "wb").write(variant)
            kind, line, loss = run(args.launch, vpath, args.tokens, args.timeout)
            counts[kind] += 1
            if kind == "refused":
                who[refuser(line)] += 1
                examples.setdefault(refuser(line), line)
            elif kind == "ran" and args.resign:
                same = "same losses" if loss == base_loss else "different losses"
                fields = field_diff(pb, data[plan_file.HEADER:], variant[plan_file.HEADER:])
                harmless[(" + ".join(sorted({re.sub(r"\[\]", "", f) for f in fields})),
                          same)] += 1
            elif kind in ("crashed", "hung"):
                findings.append((name, i, positions, kind, line))
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    shutil.copy(vpath, os.path.join(args.keep, f"{name}-{i}.plan"))
            os.unlink(vpath)
        table[name] = (len(data), len(firsts), counts)
    shutil.rmtree(work, ignore_errors=True)

    mode = "re-signed payload mutations" if args.resign else "byte mutations (header and payload)"
    print(f"plan mutation bench: {mode}, launcher {args.launch}, seed {args.seed}, "
          f"{time.time() - started:.0f} s")
    print(f"{'plan':<10} {'bytes':>6} {'variants':>8} {'refused':>8} {'ran':>5} {'crashed':>7} {'hung':>5}")
    total = collections.Counter()
    for name, (size, n, c) in table.items():
        total.update(c)
        total["variants"] += n
        print(f"{name:<10} {size:>6} {n:>8} {c['refused']:>8} {c['ran']:>5} {c['crashed']:>7} {c['hung']:>5}")
    print(f"{'total':<10} {'':>6} {total['variants']:>8} {total['refused']:>8} {total['ran']:>5} "
          f"{total['crashed']:>7} {total['hung']:>5}")
    print("refused by: " + ", ".join(f"{k} {v}" for k, v in who.most_common()))
    for k, line in examples.items():
        print(f"  e.g. {k}: {re.sub(r'/[^ :]*/', '', line)[:230]}")
    if args.resign and harmless:
        print("ran to the end (changed field, outcome): variants")
        for (f, same), v in sorted(harmless.items(), key=lambda kv: -kv[1]):
            print(f"  {f} ({same}): {v}")
    for f in findings[:20]:
        print("FINDING", *f)
    bad = total["crashed"] + total["hung"] + (0 if args.resign else total["ran"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
