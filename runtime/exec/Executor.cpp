//===- Executor.cpp - run one rank's program step by step -----------------===//
#include "Executor.h"

#include "OnnxWeights.h"
#include "SeededInit.h"
#include "plan/PlanPrograms.h"
#include "plan/PlanVersion.h"
#include "plan/TraceFormat.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace frenzy::rt {

static const plan::Program &checkedProgram(const plan::Plan &p,
                                           int32_t index) {
  const plan::Program *prog = plan::programAt(p, index);
  if (!prog)
    throw RuntimeError("plan: program " + std::to_string(index) + " of " +
                       std::to_string(p.more_programs_size() + 1) +
                       " does not exist; re-run frenzy-opt");
  return *prog;
}

/// The tensors allocated up front must fit in the machine's memory: zeroing
/// more than it has would end in the kernel's out-of-memory kill, not an
/// error line. (Sizes are validated, so the sum cannot overflow.)
static void checkFitsInMemory(const plan::Program &prog,
                              const std::vector<bool> &used) {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return;
  int64_t have = int64_t(pages) * pageSize, need = 0;
  // Each tensor is at most 2^40 bytes: stopping once past `have` keeps the
  // sum far from overflow.
  for (int32_t i = 0; i < prog.tensors_size() && need <= have; ++i) {
    const plan::Tensor &pt = prog.tensors(i);
    if (!used[i] || pt.kind() == plan::ACTIVATION)
      continue;
    int64_t b = elementBytes(pt.dtype());
    for (int64_t d : pt.shape())
      b *= d;
    need += b;
  }
  if (need > have)
    throw RuntimeError("plan: its parameters, inputs and constants need " +
                       std::to_string(need) + " bytes; this machine has " +
                       std::to_string(int64_t(pages) * pageSize) +
                       " bytes of memory");
}

Executor::Executor(const plan::Plan &p, std::vector<int32_t> instrs,
                   std::set<int32_t> freeLate, int32_t program)
    : plan(p), prog(checkedProgram(p, program)), order(std::move(instrs)) {
  if (plan.version() != plan::kPlanVersion)
    throw RuntimeError("plan format version " + std::to_string(plan.version()) +
                       " is not the runtime's (" +
                       std::to_string(plan::kPlanVersion) +
                       "); re-run frenzy-opt to rebuild the plan");
  if (!plan.precision().empty() && plan.precision() != "fp32")
    throw RuntimeError("the plan's precision is " + plan.precision() +
                       "; the CPU backend runs fp32 plans only (re-plan with "
                       "frenzy-opt --precision=fp32)");
  int32_t n = prog.tensors_size();
  // The whole program holds every tensor (an input may be read by no
  // instruction, an output may be an input); a rank holds the tensors its
  // instructions touch.
  bool whole = order.empty();
  if (whole)
    for (int32_t i = 0; i < prog.instrs_size(); ++i)
      order.push_back(i);
  std::vector<bool> used(n, whole);
  for (int32_t i : order) {
    if (i < 0 || i >= prog.instrs_size())
      throw RuntimeError("plan: instruction index " + std::to_string(i) +
                         " out of range");
    for (auto *ids : {&prog.instrs(i).inputs(), &prog.instrs(i).outputs()})
      for (int32_t id : *ids)
        if (id >= 0 && id < n)
          used[id] = true;
  }
  checkFitsInMemory(prog, used);
  tensors.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    const plan::Tensor &pt = prog.tensors(i);
    Tensor &t = tensors[i];
    t.dtype = pt.dtype();
    t.shape.assign(pt.shape().begin(), pt.shape().end());
    t.name = pt.name();
    for (int64_t d : t.shape)
      if (d < 0)
        throw RuntimeError("plan: tensor " + std::to_string(i) +
                           " has a negative dim");
    if (!used[i])
      continue;
    if (pt.kind() != plan::ACTIVATION)
      t.allocate();
    if (pt.kind() == plan::CONSTANT) {
      int64_t eb = elementBytes(t.dtype);
      const std::string &data = pt.data();
      if (pt.splat() ? int64_t(data.size()) != eb
                     : int64_t(data.size()) != t.bytes())
        throw RuntimeError("plan: constant tensor " + std::to_string(i) +
                           " has " + std::to_string(data.size()) +
                           " bytes of data for " + t.describe());
      if (pt.splat())
        for (int64_t e = 0; e < t.numel(); ++e)
          std::memcpy(t.u8() + e * eb, data.data(), eb);
      else
        std::memcpy(t.data(), data.data(), data.size());
    }
  }
  const KernelTable &table = kernelTable();
  kernels.assign(prog.instrs_size(), nullptr);
  opClass.assign(prog.instrs_size(), 0);
  for (int32_t i : order) {
    const plan::Instr &in = prog.instrs(i);
    std::optional<OpId> op = opId(in.op());
    if (!op)
      throw RuntimeError("plan needs kernel '" + in.op() +
                         "' (node '" + in.node() +
                         "'), which this runtime does not have");
    kernels[i] = table[*op];
    opClass[i] = uint8_t(plan::opClassOf(in.op()));
    for (int32_t id : in.inputs())
      if (id < 0 || id >= n)
        throw RuntimeError("plan: instruction '" + in.op() +
                           "' reads tensor " + std::to_string(id) +
                           " of " + std::to_string(n));
    for (int32_t id : in.outputs())
      if (id < 0 || id >= n)
        throw RuntimeError("plan: instruction '" + in.op() +
                           "' writes tensor " + std::to_string(id) +
                           " of " + std::to_string(n));
  }
  for (const plan::Io &io : prog.outputs())
    if (io.name() == "loss")
      lossTensor = io.tensor();
  planLifetimes(freeLate);
  const char *poison = std::getenv("FRENZY_POISON_REUSED");
  poisonReused = poison && *poison && std::string(poison) != "0";
  ctx.optimizer = &plan.optimizer();
  ctx.state = &state;
}

