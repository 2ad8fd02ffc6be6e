//===- CudaRankRunner.h - one rank of a multi-rank plan on a GPU -*- C++ -*-===//
//
// The CUDA twin of runtime/dist/RankRunner: this process's rank of the
// plan, its stage's instructions on its GPU (CudaExecutor), driven by the
// rank's action stream with RankRunner's rules (micro-batch rows and
// dropout offsets, gradients summed over micro-batches and DP groups then
// divided by their count, a global gradient norm and loss, the update,
// tied-parameter sync). Transfers and sums go through NcclComms: NCCL, or
// the MPI fallback where ranks share a GPU (--share-gpus) or a peer is on
// the CPU.
//
// This first version orders everything on the compute stream (transfers
// too) and waits for each transfer: correct, without the overlap that
// host/StreamOrder's separate streams and events would give. DP groups
// whose pieces split a gradient (pipelines of different TP degrees) and
// full recomputation are refused.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_CUDARANKRUNNER_H
#define FRENZY_RUNTIME_CUDA_DEVICE_CUDARANKRUNNER_H

#include "CudaExecutor.h"
#include "NcclComms.h"
#include "TokenInputs.h"

#include <memory>
#include <optional>

namespace frenzy::rt::cuda {

struct CudaStepResult {
  double loss = 0, gradNorm = 0;
};

class CudaRankRunner {
public:
  /// Collective over MPI_COMM_WORLD (the communicators are made here).
  CudaRankRunner(const plan::Plan &plan, int rank, bool shareGpus);
  ~CudaRankRunner();
  /// Loads this rank's parameters (its shards) and puts them on the GPU.
  void loadWeights(std::optional<uint64_t> initSeed);
  void setData(const TokenData *tokens);
  CudaStepResult runStep(int64_t step, uint64_t seed);

  DeviceContext &device() { return *ctx; }
  Executor &host() { return *hostEx; }
  const plan::Rank &rank() const { return me; }

private:
  void beginMicroBatch(int64_t mb);
  void forwardOrBackward(const plan::Action &a);
  void reduceGradients();
  CudaStepResult update();
  void syncParams();
  float *deviceFloats(int32_t id) {
    return static_cast<float *>(ex->deviceTensor(id));
  }

  const plan::Plan &plan;
  plan::Rank me;
  const plan::StageProgram *st = nullptr;
  std::vector<int32_t> forward, backward, updates, order;
  std::set<int32_t> freeLate;
  std::vector<int32_t> toRelease;
  std::unique_ptr<Executor> hostEx;
  std::unique_ptr<DeviceContext> ctx;
  std::unique_ptr<NcclComms> comms;
  std::unique_ptr<CudaExecutor> ex;
  std::vector<std::pair<int32_t, float *>> accum; // by gradient tensor
  const TokenData *data = nullptr;
  std::optional<TokenInputs> inputs;
  double lossSum = 0;
  int64_t microBatchesRun = 0;
  float *scratch = nullptr; // two device floats: norm, factor
};

} // namespace frenzy::rt::cuda

#endif
