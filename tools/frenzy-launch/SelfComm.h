//===- SelfComm.h - the Comm of a job of one process ------------*- C++ -*-===//
//
// A plain one-rank plan runs without MPI (no mpirun, no MPI_Init): the
// training loop's collectives over a world of one are the identity, and a
// point-to-point call means a plan this process cannot run alone.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_TOOLS_LAUNCH_SELFCOMM_H
#define FRENZY_TOOLS_LAUNCH_SELFCOMM_H

#include "Comm.h"
#include "Tensor.h"

#include <algorithm>
#include <cstdlib>

namespace frenzy::rt {

class SelfComm : public Comm {
public:
  const char *name() const override { return "self"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void send(const void *, int64_t, int peer, int) override { none(peer); }
  void recv(void *, int64_t, int peer, int) override { none(peer); }
  std::unique_ptr<Work> isend(const void *, int64_t, int peer, int) override {
    none(peer);
  }
  std::unique_ptr<Work> irecv(void *, int64_t, int peer, int) override {
    none(peer);
  }
  void probe(int peer, int) override { none(peer); }
  bool arrived(int peer, int) override { none(peer); }
  void waitSends() override {}
  Group group(const std::vector<int32_t> &, int) override {
    return Group::world();
  }
  void allReduceSum(float *, int64_t, Group, const Arrived &) override {}
  void allReduceSum(double *, int64_t, Group, const Arrived &) override {}
  void allReduceMax(int64_t *, int64_t, Group) override {}
  void broadcast(void *, int64_t, int, Group) override {}
  void allGather(const float *mine, float *all, int64_t n, Group) override {
    std::copy(mine, mine + n, all);
  }
  void reduceScatterSum(const float *all, float *mine, int64_t n,
                        Group) override {
    std::copy(all, all + n, mine);
  }
  void barrier(Group) override {}
  std::vector<int64_t> gather(int64_t value) override { return {value}; }
  std::vector<std::string> gatherBytes(const std::string &mine) override {
    return {mine};
  }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }

private:
  [[noreturn]] static void none(int peer) {
    throw RuntimeError("rank 0: a one-process run has no rank " +
                       std::to_string(peer) + " to talk to");
  }
};

} // namespace frenzy::rt

#endif
