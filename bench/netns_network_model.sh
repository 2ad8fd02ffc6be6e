#!/usr/bin/env bash
# netns_network_model.sh - the network model against measurement on emulated nodes.
#
#   bench/netns_network_model.sh [STEPS] [BURST]      (as root; build/bin on PATH or built in build/)
#
# For each emulated cluster (test/lib/netns_cluster.sh: 2 nodes at 1 and 10
# Gbit/s, so their link is the 1 Gbit/s one; 2 nodes at 10 Gbit/s; 3 nodes
# at 1, 10, 10 Gbit/s), frenzy-calibrate --cluster measures the links into
# the cluster file's topology; then the bundled GPT (examples/gpt2-tiny.onnx)
# is planned as a 2-node pipeline and a DP plan of one pipeline per node, at
# batch 8 and at batch 64 (micro-batches of 16 sequences: 256 KiB
# transfers), and run STEPS steps (default 12) with --trace. Printed per
# plan: predicted (frenzy-opt --emit=trace, with the measured links) and
# measured (frenzy-launch --trace) step, DP all-reduce and stage-transfer
# times with their ratio (bench/network_model_compare.py). BURST (default
# 1ms: 1 ms of each link's rate) is the links' tbf bucket (netns_cluster.sh --burst); SHAPER=htb
# shapes them with htb instead (netns_cluster.sh --shaper). The compute side is the cpu type's
# profile measured by frenzy-calibrate just before the runs (PROFILE=FILE: use FILE instead).
# Run it as `chrt -f 10 bench/netns_network_model.sh ...` (root) on a machine shared with other
# work: SCHED_FIFO gives calibration and ranks the cores as on an idle machine (docs/multinode.md).
set -euo pipefail
steps=${1:-12}
burst=${2:-1ms}
src=$(cd "$(dirname "$0")/.." && pwd)
[[ -x $src/build/bin/frenzy-opt ]] && export PATH=$src/build/bin:$PATH
work=$(mktemp -d /tmp/netns_network_model.XXXXXX)
# KEEP=1 leaves the plans, traces and logs in $work for a closer look.
if [[ -n ${KEEP:-} ]]; then echo "work directory kept: $work"; else trap 'rm -rf "$work"' EXIT; fi
python3 "$src/scripts/make_corpus.py" "$src/data/corpus-gpl3.txt" "$work/corpus.tokens" > /dev/null
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# The compute side: the cpu type's profile measured here and now, on the
# one-rank plans at the micro-batch sizes the plans below run (2 and 16
# sequences), so that compute and links meet the same machine state (a
# shipped profile measured at another load was 2-5x off). PROFILE=FILE
# skips this and uses FILE.
profile=${PROFILE:-}
if [[ -z $profile ]]; then
  profile=$work/cpu-now.yaml
  refs=()
  for b in 2 16; do
    frenzy-opt "$src/examples/gpt2-tiny.onnx" --batch=$b --seq=64 \
        --cluster="$src/examples/cpu-1.yaml" -o "$work/ref-b$b.bin" > /dev/null
    refs+=("--plan=$work/ref-b$b.bin")
  done
  frenzy-calibrate "${refs[@]}" -o "$profile" --force > "$work/calibrate.log" 2>&1 ||
    { echo "frenzy-calibrate (compute) failed:"; tail -3 "$work/calibrate.log"; exit 1; }
  echo "compute profile measured now (load average $(cut -d' ' -f1-3 /proc/loadavg))"
fi
export SRC=$src WORK=$work STEPS=$steps PROFILE=$profile

# case NAME RATES COUNTS LAYOUTS...: one emulated cluster and its plans.
run_case() {
  local name=$1 rates=$2 counts=$3
  shift 3
  CASE=$name COUNTS=$counts LAYOUTS="$*" "$src/test/lib/netns_cluster.sh" \
      --rates="$rates" --burst="$burst" --shaper="${SHAPER:-tbf}" "$(echo "$counts" | tr ',' '\n' | wc -l)" -- bash -c '
    set -e
    cd "$WORK"
    python3 "$SRC/test/lib/netns_cluster_yaml.py" \
        --profile="$PROFILE" "$COUNTS" > "$CASE.yaml"
    frenzy-calibrate --cluster="$CASE.yaml" -o "$CASE.links.yaml" --force \
        --launch-agent="$NETNS_AGENT" --sizes=8,16K,64K,256K,1M,4M --rounds=10 |
        grep -E "^(pair|all-reduce) " | sed "s/^/$CASE: /"
    for batch in 8 64; do
      for layout in $LAYOUTS; do
        tag=$CASE-b$batch-$(echo "$layout" | tr ",@/" "x__")
        opts="$SRC/examples/gpt2-tiny.onnx --batch=$batch --seq=64 --cluster=$CASE.links.yaml --layout=$layout"
        frenzy-opt $opts -o "$tag.plan" > /dev/null
        frenzy-opt $opts --emit=trace > "$tag.pred.json" 2> /dev/null
        frenzy-launch "$tag.plan" --steps="$STEPS" --data=corpus.tokens \
            --launch-agent="$NETNS_AGENT" --trace="$tag.meas.json" > "$tag.log" 2>&1 ||
            { echo "$tag: frenzy-launch failed:"; tail -3 "$tag.log"; exit 1; }
        python3 "$SRC/bench/network_model_compare.py" "$tag.pred.json" \
            "$tag.meas.json" --label="$tag  "
      done
    done' 2>&1 | grep -v "^netns_cluster: node"
}

# Layouts: 1,1@M is one pipeline of two stages (node 0 then node 1); K@M/...
# is one single-stage pipeline per node (DP across the nodes).
run_case 1g 1gbit,10gbit 1,1 1,1@4 2@2/2@2
run_case 10g 10gbit 1,1 1,1@4 2@2/2@2
run_case 3n 1gbit,10gbit,10gbit 1,1,1 2@2/2@1/2@1
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