/// Which tensors live for the whole run and after which instruction each
/// activation dies (its last reader, or its producer when nothing reads it).
void Executor::planLifetimes(const std::set<int32_t> &freeLate) {
  persistent.assign(tensors.size(), false);
  for (const plan::Tensor &t : prog.tensors())
    persistent[t.id()] = t.kind() != plan::ACTIVATION;
  for (const plan::Io &io : prog.outputs())
    persistent[io.tensor()] = true;
  // Position in run order of each tensor's last use (reader, else writer).
  std::vector<int> last(tensors.size(), -1);
  std::vector<bool> seen(tensors.size(), false);
  for (int pos = 0; pos < int(order.size()); ++pos) {
    const plan::Instr &in = prog.instrs(order[pos]);
    for (int32_t id : in.outputs())
      last[id] = std::max(last[id], pos);
    for (int32_t id : in.inputs())
      last[id] = pos;
    for (auto *ids : {&in.inputs(), &in.outputs()})
      for (int32_t id : *ids)
        if (!persistent[id] && !seen[id]) {
          seen[id] = true;
          activations.push_back(id);
        }
  }
  freeAfter.assign(prog.instrs_size(), {});
  for (size_t id = 0; id < tensors.size(); ++id)
    if (!persistent[id] && last[id] >= 0 && !freeLate.count(int32_t(id)))
      freeAfter[order[last[id]]].push_back(int32_t(id));
  for (size_t id = 0; id < tensors.size(); ++id)
    if (persistent[id] && prog.tensors(id).kind() == plan::ACTIVATION &&
        last[id] >= 0)
      tensors[id].allocate();
}

void Executor::allocate(int32_t id) {
  if (persistent[id] || !tensors[id].storage.empty())
    return;
  obtain(tensors[id]);
  activationPeak = std::max(activationPeak, live);
}

void Executor::release(int32_t id) {
  if (persistent[id] || tensors[id].storage.empty())
    return;
  recycle(tensors[id]);
}

void Executor::detach(int32_t id, std::vector<uint64_t> &out) {
  out.clear();
  out.swap(tensors[id].storage);
}

void Executor::restore(int32_t id, std::vector<uint64_t> &in) {
  if (in.empty())
    return;
  if (!tensors[id].storage.empty())
    recycle(tensors[id]);
  tensors[id].storage.swap(in);
  in.clear();
}

void Executor::obtain(Tensor &t) {
  size_t words = size_t(t.bytes() + 7) / 8;
  auto it = spare.find(words);
  if (it == spare.end() || it->second.empty()) {
    t.allocate();
  } else {
    t.storage.swap(it->second.back());
    it->second.pop_back();
    if (poisonReused) // all ones: NaN as float, -1 as int, true as bool
      std::fill(t.storage.begin(), t.storage.end(), ~uint64_t(0));
  }
  live += t.bytes();
}

void Executor::recycle(Tensor &t) {
  live -= t.bytes();
  std::vector<std::vector<uint64_t>> &slot = spare[t.storage.size()];
  slot.emplace_back();
  slot.back().swap(t.storage);
}

