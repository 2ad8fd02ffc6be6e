# lit configuration for Frenzy's FileCheck tests.
import os
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "FRENZY"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.frenzy_obj_root, "test")
config.excludes = ["Inputs", "Unit", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%src", config.frenzy_src_root))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%python", config.frenzy_test_python))
# Fuzz harnesses (replayers outside a FRENZY_FUZZ build): fuzz/CMakeLists.txt.
config.substitutions.append(("%fuzz", os.path.join(config.frenzy_obj_root, "fuzz")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.frenzy_tools_dir, append_path=True)
# The executor fills reused activation buffers with NaN, so a kernel that
# reads an output before writing it fails the suite (Executor.h).
config.environment["FRENZY_POISON_REUSED"] = "1"
llvm_config.add_tool_substitutions(["frenzy-opt", "frenzy-launch", "frenzy-calibrate"], [config.frenzy_tools_dir])
llvm_config.add_tool_substitutions(["frenzy-sched", "frenzy-translate"], [config.frenzy_tools_dir])
llvm_config.add_tool_substitutions(["frenzy-elastic"], [config.frenzy_tools_dir])

# Tests that export real models need Debian's python3-torch / python3-onnx.
def python_has(module):
    try:
        return subprocess.run([config.frenzy_test_python, "-c", "import " + module],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False

if python_has("torch"):
    config.available_features.add("torch")
else:
    lit_config.note("python3-torch not found: model-export tests are UNSUPPORTED")
# onnxruntime lives in a venv that scripts/setup.sh makes (PyPI).
ort_python = os.path.join(config.frenzy_obj_root, "venv-ort", "bin", "python")
config.substitutions.append(("%ortpython", ort_python))
try:
    has_ort = subprocess.run([ort_python, "-c", "import onnxruntime"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             timeout=120).returncode == 0
except (OSError, subprocess.TimeoutExpired):
    has_ort = False
if has_ort:
    config.available_features.add("onnxruntime")
else:
    lit_config.note("onnxruntime not installed (build/venv-ort): the onnxruntime export check is UNSUPPORTED")
if python_has("onnx"):
    config.available_features.add("onnx")
else:
    lit_config.note("python3-onnx not found: external-data tests are UNSUPPORTED")

# The CUDA backend (docs/cuda.md): 'cuda-backend' when frenzy-launch was
# built with it, 'cuda-gpu' when nvidia-smi lists a GPU. The end-to-end CUDA
# tests need both and are UNSUPPORTED otherwise, with the reason below.
if config.frenzy_cuda_backend in ("ON", "1", "TRUE"):
    config.available_features.add("cuda-backend")
else:
    lit_config.note("frenzy-launch built without the CUDA backend: CUDA end-to-end tests are UNSUPPORTED")
try:
    smi = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, timeout=60, text=True)
    has_gpu = smi.returncode == 0 and "GPU " in smi.stdout
except (OSError, subprocess.TimeoutExpired):
    has_gpu = False
if has_gpu:
    config.available_features.add("cuda-gpu")
    if "H100" in smi.stdout:
        config.available_features.add("cuda-h100")
else:
    lit_config.note("no NVIDIA GPU (nvidia-smi -L lists none): CUDA end-to-end tests are UNSUPPORTED (needs a GPU to verify)")

# MPI programs under test (unittests/comm/CommTest.cpp): mpirun with more
# ranks than cores, as root where the suite runs as root.
config.substitutions.append(("%unittests", os.path.join(config.frenzy_obj_root, "unittests")))
config.substitutions.append(("%mpirun", "mpirun --oversubscribe --bind-to none" +
                             (" --allow-run-as-root" if os.geteuid() == 0 else "")))

# Emulated nodes (test/lib/netns_cluster.sh, docs/multinode.md): 'netns' when
# this process may create a network namespace (root, or CAP_SYS_ADMIN and
# CAP_NET_ADMIN) and Open MPI's mpirun is installed.
def can_make_netns():
    import shutil
    if not shutil.which("mpirun") or not shutil.which("unshare") or not shutil.which("ip"):
        return "mpirun, unshare or ip is not installed"
    name = "fzprobe%d" % os.getpid()
    try:
        made = subprocess.run(["ip", "netns", "add", name], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "ip netns add: %s" % e
    if made.returncode != 0:
        return "ip netns add: %s" % (made.stderr.strip().splitlines() or ["failed"])[-1]
    subprocess.run(["ip", "netns", "del", name], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=30)
    return ""

netns_why = can_make_netns()
if not netns_why:
    config.available_features.add("netns")
else:
    lit_config.note("cannot create network namespaces (%s): multi-node tests on emulated nodes are UNSUPPORTED" % netns_why)

# A real Slurm cluster (Debian's slurmctld, slurmd, slurm-client and munge;
# root, for the fake GPU device nodes): 'slurm' for `sbatch --test-only`
# (test/lib/slurm_test_only.sh) and, with 'netns', for jobs that really run
# on the emulated nodes (test/lib/netns_slurm.sh, docs/multinode.md).
import shutil
if os.geteuid() == 0 and all(shutil.which(t) for t in
                             ("slurmctld", "slurmd", "sbatch", "sinfo",
                              "squeue", "scontrol", "munged", "nsenter")):
    config.available_features.add("slurm")
else:
    lit_config.note("slurmctld/slurmd/munge not installed (scripts/setup.sh) "
                    "or not root: the Slurm tests are UNSUPPORTED")
config.substitutions.append(
    ("%opt_bin", os.path.join(config.frenzy_tools_dir, "frenzy-opt")))
config.substitutions.append(
    ("%frenzy_launch_bin", os.path.join(config.frenzy_tools_dir, "frenzy-launch")))
