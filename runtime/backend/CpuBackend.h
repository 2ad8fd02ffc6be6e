//===- CpuBackend.h - the Backend of CPU ranks ------------------*- C++ -*-===//
//
// The Executor's kernels on host memory: the Executor is both the host
// side and the device, so host<->device copies are no-ops and the data
// comm is the host comm (MpiComm).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_BACKEND_CPUBACKEND_H
#define FRENZY_RUNTIME_BACKEND_CPUBACKEND_H

#include "Backend.h"

#include <map>
#include <memory>

namespace frenzy::rt {

class CpuBackend : public Backend {
public:
  /// The Executor's arguments (Executor.h).
  explicit CpuBackend(const plan::Plan &plan, std::vector<int32_t> instrs = {},
                      std::set<int32_t> freeLate = {}, int32_t program = 0,
                      int rank = 0);

  const char *name() const override { return "cpu"; }
  std::string who() const override;
  Executor &host() override { return *ex; }
  Comm &dataComm(Comm &hostComm) override { return hostComm; }

  void fromHost() override {}
  void toHost() override {}
  void uploadInputs() override {}

  void *data(int32_t id) override;
  int64_t bytes(int32_t id) override { return ex->tensor(id).bytes(); }
  bool has(int32_t id) override { return !ex->tensor(id).storage.empty(); }
  void allocate(int32_t id) override { ex->allocate(id); }
  void release(int32_t id) override { ex->release(id); }
  void switchMicroBatch(int64_t mb) override { ex->switchMicroBatch(mb); }

  void beginStep(int64_t step, uint64_t seed) override {
    ex->beginStep(step, seed);
  }
  void run(const std::vector<int32_t> &instrs) override { ex->run(instrs); }
  void runProgramStep(int64_t step, uint64_t seed) override {
    ex->runStep(step, seed);
  }
  void endStep(int64_t) override {}
  double loss(int64_t step) override;
  void setScalar(int32_t id, float value) override;
  void setTpAllReduce(std::function<void(float *, int64_t)> f) override {
    ex->context().tpAllReduce = std::move(f);
  }
  void setBetweenKernels(std::function<void()> f) override {
    ex->context().betweenKernels = std::move(f);
  }
  void setTpChunks(StepContext::Chunks allGather,
                   StepContext::Chunks reduceScatter) override {
    ex->context().tpAllGather = std::move(allGather);
    ex->context().tpReduceScatter = std::move(reduceScatter);
  }

  void keepGradient(int32_t g) override;
  void addGradient(int32_t g) override;
  void restoreGradient(int32_t g, float factor) override;
  float *pieceBuffer(size_t slot, int64_t n) override;
  void copyPiece(const plan::Piece &pc, int32_t g, float *buf,
                 bool intoAccumulator) override;
  double sumOfSquares(const std::vector<int32_t> &ids) override;

  int64_t peakBytes() override { return ex->peakBytes(); }
  int64_t comparablePrediction(const plan::Rank &r) const override;
  std::string memorySummary(int64_t predicted) override;
  void setClassTimes(double *seconds) override { ex->setClassTimes(seconds); }

private:
  std::unique_ptr<Executor> ex;
  int rank;
  /// By gradient tensor: the first micro-batch's gradient storage, taken
  /// from the executor (still counted there), which later micro-batches
  /// add into; given back before the update.
  std::map<int32_t, std::vector<uint64_t>> accum;
  /// DP pieces' contiguous buffers, kept from step to step: a fresh buffer
  /// every step pays its page faults again (on this VM ~0.4 ms for the
  /// tiny GPT's 0.9 MB of gradients).
  std::vector<std::vector<float>> bufs;
};

} // namespace frenzy::rt

#endif
