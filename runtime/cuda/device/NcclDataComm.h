//===- NcclDataComm.h - NcclComms behind the Comm interface -----*- C++ -*-===//
//
// A thin adapter so the shared rank runner talks to a GPU's tensors through
// runtime/comm/Comm.h: buffers are device memory ordered on the compute
// stream (memory() == Device); groups are the plan's groups (the runner
// makes group(ranks, g) with g the plan's group index); scalars, barriers
// and gathers go to the host comm. Point-to-point runs on the compute
// stream as NcclComms does today, so probe() cannot tell when a message is
// there: arrived() says "not yet" and a side-task slot is bounded by its
// time alone. The NCCL transport of issue 24 (NcclComm: p2p on its own
// streams, events against the compute stream) replaces this class.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_DEVICE_NCCLDATACOMM_H
#define FRENZY_RUNTIME_CUDA_DEVICE_NCCLDATACOMM_H

#include "Comm.h"
#include "NcclComms.h"

#include <map>
#include <memory>

namespace frenzy::rt::cuda {

class NcclDataComm : public Comm {
public:
  /// Collective over every rank (NcclComms' set-up).
  NcclDataComm(const plan::Plan &plan, DeviceContext &ctx, Comm &host,
               double timeoutSeconds);

  const char *name() const override { return "nccl"; }
  int rank() const override { return host.rank(); }
  int size() const override { return host.size(); }
  MemorySpace memory() const override { return MemorySpace::Device; }

  void send(const void *data, int64_t bytes, int peer, int tag) override;
  void recv(void *data, int64_t bytes, int peer, int tag) override;
  std::unique_ptr<Work> isend(const void *data, int64_t bytes, int peer,
                              int tag) override;
  std::unique_ptr<Work> irecv(void *data, int64_t bytes, int peer,
                              int tag) override;
  void probe(int, int) override {}
  bool arrived(int, int) override { return false; }
  void waitSends() override { comms.waitSends(); }

  Group group(const std::vector<int32_t> &ranks, int tag) override;
  /// Device floats over the plan group's communicator (on the compute
  /// stream; `arrived` is not called: the wait cannot be seen apart).
  void allReduceSum(float *data, int64_t n, Group g,
                    const Arrived &arrived = nullptr) override;
  /// Host doubles and maxima: the host comm's world only.
  void allReduceSum(double *data, int64_t n, Group g,
                    const Arrived &arrived = nullptr) override;
  void allReduceMax(int64_t *data, int64_t n, Group g) override;
  void broadcast(void *data, int64_t bytes, int root, Group g) override;
  void barrier(Group g) override;
  std::vector<int64_t> gather(int64_t value) override {
    return host.gather(value);
  }
  std::vector<std::string> gatherBytes(const std::string &mine) override {
    return host.gatherBytes(mine);
  }
  [[noreturn]] void abort(int code) override;

private:
  /// The plan group's communicator (null: this rank alone in it).
  const CommSpec *spec(Group g) const;
  DeviceContext &ctx;
  Comm &host;
  NcclComms comms;
  std::map<int, int> planGroup; // Group id -> plan group index
};

} // namespace frenzy::rt::cuda

#endif
