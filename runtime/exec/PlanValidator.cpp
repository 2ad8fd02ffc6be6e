//===- PlanValidator.cpp - a plan checked before it runs ------------------===//
//
// Checks run in dependency order: tensors first (everything after indexes
// them), then instructions and parameters, then ranks, stages and groups,
// then the streams' sends and receives. A section stops at its first
// broken index so later checks never index out of range themselves.
//
//===----------------------------------------------------------------------===//
#include "PlanValidator.h"

#include "KernelContracts.h"
#include "StreamCheck.h"
#include "plan/PlanPrograms.h"
#include "plan/PlanVersion.h"

#include <cmath>
#include <set>

namespace frenzy::rt {
namespace {

struct Found {
  std::vector<std::string> lines;
  size_t limit;
  bool full() const { return lines.size() >= limit; }
  void add(const std::string &where, const std::string &what) {
    if (!full())
      lines.push_back(where + ": " + what);
  }
};

std::string progName(int k) { return "program " + std::to_string(k); }

/// Tensor sizes: dims >= 0, rank bounded, bytes bounded (no overflow).
bool checkTensors(const plan::Program &prog, const std::string &where,
                  Found &f) {
  size_t before = f.lines.size();
  for (int i = 0; i < prog.tensors_size(); ++i) {
    const plan::Tensor &t = prog.tensors(i);
    std::string w = where + " tensor " + std::to_string(i);
    if (t.id() != i)
      f.add(w, "has id " + std::to_string(t.id()));
    if (!plan::DType_IsValid(t.dtype()))
      f.add(w, "has unknown dtype " + std::to_string(int(t.dtype())));
    if (!plan::TensorKind_IsValid(t.kind()))
      f.add(w, "has unknown kind " + std::to_string(int(t.kind())));
    if (t.shape_size() > kMaxRank)
      f.add(w, "has " + std::to_string(t.shape_size()) + " dims (at most " +
                   std::to_string(kMaxRank) + ")");
    int64_t bytes = 8; // the widest element: bounds every dtype's size
    for (int64_t d : t.shape()) {
      if (d < 0) {
        f.add(w, "has a negative dim");
        break;
      }
      if (d && bytes > kMaxTensorBytes / d) {
        f.add(w, "is larger than " + std::to_string(kMaxTensorBytes) +
                     " bytes");
        break;
      }
      bytes *= d;
    }
    if (t.kind() == plan::CONSTANT && f.lines.size() == before) {
      int64_t eb = elementBytes(t.dtype()), n = bytes / 8;
      int64_t want = t.splat() ? eb : n * eb;
      if (int64_t(t.data().size()) != want)
        f.add(w, "holds " + std::to_string(t.data().size()) +
                     " bytes of constant data for " + describeShape(t));
    }
  }
  return f.lines.size() == before;
}

void checkInstrs(const plan::Program &prog, const std::string &where,
                 Found &f) {
  const ContractTable &contracts = kernelContracts();
  int n = prog.tensors_size();
  for (int i = 0; i < prog.instrs_size() && !f.full(); ++i) {
    const plan::Instr &in = prog.instrs(i);
    std::string w = where + " instruction " + std::to_string(i) + " (" +
                    in.op() + ")";
    std::optional<OpId> op = opId(in.op());
    if (!op) {
      f.add(w, "this runtime has no such kernel");
      continue;
    }
    ContractCheck check{in, {}, {}};
    bool ok = true;
    for (auto [ids, list] : {std::make_pair(&in.inputs(), &check.in),
                             std::make_pair(&in.outputs(), &check.out)})
      for (int32_t id : *ids) {
        if (id < 0 || id >= n) {
          f.add(w, "names tensor " + std::to_string(id) + " of " +
                       std::to_string(n));
          ok = false;
          break;
        }
        list->push_back(&prog.tensors(id));
      }
    if (!ok)
      continue;
    try {
      contracts[*op](check);
    } catch (const ContractViolation &e) {
      f.add(w, e.what());
    }
  }
}

void checkParamsAndIo(const plan::Program &prog, const std::string &where,
                      Found &f) {
  int n = prog.tensors_size();
  for (int i = 0; i < prog.params_size(); ++i) {
    const plan::ParamSource &p = prog.params(i);
    std::string w = where + " parameter " + std::to_string(i) + " '" +
                    p.name() + "'";
    if (p.tensor() < 0 || p.tensor() >= n) {
      f.add(w, "names tensor " + std::to_string(p.tensor()));
      continue;
    }
    const plan::Tensor &t = prog.tensors(p.tensor());
    if (t.kind() != plan::PARAM)
      f.add(w, "names tensor " + std::to_string(p.tensor()) +
                   ", which is not a parameter");
    if (p.storage() != "inline" && p.storage() != "constant" &&
        p.storage() != "external")
      f.add(w, "has unknown storage '" + p.storage() + "'");
    if (p.offset() < 0 || p.length() < 0)
      f.add(w, "has a negative offset or length");
    if (p.shard_size() == 0)
      continue;
    // [dim, parts, blocks]: the full value's dim is parts times the local
    // one, cut in `blocks` equal blocks (Executor.h copyShard).
    int64_t numel = 1;
    for (int64_t d : t.shape())
      numel *= d;
    if (p.shard_size() != 3 || p.shard(0) < 0 ||
        p.shard(0) >= t.shape_size() || p.shard(1) < 1 || p.shard(2) < 1 ||
        p.shard(1) > 4096 || t.shape(p.shard(0)) % p.shard(2) != 0 ||
        numel * 8 > kMaxTensorBytes / p.shard(1))
      f.add(w, "has a malformed shard (dim, parts, blocks) for " +
                   describeShape(t));
  }
  for (auto *ios : {&prog.inputs(), &prog.outputs()})
    for (const plan::Io &io : *ios) {
      std::string w = where + (ios == &prog.inputs() ? " input '" :
                                                       " output '") +
                      io.name() + "'";
      if (io.tensor() < 0 || io.tensor() >= n) {
        f.add(w, "names tensor " + std::to_string(io.tensor()));
        continue;
      }
      const plan::Tensor &t = prog.tensors(io.tensor());
      if (io.name() == "loss") {
        int64_t numel = 1;
        for (int64_t d : t.shape())
          numel *= d;
        if (t.dtype() != plan::F32 || numel < 1)
          f.add(w, "must be an f32 tensor, is " + describeShape(t));
      }
    }
}

/// Activations read before anything writes them (run order = program
/// order) would be read unallocated; one-rank plans run that order.
void checkDataflow(const plan::Program &prog, const std::string &where,
                   Found &f) {
  std::vector<bool> written(prog.tensors_size(), false);
  for (int i = 0; i < prog.instrs_size() && !f.full(); ++i) {
    const plan::Instr &in = prog.instrs(i);
    for (int32_t id : in.inputs())
      if (prog.tensors(id).kind() == plan::ACTIVATION && !written[id]) {
        f.add(where + " instruction " + std::to_string(i) + " (" + in.op() +
                  ")",
              "reads tensor " + std::to_string(id) +
                  " before any instruction writes it");
        break;
      }
    for (int32_t id : in.outputs())
      written[id] = true;
  }
}

void checkOptimizer(const plan::Plan &p, Found &f) {
  const plan::Optimizer &o = p.optimizer();
  const std::string w = "optimizer";
  if (o.kind() != "" && o.kind() != "adamw" && o.kind() != "sgd")
    f.add(w, "unknown kind '" + o.kind() + "'");
  for (double v : {o.lr(), o.min_lr(), o.clip_norm(), o.momentum(), o.eps()})
    if (!std::isfinite(v) || v < 0) {
      f.add(w, "a learning rate, clip norm, momentum or eps is negative or "
               "not finite");
      break;
    }
  if (o.kind() == "adamw" && !(o.beta1() >= 0 && o.beta1() < 1 &&
                               o.beta2() >= 0 && o.beta2() < 1 && o.eps() > 0))
    f.add(w, "adamw needs betas in [0, 1) and eps > 0");
  if (o.warmup_steps() < 0 || o.total_steps() < 0)
    f.add(w, "negative warmup or total steps");
}

} // namespace

std::vector<std::string> planViolations(const plan::Plan &p, size_t limit) {
  Found f{{}, limit};
  if (p.version() != plan::kPlanVersion)
    f.add("plan", "format version " + std::to_string(p.version()) +
                      " is not this runtime's (" +
                      std::to_string(plan::kPlanVersion) + ")");
  if (p.batch() < 0 || p.seq() < 0 || p.micro_batch() < 0 ||
      p.global_batch() < 0 || p.total_micro_batches() < 0)
    f.add("plan", "a negative batch, sequence or micro-batch size");
  checkOptimizer(p, f);
  std::vector<bool> programOk(p.more_programs_size() + 1, false);
  for (int k = 0; k <= p.more_programs_size() && !f.full(); ++k) {
    const plan::Program &prog = *plan::programAt(p, k);
    std::string w = progName(k);
    if (prog.tp_degree() < 0 || prog.tp_degree() > 4096)
      f.add(w, "has TP degree " + std::to_string(prog.tp_degree()));
    if (!checkTensors(prog, w, f))
      continue;
    size_t before = f.lines.size();
    checkInstrs(prog, w, f);
    checkParamsAndIo(prog, w, f);
    if (f.lines.size() == before && p.ranks_size() <= 1)
      checkDataflow(prog, w, f);
    programOk[k] = f.lines.size() == before;
  }
  if (p.ranks_size() > 0 && std::all_of(programOk.begin(), programOk.end(),
                                        [](bool b) { return b; }))
    for (std::string &line : streamViolations(p))
      if (!f.full())
        f.lines.push_back(std::move(line));
  return std::move(f.lines);
}

void validatePlan(const plan::Plan &p, const std::string &file) {
  std::vector<std::string> v = planViolations(p);
  if (v.empty())
    return;
  std::string more = v.size() > 1 ? " (and " + std::to_string(v.size() - 1) +
                                        (v.size() >= 100 ? "+" : "") +
                                        " more problems)"
                                  : "";
  throw RuntimeError(file + ": invalid plan: " + v[0] + more +
                     "; re-run frenzy-opt");
}

} // namespace frenzy::rt
