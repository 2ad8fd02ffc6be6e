//===- TraceFormat.h - timelines as Chrome-trace JSON -----------*- C++ -*-===//
//
// The one format for both timelines of a plan: the one frenzy-launch
// measures (--trace) and the one frenzy-opt predicts (--emit=trace). Both
// name slices with sliceName() and classify kernels with opClassOf(), so
// the two files open side by side in Perfetto (ui.perfetto.dev) or
// chrome://tracing and bench/trace_compare.py can match them slice by
// slice. One process (pid) per rank; thread 0 computes, thread 1
// communicates. Header-only: the compiler and the runtime share it.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PROTO_PLAN_TRACEFORMAT_H
#define FRENZY_PROTO_PLAN_TRACEFORMAT_H

#include "plan.pb.h"

#include <cstdio>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace frenzy::plan {

/// Threads of a rank's process in the trace.
enum TraceThread { kComputeThread = 0, kCommThread = 1 };

/// What the comparison reports separately. Communication inside a kernel
/// (the TP all-reduce) counts as communication.
enum OpClass { kMatmul, kAttention, kElementwise, kCommunication, kOptimizer,
               kNumOpClasses };

inline const char *opClassName(int c) {
  static const char *names[] = {"matmul", "attention", "elementwise",
                                "communication", "optimizer"};
  return c >= 0 && c < kNumOpClasses ? names[c] : "other";
}

/// The class of a plan kernel (Instr.op).
inline OpClass opClassOf(const std::string &op) {
  if (op == "matmul" || op == "gemm")
    return kMatmul;
  if (op == "attention" || op == "attention_grad")
    return kAttention;
  if (op == "adamw_update" || op == "sgd_update" || op == "clip_grad_norm")
    return kOptimizer;
  if (op == "tp_all_reduce" || op == "sp_all_gather" || op == "sp_gather" ||
      op == "sp_reduce_scatter")
    return kCommunication;
  return kElementwise;
}

/// The name of an action's slice, the same in both timelines.
inline std::string sliceName(const Action &a) {
  std::string mb = std::to_string(a.micro_batch());
  switch (a.kind()) {
  case Action::FORWARD:
    return "forward mb " + mb;
  case Action::BACKWARD:
    return "backward mb " + mb;
  case Action::SEND:
    return "send mb " + mb + " t" + std::to_string(a.tensor()) + " to " +
           std::to_string(a.peer());
  case Action::RECV:
    return "recv mb " + mb + " t" + std::to_string(a.tensor()) + " from " +
           std::to_string(a.peer());
  case Action::REDUCE_GRADS:
    return "dp all-reduce";
  case Action::UPDATE:
    return "optimizer";
  case Action::SYNC_PARAMS:
    return "sync tied params";
  case Action::SIDE_TASK:
    return "side task " + std::to_string(a.side_task().task());
  default:
    return "action";
  }
}

/// A one-rank step as phases named as a pipeline stage's actions are:
/// runs of the program's instructions, "forward mb 0" until the first
/// backward instruction, "backward mb 0" after, "optimizer" for updates.
struct Phase {
  std::string name;
  const char *cat;
  std::vector<int32_t> instrs;
};

inline std::vector<Phase> oneRankPhases(const Program &prog) {
  std::vector<Phase> phases;
  bool backward = false;
  for (int32_t i = 0; i < prog.instrs_size(); ++i) {
    const Instr &in = prog.instrs(i);
    backward |= in.backward();
    bool update = opClassOf(in.op()) == kOptimizer;
    std::string name = update     ? "optimizer"
                       : backward ? "backward mb 0"
                                  : "forward mb 0";
    if (phases.empty() || phases.back().name != name)
      phases.push_back({name, update ? "optimizer" : "compute", {}});
    phases.back().instrs.push_back(i);
  }
  return phases;
}

/// One complete slice ("ph":"X"). Times in microseconds from the step's
/// (or run's) start; args are numbers (per-class microseconds, bytes).
struct TraceEvent {
  int pid = 0, tid = kComputeThread;
  std::string name, cat;
  double startUs = 0, durUs = 0;
  std::vector<std::pair<std::string, double>> args;
};

inline void writeJsonString(std::ostream &os, const std::string &s) {
  os << '"';
  for (char c : s) {
    if (c == '"' || c == '\\')
      os << '\\' << c;
    else if (static_cast<unsigned char>(c) < 0x20)
      os << ' ';
    else
      os << c;
  }
  os << '"';
}

/// One event as a JSON object (no separator).
inline void writeTraceEvent(std::ostream &os, const TraceEvent &e) {
  char num[64];
  os << "{\"ph\":\"X\",\"pid\":" << e.pid << ",\"tid\":" << e.tid
     << ",\"name\":";
  writeJsonString(os, e.name);
  os << ",\"cat\":";
  writeJsonString(os, e.cat);
  std::snprintf(num, sizeof(num), ",\"ts\":%.3f,\"dur\":%.3f", e.startUs,
                e.durUs);
  os << num;
  if (!e.args.empty()) {
    os << ",\"args\":{";
    for (size_t i = 0; i < e.args.size(); ++i) {
      std::snprintf(num, sizeof(num), "%.3f", e.args[i].second);
      os << (i ? "," : "");
      writeJsonString(os, e.args[i].first);
      os << ':' << num;
    }
    os << '}';
  }
  os << '}';
}

/// Names of a rank's process and threads (metadata events).
inline void writeRankNames(std::ostream &os, int pid, const std::string &name) {
  os << "{\"ph\":\"M\",\"pid\":" << pid
     << ",\"name\":\"process_name\",\"args\":{\"name\":";
  writeJsonString(os, name);
  os << "}},\n{\"ph\":\"M\",\"pid\":" << pid
     << ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" << pid
     << "}}";
  for (int t : {kComputeThread, kCommThread})
    os << ",\n{\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << t
       << ",\"name\":\"thread_name\",\"args\":{\"name\":\""
       << (t == kComputeThread ? "compute" : "communication") << "\"}}";
}

/// "rank 3 (pipeline 1, stage 0, tp 0, cpu)" for a plan rank.
inline std::string rankLabel(const Plan &p, int r) {
  if (r < 0 || r >= p.ranks_size())
    return "rank " + std::to_string(r);
  const Rank &k = p.ranks(r);
  return "rank " + std::to_string(r) + " (pipeline " +
         std::to_string(k.pipeline()) + ", stage " + std::to_string(k.stage()) +
         ", tp " + std::to_string(k.tp_rank()) + ", " + k.gpu_type() + ")";
}

/// The file's head: "kind" is "measured" or "predicted"; `ranks` the
/// plan's rank count (the comparison checks every rank is present).
inline void writeTraceHead(std::ostream &os, const std::string &kind,
                           int ranks, int steps) {
  os << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"frenzy_trace\":";
  writeJsonString(os, kind);
  os << ",\"ranks\":" << ranks << ",\"steps\":" << steps
     << "},\"traceEvents\":[\n";
}

inline void writeTraceTail(std::ostream &os) { os << "\n]}\n"; }

} // namespace frenzy::plan

#endif