void Executor::switchMicroBatch(int64_t mb) {
  if (mb == currentMicroBatch)
    return;
  std::vector<std::vector<uint64_t>> &out = stashed[currentMicroBatch];
  out.resize(activations.size());
  for (size_t k = 0; k < activations.size(); ++k)
    out[k].swap(tensors[activations[k]].storage);
  auto it = stashed.find(mb);
  if (it != stashed.end()) {
    for (size_t k = 0; k < activations.size(); ++k)
      it->second[k].swap(tensors[activations[k]].storage);
    stashed.erase(it);
  }
  currentMicroBatch = mb;
}

void Executor::loadWeights(std::optional<uint64_t> initSeed) {
  uint64_t hash = 0;
  if (!plan::hashFile(plan.model_path(), hash))
    throw RuntimeError(plan.model_path() +
                       ": cannot read the model this plan was made for");
  if (hash != plan.model_hash())
    throw RuntimeError(plan.model_path() +
                       ": the model file changed since the plan was made "
                       "(hash mismatch); re-run frenzy-opt");
  OnnxWeights weights(plan.model_path());
  for (const plan::ParamSource &p : prog.params()) {
    Tensor &dst = tensors[p.tensor()];
    if (dst.storage.empty()) // not held by this rank
      continue;
    if (p.shard_size() == 0) {
      if (initSeed && seededInitApplies(p, dst))
        seededInit(p, dst, *initSeed);
      else
        weights.load(p, dst);
      continue;
    }
    Tensor full = unsharded(p, dst);
    full.allocate();
    if (initSeed && seededInitApplies(p, full))
      seededInit(p, full, *initSeed);
    else
      weights.load(p, full);
    copyShard(p, full, dst, ctx.tpRank);
  }
}

Tensor unsharded(const plan::ParamSource &p, const Tensor &local) {
  if (p.shard_size() != 3 || p.shard(0) < 0 ||
      p.shard(0) >= int64_t(local.shape.size()) || p.shard(1) < 1 ||
      p.shard(2) < 1)
    throw RuntimeError("plan: parameter '" + p.name() +
                       "' has a malformed shard (expected dim, parts, blocks)");
  Tensor full;
  full.dtype = local.dtype;
  full.shape = local.shape;
  full.shape[p.shard(0)] *= p.shard(1);
  full.name = local.name;
  return full;
}

SliceCopy sliceCopy(const std::vector<int64_t> &fullShape, int elemBytes,
                    int64_t dim, int64_t blocks, int64_t index,
                    int64_t count) {
  int64_t outer = 1, inner = elemBytes;
  for (int64_t d = 0; d < dim; ++d)
    outer *= fullShape[d];
  for (size_t d = dim + 1; d < fullShape.size(); ++d)
    inner *= fullShape[d];
  if (fullShape[dim] % (blocks * count))
    throw RuntimeError("plan: dim " + std::to_string(dim) + " of size " +
                       std::to_string(fullShape[dim]) + " does not split in " +
                       std::to_string(blocks) + " blocks of " +
                       std::to_string(count) + " slices");
  int64_t n = fullShape[dim] / (blocks * count); // rows of one slice's block
  // Row r = (o, b) of the part is block b of outer index o: n * inner bytes,
  // at slice `index` of that block's `count` slices in the full tensor.
  SliceCopy c;
  c.rows = size_t(outer * blocks);
  c.width = size_t(n * inner);
  c.fullPitch = c.width * size_t(count);
  c.fullOffset = size_t(index) * c.width;
  return c;
}

void copySlice(const std::vector<int64_t> &fullShape, int elemBytes,
               int64_t dim, int64_t blocks, int64_t index, int64_t count,
               uint8_t *full, uint8_t *part, bool intoFull) {
  SliceCopy c = sliceCopy(fullShape, elemBytes, dim, blocks, index, count);
  for (size_t r = 0; r < c.rows; ++r) {
    uint8_t *l = part + r * c.width;
    uint8_t *f = full + c.fullOffset + r * c.fullPitch;
    if (intoFull)
      std::memcpy(f, l, c.width);
    else
      std::memcpy(l, f, c.width);
  }
}

void copyShard(const plan::ParamSource &p, Tensor &full, Tensor &local,
               int64_t tpRank, bool intoFull) {
  copySlice(full.shape, elementBytes(local.dtype), p.shard(0), p.shard(2),
            tpRank, p.shard(1), full.u8(), local.u8(), intoFull);
}

