//===- CudaBackend.h - the Backend of a rank on one GPU ---------*- C++ -*-===//
//
// runtime/backend/Backend.h over CudaExecutor, DeviceContext and its
// caching allocator. The CPU Executor is the host side (plan, shapes,
// weights, tokens, outputs, checkpointed moments), built with the plan
// seen as fp32 (it refuses to compute anything else; it computes nothing
// here); the GPU runs the plan's own precision. The data comm is NCCL
// (NcclComm) made from the host comm.
//
// Traces: with class times on, each instruction runs between two CUDA
// events and their elapsed time goes to its op class (the lent GPU
// machines have no working Nsight Systems: this is the profiler).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_CUDABACKEND_H
#define FRENZY_RUNTIME_CUDA_DEVICE_CUDABACKEND_H

#include "CudaExecutor.h"
#include "backend/Backend.h"

#include <map>
#include <memory>

namespace frenzy::rt::cuda {

class CudaBackend : public rt::Backend {
public:
  CudaBackend(const plan::Plan &plan, int rank, bool shareGpus,
              std::vector<int32_t> order = {}, std::set<int32_t> freeLate = {},
              int32_t program = 0);
  ~CudaBackend() override;

  const char *name() const override { return "cuda"; }
  std::string who() const override { return ctx->who(); }
  const std::string &notes() const { return ctx->notes(); }
  Executor &host() override { return *hostEx; }
  Comm &dataComm(Comm &hostComm) override;

  void fromHost() override;
  void toHost() override;
  void uploadInputs() override { ex->uploadInputs(); }

  void *data(int32_t id) override { return ex->deviceTensor(id); }
  int64_t bytes(int32_t id) override { return ex->deviceBytes(id); }
  bool has(int32_t id) override { return ex->holds(id); }
  void allocate(int32_t id) override { ex->deviceTensor(id); }
  void release(int32_t id) override { ex->release(id); }
  void switchMicroBatch(int64_t mb) override { ex->switchMicroBatch(mb); }

  void beginStep(int64_t step, uint64_t seed) override;
  void run(const std::vector<int32_t> &instrs) override;
  void runProgramStep(int64_t step, uint64_t seed) override;
  void endStep(int64_t step) override { ex->finishStep(step); }
  double loss(int64_t step) override { return ex->checkedLoss(step); }
  void setScalar(int32_t id, float value) override;
  void setTpAllReduce(std::function<void(float *, int64_t)> f) override;
  void setTpChunks(StepContext::Chunks allGather,
                   StepContext::Chunks reduceScatter) override;

  /// The accumulator is the first micro-batch's device buffer (a copy for
  /// a program output); the factor goes through a device scalar.
  void keepGradient(int32_t g) override;
  void addGradient(int32_t g) override;
  void restoreGradient(int32_t g, float factor) override;
  /// Device buffers from the caching allocator, kept between steps.
  float *pieceBuffer(size_t slot, int64_t n) override;
  void copyPiece(const plan::Piece &pc, int32_t g, float *buf,
                 bool intoAccumulator) override;
  double sumOfSquares(const std::vector<int32_t> &ids) override;

  int64_t peakBytes() override;
  int64_t comparablePrediction(const plan::Rank &r) const override {
    return r.predicted_peak_bytes(); // it counts the context and workspace
  }
  std::string memorySummary(int64_t predicted) override;
  std::string stepNote() override;
  std::string stepMemory(int64_t predicted) override;
  void setClassTimes(double *seconds) override { classTimes = seconds; }

private:
  cudaStream_t stream() const { return ctx->compute(); }
  void check(const k::Status &st, const char *what) const;
  /// Adds the elapsed time of the recorded instruction events to their
  /// op classes (waits for the last one).
  void collectEvents();

  const plan::Plan &plan;
  plan::Plan hostPlan; // the plan as fp32, for the host executor
  std::vector<int32_t> order;
  std::set<int32_t> freeLate;
  std::unique_ptr<Executor> hostEx;
  std::unique_ptr<DeviceContext> ctx;
  std::unique_ptr<Comm> nccl;
  std::unique_ptr<CudaExecutor> ex;
  std::function<void(float *, int64_t)> tpAllReduce;
  StepContext::Chunks tpAllGather, tpReduceScatter;
  /// By gradient: the accumulator (the first micro-batch's gradient
  /// buffer, or a copy of a persistent one) and whether it is a copy.
  std::map<int32_t, std::pair<float *, bool>> accum;
  std::vector<std::pair<float *, int64_t>> bufs; // piece buffers, floats
  float *scalars = nullptr;                      // factor, norm scratch
  double *classTimes = nullptr;
  std::vector<uint8_t> opClass;                  // by instruction
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events;
  std::vector<int> eventClass;                   // op class per event pair
  size_t eventsUsed = 0;
};

} // namespace frenzy::rt::cuda

#endif
