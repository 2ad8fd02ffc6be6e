//===- ShmComm.cpp - the Comm over one node's shared memory ---------------===//
#include "ShmComm.h"

#include "MpiComm.h"
#include "NodeAllReduce.h"
#include "Tensor.h"

#include <algorithm>

namespace frenzy::rt {

ShmComm::ShmComm(MpiComm &w) : world(w) {
  if (!NodeAllReduce::allOnNode(world.handle(Group::world())))
    throw RuntimeError("rank " + std::to_string(world.rank()) +
                       ": the shared-memory transport needs every rank on "
                       "one node; use the MPI transport");
}

ShmComm::~ShmComm() {
  // Freeing a window is collective: every member frees its windows in the
  // same (reverse creation) order.
  for (auto it = windowOrder.rbegin(); it != windowOrder.rend(); ++it)
    windows.erase(*it);
}

int ShmComm::rank() const { return world.rank(); }
int ShmComm::size() const { return world.size(); }

void ShmComm::send(const void *data, int64_t bytes, int peer, int tag) {
  world.send(data, bytes, peer, tag);
}
void ShmComm::recv(void *data, int64_t bytes, int peer, int tag) {
  world.recv(data, bytes, peer, tag);
}
std::unique_ptr<Work> ShmComm::isend(const void *data, int64_t bytes, int peer,
                                     int tag) {
  return world.isend(data, bytes, peer, tag);
}
std::unique_ptr<Work> ShmComm::irecv(void *data, int64_t bytes, int peer,
                                     int tag) {
  return world.irecv(data, bytes, peer, tag);
}
void ShmComm::probe(int peer, int tag) { world.probe(peer, tag); }
void ShmComm::probe(int peer, int tag, double napUntil) {
  world.probe(peer, tag, napUntil);
}
bool ShmComm::arrived(int peer, int tag) { return world.arrived(peer, tag); }
void ShmComm::waitSends() { world.waitSends(); }

Group ShmComm::group(const std::vector<int32_t> &ranks, int tag) {
  Group g = world.group(ranks, tag);
  tags[g.id] = tag;
  return g;
}

uint64_t ShmComm::collectiveId(Group g) {
  auto it = tags.find(g.id);
  uint64_t tag = it == tags.end() ? 0 : uint64_t(it->second) + 1;
  return (tag << 40) | ++calls[g.id];
}

NodeAllReduce *ShmComm::window(Group g, int64_t bytes) {
  auto it = windows.find(g.id);
  if (it != windows.end())
    return it->second.get();
  // Collective over the group's members (all call their first collective
  // on it together). Made without the core where turns are on: a core-mate
  // may need it to get here.
  giveUpCore();
  std::unique_ptr<NodeAllReduce> w = NodeAllReduce::create(
      world.handle(g), std::max<int64_t>(bytes, int64_t(1) << 20));
  takeBackCore();
  // Null for a group of one member: its collectives have nothing to do.
  if (w)
    windowOrder.push_back(g.id);
  return windows.emplace(g.id, std::move(w)).first->second.get();
}

template <class T>
void ShmComm::sum(T *data, int64_t n, Group g, const Arrived &arrived) {
  if (NodeAllReduce *w = window(g, n * int64_t(sizeof(T))))
    w->sum(data, n, world.activeTurns(), collectiveId(g), arrived);
  else if (arrived)
    arrived(0);
}

void ShmComm::allReduceSum(float *data, int64_t n, Group g,
                           const Arrived &arrived) {
  sum(data, n, g, arrived);
}

void ShmComm::allReduceSum(double *data, int64_t n, Group g,
                           const Arrived &arrived) {
  sum(data, n, g, arrived);
}

void ShmComm::allReduceMax(int64_t *data, int64_t n, Group g) {
  if (NodeAllReduce *w = window(g, n * 8))
    w->max(data, n, world.activeTurns(), collectiveId(g));
}

void ShmComm::broadcast(void *data, int64_t bytes, int root, Group g) {
  if (NodeAllReduce *w = window(g, bytes))
    w->broadcast(data, bytes, root, world.activeTurns(), collectiveId(g));
}

// Sequence parallelism's collectives through the group's window: the
// all-gather as one broadcast per member (each chunk written once, read by
// all), the reduce-scatter as the window's sum (members combined in member
// order, so every rank's chunk is the sum tp_all_reduce would give) of
// which each keeps its chunk.
void ShmComm::allGather(const float *mine, float *all, int64_t n, Group g) {
  NodeAllReduce *w = window(g, n * int64_t(sizeof(float)));
  int members = w ? w->memberCount() : 1, me = w ? w->memberIndex() : 0;
  std::copy(mine, mine + n, all + int64_t(me) * n);
  for (int k = 0; w && k < members; ++k)
    w->broadcast(all + int64_t(k) * n, n * int64_t(sizeof(float)), k,
                 world.activeTurns(), collectiveId(g));
}

void ShmComm::reduceScatterSum(const float *all, float *mine, int64_t n,
                               Group g) {
  NodeAllReduce *w = window(g, n * int64_t(sizeof(float)));
  int members = w ? w->memberCount() : 1, me = w ? w->memberIndex() : 0;
  std::vector<float> sum(all, all + n * members);
  if (w)
    w->sum(sum.data(), n * members, world.activeTurns(), collectiveId(g),
           nullptr);
  std::copy(sum.begin() + int64_t(me) * n, sum.begin() + int64_t(me + 1) * n,
            mine);
}

void ShmComm::barrier(Group g) {
  if (NodeAllReduce *w = window(g, 0))
    w->barrier(world.activeTurns(), collectiveId(g));
}

std::vector<int64_t> ShmComm::gather(int64_t value) {
  return world.gather(value);
}

std::vector<std::string> ShmComm::gatherBytes(const std::string &mine) {
  return world.gatherBytes(mine);
}

bool ShmComm::startCoreTurns(bool wanted, int cores) {
  return world.startCoreTurns(wanted, cores);
}
void ShmComm::stopCoreTurns() { world.stopCoreTurns(); }
void ShmComm::giveUpCore() { world.giveUpCore(); }
void ShmComm::takeBackCore() { world.takeBackCore(); }

void ShmComm::abort(int code) { world.abort(code); }

} // namespace frenzy::rt
