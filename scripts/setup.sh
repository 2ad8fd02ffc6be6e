#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages only), then configures and
# builds Frenzy into build/. Safe to run again: installs nothing twice and
# rebuilds incrementally. Run as root on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ time pkg-config
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libopenblas-dev libopenmpi-dev openmpi-bin
  python3 python3-torch python3-onnx libonnx-testdata python3-venv python3-pip
)
packages+=(clang libclang-rt-14-dev)  # libFuzzer + sanitizers: scripts/fuzz.sh, docs/hardening.md
packages+=(coinor-libcbc-dev)  # the scheduler baselines' MILP/LP solver (lib/Scheduler/Solver.cpp)
packages+=(slurmctld slurmd slurm-client munge)  # scheduler tests: sbatch --test-only on localhost
packages+=(libsqlite3-dev)  # frenzy-sched serve: the persistent job queue (docs/scheduler.md)
packages+=(chromium)  # headless browser of the status-page test (test/Scheduler/serve-statuspage.test)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ccache, when the machine has it, makes rebuilds in fresh clones cheap.
launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -B build -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py
fi
# Only what the demo runs: check-frenzy builds the tests and tools it needs.
ninja -C build frenzy-opt frenzy-launch

# onnxruntime (PyPI; Debian has none) checks exported models. Optional: when
# PyPI is out of reach the export test says UNSUPPORTED.
if [ ! -x build/venv-ort/bin/python ] || ! build/venv-ort/bin/python -c "import onnxruntime" 2> /dev/null; then
  /usr/bin/python3 -m venv --system-site-packages build/venv-ort &&
    build/venv-ort/bin/pip install -q --disable-pip-version-check onnxruntime ||
    echo "setup: could not install onnxruntime from PyPI; the ONNX export test will be UNSUPPORTED"
fi

# The bundled corpus as a token file (docs/data.md), for frenzy-launch --data.
if [ ! -f build/corpus-gpl3.tokens ]; then
  python3 scripts/make_corpus.py data/corpus-gpl3.txt build/corpus-gpl3.tokens
fi
