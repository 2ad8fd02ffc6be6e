//===- CommTestNccl.cpp - the NCCL transport for CommTest's cases ---------===//
//
// Built with the CUDA backend. A plan made for the test: every rank on this
// node's GPUs (several ranks per GPU where there are fewer GPUs than ranks:
// those communicators take the host-staging fallback), a transfer between
// every ordered pair of ranks, and the groups the cases make: all ranks
// and {0, last}. Without a visible GPU the cases are skipped, saying so.
//
//===----------------------------------------------------------------------===//
#include "CommTestMemory.h"
#include "DeviceContext.h"
#include "NcclComm.h"
#include "Tensor.h"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace frenzy::rt {

namespace {

class DeviceMemory final : public Memory {
public:
  DeviceMemory(cuda::DeviceContext &ctx, cuda::NcclComm &comm)
      : ctx(ctx), comm(comm) {}
  void *alloc(int64_t bytes) override {
    void *p = nullptr;
    if (cudaMalloc(&p, size_t(std::max<int64_t>(bytes, 1))) != cudaSuccess)
      throw RuntimeError(ctx.who() + ": cudaMalloc of " +
                         std::to_string(bytes) + " bytes failed");
    return p;
  }
  void release(void *p) override {
    comm.synchronize("freeing a test buffer");
    cudaFree(p);
  }
  void toComm(void *dst, const void *src, int64_t bytes) override {
    // On the compute stream: after the transport's copies of what was
    // there (a buffered send), as the runner's next kernel would be.
    if (cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyHostToDevice,
                        ctx.compute()) != cudaSuccess)
      throw RuntimeError(ctx.who() + ": cudaMemcpyAsync to the device failed");
    ctx.synchronize(ctx.compute(), 60, "a test buffer's upload");
  }
  void fromComm(void *dst, const void *src, int64_t bytes) override {
    comm.synchronize("a test buffer's transfers");
    if (cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDeviceToHost,
                        ctx.compute()) != cudaSuccess)
      throw RuntimeError(ctx.who() + ": cudaMemcpyAsync to the host failed");
    ctx.synchronize(ctx.compute(), 60, "a test buffer's download");
  }

private:
  cuda::DeviceContext &ctx;
  cuda::NcclComm &comm;
};

plan::Plan testPlan(int ranks) {
  plan::Plan p;
  for (int r = 0; r < ranks; ++r) {
    plan::Rank *k = p.add_ranks();
    k->set_id(r);
    k->set_node("localhost");
    k->set_device(r);
    for (int to = 0; to < ranks; ++to)
      if (to != r) {
        plan::Action *a = k->add_stream();
        a->set_kind(plan::Action::SEND);
        a->set_peer(to);
      }
  }
  plan::CommGroup *all = p.add_groups();
  all->set_kind(plan::CommGroup::DP);
  for (int r = 0; r < ranks; ++r)
    all->add_ranks(r);
  plan::CommGroup *ends = p.add_groups();
  ends->set_kind(plan::CommGroup::DP);
  ends->add_ranks(0);
  ends->add_ranks(ranks - 1);
  return p;
}

} // namespace

NcclTransport makeNcclTransport(Comm &host) {
  NcclTransport t;
  std::vector<cuda::GpuInfo> gpus;
  cuda::CudaAvailability a = cuda::probeCuda(&gpus);
  int64_t none = gpus.empty() ? 1 : 0, anyNone = none;
  host.allReduceMax(&anyNone, 1); // every rank decides alike
  if (anyNone) {
    t.why = "no GPU visible on some rank" +
            (a.probeError.empty() ? std::string() : " (" + a.probeError + ")");
    return t;
  }
  struct Held {
    plan::Plan plan;
    std::unique_ptr<cuda::DeviceContext> ctx;
  };
  auto held = std::make_shared<Held>();
  held->plan = testPlan(host.size());
  held->ctx = std::make_unique<cuda::DeviceContext>(held->plan, host.rank(),
                                                    /*shareGpus=*/true);
  auto comm =
      std::make_unique<cuda::NcclComm>(held->plan, *held->ctx, host, 120.0);
  t.memory = std::make_unique<DeviceMemory>(*held->ctx, *comm);
  t.comm = std::move(comm);
  t.keep = held;
  return t;
}

} // namespace frenzy::rt
