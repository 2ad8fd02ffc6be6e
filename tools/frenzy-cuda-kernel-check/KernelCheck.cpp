//===- KernelCheck.cpp - every CUDA kernel against the CPU kernel ---------===//
//
// frenzy-cuda-kernel-check runs each kernel of runtime/cuda/kernels on the
// GPU and the matching CPU kernel of runtime/cpu on the same seeded random
// inputs, and prints one table row per comparison (max error relative to
// the tensor's scale, the tolerance, PASS/FAIL). f32 must match within
// 1e-5; bf16/f16 within the bounds in CheckHarness.h (docs/cuda-kernels.md).
// Exit 1 on any failure. --bench times the kernels at GPT-2 124M shapes
// instead (KernelBench.cpp). Without a CUDA device it prints one SKIP line
// with the reason and exits 0, so CI without a GPU stays green and shows
// that nothing was verified.
//
//===----------------------------------------------------------------------===//
#include "CheckHarness.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

using namespace frenzy::kcheck;

int main(int argc, char **argv) {
  // Checked before the device: a typo must not pass as a SKIP on CI.
  if (argc > 2 || (argc == 2 && std::string(argv[1]) != "--bench")) {
    std::fprintf(stderr,
                 "frenzy-cuda-kernel-check: error: unknown argument '%s'; "
                 "usage: frenzy-cuda-kernel-check [--bench]\n",
                 argv[argc > 2 && std::string(argv[1]) == "--bench" ? 2 : 1]);
    return 2;
  }
  const bool bench = argc == 2;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device (%s); the CUDA kernels were not run\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 0;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s (sm_%d%d), CUDA runtime checks against the CPU "
              "backend\n",
              prop.name, prop.major, prop.minor);
  Env &ev = env();
  if (cudaStreamCreate(&ev.stream) != cudaSuccess ||
      cublasLtCreate(&ev.blas.lt) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "frenzy-cuda-kernel-check: cannot create a stream "
                         "and a cuBLASLt handle on device 0\n");
    return 1;
  }
  ev.blas.workspaceBytes = size_t(32) << 20;
  if (cudaMalloc(&ev.blas.workspace, ev.blas.workspaceBytes) != cudaSuccess) {
    std::fprintf(stderr, "frenzy-cuda-kernel-check: cannot allocate the "
                         "32 MiB cuBLASLt workspace\n");
    return 1;
  }
  if (bench) {
    runBench();
    return 0;
  }
  checkContractions();
  checkElementwise();
  checkMovementAndReduce();
  checkNorms();
  checkLossAndEmbedding();
  checkAttention();
  checkOptimizer();
  int failures = printTable();
  if (failures) {
    std::printf("FAILED: %d comparison(s) outside tolerance\n", failures);
    return 1;
  }
  std::printf("all kernels match the CPU backend\n");
  return 0;
}
