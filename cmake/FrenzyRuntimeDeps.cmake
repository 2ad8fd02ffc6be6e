# FrenzyRuntimeDeps.cmake - what the runtime (frenzy-launch) builds against.
#
# Included by the root CMakeLists.txt and by runtime/CMakeLists.txt when the
# runtime is configured on its own (docs/runtime.md), so both builds find the
# same packages the same way. Nothing here may need LLVM or MLIR: a training
# node installs only protobuf, ONNX's protobuf schema, MPI and OpenBLAS (and
# CUDA/NCCL where it has GPUs).

# Protobuf must be found first: ONNX's exported targets refer to it.
# (Debian: libprotobuf-dev protobuf-compiler libonnx-dev)
find_package(Protobuf REQUIRED)
find_package(ONNX CONFIG REQUIRED)

# OpenBLAS (Debian: libopenblas-dev): the CPU backend's GEMM.
find_library(FRENZY_OPENBLAS NAMES openblas REQUIRED)

# MPI between ranks (Debian: libopenmpi-dev); the C API only.
find_package(MPI REQUIRED COMPONENTS C)

# --- Optional CUDA / NCCL: detected, never required by default ---------------
# FRENZY_CUDA: AUTO builds the CUDA backend when nvcc, cuBLAS and NCCL are
# found (CUDA lives in /usr/local/cuda, not in Debian), ON requires them,
# OFF never looks. Without them frenzy-launch is CPU-only (docs/cuda.md).
set(FRENZY_CUDA AUTO CACHE STRING "CUDA/NCCL backend: AUTO, ON or OFF")
set_property(CACHE FRENZY_CUDA PROPERTY STRINGS AUTO ON OFF)
include(${CMAKE_CURRENT_LIST_DIR}/FrenzyCuda.cmake)
