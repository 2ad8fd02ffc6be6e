#!/bin/bash
# Records what every frenzy-opt run of a lit suite writes, for a byte-for-byte
# comparison after a change to the compiler (docs/plan.md, "Regression").
# Installed in place of build/bin/frenzy-opt (the real one renamed
# frenzy-opt.real); each run with -o FILE leaves DIR/KEY.N.{out,cmd,rc}: the
# output, the working directory and arguments, and the exit status.
#   mv build/bin/frenzy-opt build/bin/frenzy-opt.real
#   cp scripts/record_plans.sh build/bin/frenzy-opt
#   lit build/test                     # PLAN_RECORD_DIR, default /tmp/plan-record
#   mv build/bin/frenzy-opt.real build/bin/frenzy-opt
#   (change, rebuild)
#   python3 scripts/replay_plans.py /tmp/plan-record build/bin/frenzy-opt /tmp/plan-new
real="$(dirname "$0")/frenzy-opt.real"
"$real" "$@"
rc=$?
out=""
prev=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out="$a"; fi
  case "$a" in -o=*) out="${a#-o=}";; esac
  prev="$a"
done
if [ -n "$out" ] && [ "$out" != "-" ] && [ -f "$out" ]; then
  dir="${PLAN_RECORD_DIR:-/tmp/plan-record}"
  mkdir -p "$dir"
  key=$(printf '%s\0' "$PWD" "$@" | sha1sum | cut -c1-16)
  n=0; while [ -e "$dir/$key.$n.out" ]; do n=$((n+1)); done
  cp "$out" "$dir/$key.$n.out"
  { printf '%s\n' "$PWD"; printf '%s\0' "$@"; } > "$dir/$key.$n.cmd"
  echo "$rc" > "$dir/$key.$n.rc"
fi
exit $rc
