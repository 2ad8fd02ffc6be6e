#!/usr/bin/env python3
"""Check a frenzy-launch log (test helper).

usage: check_training.py LOG [--below X] [--decreases]
  --below X    the mean loss of the last fifth of the logged steps is below X
               (one step's loss depends on which part of the corpus it saw)
  --decreases  the mean loss of the last fifth of the logged steps is below
               the mean of the first fifth
Prints the first and last loss; exits 1 when a check fails.
"""
import re
import sys


def main():
    log, args = sys.argv[1], sys.argv[2:]
    losses = [float(m.group(1)) for m in
              re.finditer(r"^step\s+\d+/\d+ \| loss (\S+)", open(log).read(), re.M)]
    if not losses:
        print(f"FAIL: no step lines in {log}")
        return 1
    fifth = max(1, len(losses) // 5)
    first, last = sum(losses[:fifth]) / fifth, sum(losses[-fifth:]) / fifth
    print(f"steps {len(losses)}: first {losses[0]:.4f}, last {losses[-1]:.4f}, "
          f"mean of first fifth {first:.4f}, of last fifth {last:.4f}")
    ok = True
    if "--below" in args:
        bound = float(args[args.index("--below") + 1])
        if not last < bound:
            print(f"FAIL: mean loss of the last fifth {last:.4f} is not below {bound}")
            ok = False
    if "--decreases" in args and not last < first:
        print("FAIL: the loss did not decrease")
        ok = False
    print("ok" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