Tensor *Executor::input(const std::string &name) {
  for (const plan::Io &io : prog.inputs())
    if (io.name() == name)
      return &tensors[io.tensor()];
  return nullptr;
}

Tensor *Executor::parameter(const std::string &name) {
  for (const plan::ParamSource &p : prog.params())
    if (p.name() == name)
      return &tensors[p.tensor()];
  return nullptr;
}

const Tensor *Executor::output(const std::string &name) const {
  for (const plan::Io &io : prog.outputs())
    if (io.name() == name)
      return &tensors[io.tensor()];
  return nullptr;
}

double Executor::learningRate(int64_t step) const {
  const plan::Optimizer &o = plan.optimizer();
  double lr = o.lr();
  if (o.warmup_steps() > 0 && step <= o.warmup_steps())
    return lr * double(step) / double(o.warmup_steps());
  if (o.total_steps() <= o.warmup_steps())
    return lr;
  double progress = double(step - o.warmup_steps()) /
                    double(o.total_steps() - o.warmup_steps());
  progress = std::min(1.0, std::max(0.0, progress));
  return o.min_lr() + 0.5 * (lr - o.min_lr()) * (1.0 + std::cos(M_PI * progress));
}

void Executor::beginStep(int64_t step, uint64_t seed) {
  ctx.step = step;
  ctx.runSeed = seed;
  ctx.lr = learningRate(step);
}

void Executor::runStep(int64_t step, uint64_t seed) {
  beginStep(step, seed);
  run(order);
}

void Executor::run(const std::vector<int32_t> &instrs) {
  int64_t step = ctx.step;
  for (int32_t i : instrs) {
    const plan::Instr &in = prog.instrs(i);
    if (!kernels[i])
      throw RuntimeError("instruction " + std::to_string(i) +
                         " is not among this rank's instructions");
    KernelArgs args{in, {}, {}, ctx};
    for (int32_t id : in.inputs()) {
      // A stream the validator could not order (a receive that never came)
      // must not hand a kernel an unallocated operand.
      if (tensors[id].storage.empty() && tensors[id].numel() > 0)
        throw RuntimeError("plan: instruction " + std::to_string(i) + " (" +
                           in.op() + ") reads tensor " + std::to_string(id) +
                           " before it is written; re-run frenzy-opt");
      args.in.push_back(&tensors[id]);
    }
    bool producesLoss = false;
    for (int32_t id : in.outputs()) {
      args.out.push_back(&tensors[id]);
      producesLoss |= id == lossTensor;
      if (!persistent[id] && tensors[id].storage.empty())
        obtain(tensors[id]);
    }
    // Empty results (a zero-size dim) need no work, and some kernels would
    // divide by their size.
    bool empty = !args.out.empty() &&
                 std::all_of(args.out.begin(), args.out.end(),
                             [](Tensor *t) { return t->numel() == 0; });
    ctx.workspaceBytes = 0;
    if (!empty) {
      bool timed = profiling || classTimes;
      auto t0 = timed ? std::chrono::steady_clock::now()
                      : std::chrono::steady_clock::time_point();
      kernels[i](args);
      if (timed) {
        double sec = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
        if (classTimes)
          classTimes[opClass[i]] += sec;
        if (profiling) {
          auto &slot = kernelTime[in.op()];
          slot.first += sec;
          ++slot.second;
        }
      }
    }
    activationPeak = std::max(activationPeak, live + ctx.workspaceBytes);
    for (int32_t id : freeAfter[i])
      recycle(tensors[id]);
    if (ctx.betweenKernels)
      ctx.betweenKernels();
    if (producesLoss && !std::isfinite(tensors[lossTensor].f32()[0]))
      throw RuntimeError("step " + std::to_string(step) + ": the loss is " +
                         std::to_string(tensors[lossTensor].f32()[0]) +
                         "; stopped before the update, parameters keep their "
                         "values from step " + std::to_string(step - 1));
  }
}

int64_t Executor::persistentBytes() const {
  int64_t n = 0;
  for (size_t id = 0; id < tensors.size(); ++id)
    if (persistent[id] && !tensors[id].storage.empty())
      n += tensors[id].bytes();
  for (const auto &[name, st] : state)
    n += int64_t(st.m.size() + st.v.size()) * 4;
  return n;
}

int64_t Executor::parameterCount() const {
  int64_t n = 0;
  for (const plan::ParamSource &p : prog.params())
    if (p.trainable())
      n += tensors[p.tensor()].numel();
  return n;
}

} // namespace frenzy::rt
