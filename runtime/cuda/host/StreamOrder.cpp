//===- StreamOrder.cpp - the CUDA streams and events of a rank ------------===//
#include "StreamOrder.h"

#include <algorithm>
#include <map>

using namespace frenzy;
using namespace frenzy::rt::cuda;
using plan::Action;

namespace {

std::string streamName(const Action &a) {
  switch (a.kind()) {
  case Action::SEND:
    return "send:" + std::to_string(a.peer());
  case Action::RECV:
    return "recv:" + std::to_string(a.peer());
  case Action::REDUCE_GRADS:
    return "reduce";
  case Action::SYNC_PARAMS:
    return "tied";
  default:
    return "compute";
  }
}

} // namespace

StreamOrder frenzy::rt::cuda::orderStreams(
    const plan::Rank &rank, const std::function<bool(int32_t)> &shared) {
  StreamOrder o;
  o.streams.push_back("compute");
  std::map<std::string, int> streamIds{{"compute", 0}};
  int latestCompute = -1;
  std::map<int64_t, int> latestComputeOf;     // by micro-batch
  std::map<int64_t, std::vector<int>> recvsOf; // not yet waited for, by mb
  std::vector<int> sharedSends, reduces;       // not yet waited for

  for (int i = 0; i < rank.stream_size(); ++i) {
    const Action &a = rank.stream(i);
    OrderedAction oa;
    oa.action = i;
    std::string name = streamName(a);
    auto [it, fresh] = streamIds.emplace(name, int(o.streams.size()));
    if (fresh)
      o.streams.push_back(name);
    oa.stream = it->second;
    int64_t mb = a.micro_batch();
    switch (a.kind()) {
    case Action::FORWARD:
    case Action::BACKWARD:
    case Action::UPDATE: {
      auto &r = recvsOf[mb];
      oa.waits.insert(oa.waits.end(), r.begin(), r.end());
      r.clear();
      // A forward writes only per-micro-batch activations.
      if (a.kind() != Action::FORWARD) {
        oa.waits.insert(oa.waits.end(), sharedSends.begin(),
                        sharedSends.end());
        sharedSends.clear();
      }
      if (a.kind() == Action::UPDATE) {
        oa.waits.insert(oa.waits.end(), reduces.begin(), reduces.end());
        reduces.clear();
      }
      latestCompute = i;
      latestComputeOf[mb] = i;
      break;
    }
    case Action::SEND: {
      auto p = latestComputeOf.find(mb);
      int producer = p != latestComputeOf.end() ? p->second : latestCompute;
      if (producer >= 0)
        oa.waits.push_back(producer);
      if (shared(a.tensor()))
        sharedSends.push_back(i);
      else
        oa.releaseAfter = true;
      break;
    }
    case Action::RECV:
      if (shared(a.tensor()) && latestCompute >= 0)
        oa.waits.push_back(latestCompute);
      recvsOf[mb].push_back(i);
      break;
    case Action::REDUCE_GRADS:
      if (latestCompute >= 0)
        oa.waits.push_back(latestCompute);
      reduces.push_back(i);
      break;
    case Action::SYNC_PARAMS:
      if (latestCompute >= 0)
        oa.waits.push_back(latestCompute);
      break;
    default:
      break;
    }
    o.actions.push_back(std::move(oa));
  }
  // Drop waits on the same stream (stream order covers them), sort, and
  // mark the actions some other stream waits for.
  for (OrderedAction &oa : o.actions) {
    auto &w = oa.waits;
    w.erase(std::remove_if(w.begin(), w.end(),
                           [&](int j) {
                             return o.actions[j].stream == oa.stream;
                           }),
            w.end());
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
    for (int j : w)
      o.actions[j].recordsEvent = true;
  }
  // A SEND whose buffer is freed after it needs its event too.
  for (OrderedAction &oa : o.actions)
    if (oa.releaseAfter)
      oa.recordsEvent = true;
  return o;
}

std::string StreamOrder::describe(const plan::Rank &rank) const {
  static const char *kinds[] = {"F", "B", ">", "<", "R", "U", "Y"};
  std::string s;
  for (const OrderedAction &oa : actions) {
    const Action &a = rank.stream(oa.action);
    if (!s.empty())
      s += " | ";
    s += std::to_string(oa.action) + ":";
    int k = int(a.kind());
    s += k >= 0 && k < 7 ? kinds[k] : "?";
    if (a.kind() == Action::SEND || a.kind() == Action::RECV)
      s += std::to_string(a.tensor());
    if (a.kind() <= Action::RECV)
      s += "@" + std::to_string(a.micro_batch());
    s += "[" + streams[oa.stream] + "]";
    if (!oa.waits.empty()) {
      s += " waits";
      for (int j : oa.waits)
        s += " " + std::to_string(j);
    }
    if (oa.releaseAfter)
      s += " free-after";
  }
  return s;
}
