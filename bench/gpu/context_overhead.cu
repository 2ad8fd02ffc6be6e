// context_overhead.cu - device memory taken by the CUDA context and by one
// NCCL communicator, the fixed per-GPU overheads of the memory model
// (docs/memory.md). Prints bytes used after each stage.
//
// build: CMake builds build/bench/context_overhead where CUDA and NCCL exist
// (bench/CMakeLists.txt); by hand: nvcc -O2 -o context_overhead
// context_overhead.cu -lnccl (never commit the binary).
#include <cstdio>
#include <cuda_runtime.h>
#include <nccl.h>

static size_t usedBytes() {
  size_t freeB = 0, total = 0;
  cudaMemGetInfo(&freeB, &total);
  return total - freeB;
}

int main() {
  size_t before = 0, total = 0;
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess) {
    std::printf("no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  size_t ctx = usedBytes();
  cudaMemGetInfo(&before, &total);
  std::printf("device: %s, %zu bytes total\n", prop.name, total);
  std::printf("after context creation: %zu bytes used\n", ctx);
  ncclComm_t comm;
  int dev = 0;
  if (ncclCommInitAll(&comm, 1, &dev) != ncclSuccess) {
    std::printf("NCCL init failed\n");
    return 1;
  }
  // Buffers are set up lazily on the first collective.
  float *buf;
  cudaMalloc(&buf, 1 << 20);
  size_t withBuf = usedBytes();
  ncclAllReduce(buf, buf, 1 << 18, ncclFloat, ncclSum, comm, 0);
  cudaDeviceSynchronize();
  size_t afterNccl = usedBytes();
  std::printf("NCCL communicator (1 rank) after first all-reduce: %zu bytes\n",
              afterNccl - withBuf);
  ncclCommDestroy(comm);
  return 0;
}
