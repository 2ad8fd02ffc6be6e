//===- Common.cu - status strings and type names of the CUDA kernels ------===//
#include "Common.cuh"

#include <string>

namespace frenzy::cuda::kernels {

int floatBytes(FloatType t) { return t == FloatType::F32 ? 4 : 2; }

const char *floatTypeName(FloatType t) {
  switch (t) {
  case FloatType::F32: return "f32";
  case FloatType::BF16: return "bf16";
  case FloatType::F16: return "f16";
  }
  return "?";
}

Status cudaStatus(const char *what, cudaError_t e) {
  if (e == cudaSuccess)
    return {};
  return Status::error(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                       cudaGetErrorString(e) + ")");
}

Status launched(const char *kernel) {
  return cudaStatus(kernel, cudaGetLastError());
}

Status blasStatus(const char *what, cublasStatus_t e) {
  if (e == CUBLAS_STATUS_SUCCESS)
    return {};
  return Status::error(std::string(what) + ": " + cublasLtGetStatusName(e) +
                       " (" + cublasLtGetStatusString(e) + ")");
}

Status rankTooHigh(const char *kernel, size_t rank) {
  return Status::error(std::string(kernel) + ": rank " + std::to_string(rank) +
                       " is above the CUDA kernels' limit of " +
                       std::to_string(kMaxRank) +
                       " non-unit dims; reshape the tensor to fewer dims");
}

} // namespace frenzy::cuda::kernels
