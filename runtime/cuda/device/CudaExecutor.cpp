//===- CudaExecutor.cpp - run a program's instructions on one GPU ---------===//
#include "CudaExecutor.h"

#include "CudaCheck.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

bool isUpdate(OpId op) {
  return op == OpId::AdamwUpdate || op == OpId::SgdUpdate;
}

// GradScaler's defaults.
constexpr float kInitialScale = 65536.0f, kGrowth = 2.0f, kBackoff = 0.5f;
constexpr int kGrowthInterval = 2000;

} // namespace

CudaExecutor::CudaExecutor(const plan::Plan &plan, Executor &host,
                           DeviceContext &ctx, std::vector<int32_t> order,
                           std::set<int32_t> freeLate)
    : plan(plan), host(host), ctx(ctx), prog(host.program()),
      order(std::move(order)) {
  if (this->order.empty())
    for (int i = 0; i < prog.instrs_size(); ++i)
      this->order.push_back(i);
  // Refuses, naming the instruction, any op the CUDA backend lacks; every
  // other op has an adapter (Ops.def builds both from one list).
  pp = planPrecision(prog, plan.precision());
  fp16Scaling = pp.lossScaling;
  int n = prog.instrs_size();
  for (int i = 0; i < n; ++i) {
    const plan::Instr &in = prog.instrs(i);
    OpId op = *opId(in.op());
    opIds.push_back(op);
    ops.push_back(cudaOps()[op]);
    if (isUpdate(op) || op == OpId::ClipGradNorm) {
      if (firstUpdate < 0)
        firstUpdate = i;
      if (isUpdate(op) && in.inputs_size() > 1)
        updateGrads.push_back(in.inputs(1));
    }
    for (int32_t id : in.outputs())
      if (id == host.lossTensorId())
        lossInstr = i;
  }
  planLifetimes(freeLate);
  for (size_t id = 0; id < dev.size(); ++id)
    if (persistent[id] && !host.tensor(int32_t(id)).storage.empty()) {
      allocate(int32_t(id));
      upload(int32_t(id));
    }
  badIndices = static_cast<int64_t *>(allocate(-1));
  if (fp16Scaling) {
    scaleDev = reinterpret_cast<float *>(ctx.allocator().allocate(
        8, 0, "the loss scale"));
    goodSteps = reinterpret_cast<int *>(ctx.allocator().allocate(
        8, 0, "the loss scale's counters"));
    foundInf = goodSteps + 1;
    scaleHost = kInitialScale;
    FRENZY_CUDA_CHECK(cudaMemcpy(scaleDev, &scaleHost, 4,
                                 cudaMemcpyHostToDevice),
                      ctx.who());
    FRENZY_CUDA_CHECK(cudaMemset(goodSteps, 0, 8), ctx.who());
  }
}

CudaExecutor::~CudaExecutor() {
  (void)cudaStreamSynchronize(ctx.compute());
}

void CudaExecutor::planLifetimes(const std::set<int32_t> &freeLate) {
  size_t n = size_t(prog.tensors_size());
  dev.assign(n, {});
  persistent.assign(n, false);
  for (const plan::Tensor &t : prog.tensors())
    persistent[size_t(t.id())] = t.kind() != plan::ACTIVATION;
  for (const plan::Io &io : prog.outputs())
    persistent[size_t(io.tensor())] = true;
  // The last use among this rank's instructions, in its run order.
  std::vector<int> last(n, -1);
  for (int pos = 0; pos < int(order.size()); ++pos) {
    const plan::Instr &in = prog.instrs(order[size_t(pos)]);
    for (int32_t id : in.outputs())
      last[size_t(id)] = std::max(last[size_t(id)], pos);
    for (int32_t id : in.inputs())
      last[size_t(id)] = pos;
  }
  freeAfter.assign(size_t(prog.instrs_size()), {});
  for (size_t id = 0; id < n; ++id)
    if (!persistent[id] && last[id] >= 0 && !freeLate.count(int32_t(id)))
      freeAfter[size_t(order[size_t(last[id])])].push_back(int32_t(id));
}

void *CudaExecutor::allocate(int32_t id) {
  if (id < 0) { // the bad-index slots
    int64_t bytes = std::max(1, prog.instrs_size()) * 8;
    return reinterpret_cast<void *>(
        ctx.allocator().allocate(bytes, 0, "the index checks"));
  }
  DevTensor &d = dev[id];
  if (d.ptr)
    return d.ptr;
  const Tensor &t = host.tensor(id);
  int eb = t.dtype == plan::F32 ? k::floatBytes(storage(id))
                                : elementBytes(t.dtype);
  d.bytes = t.numel() * eb;
  d.ptr = reinterpret_cast<void *>(ctx.allocator().allocate(
      d.bytes, 0,
      "tensor " + std::to_string(id) + " '" + printable(t.name) + "' " +
          t.describe()));
  return d.ptr;
}

void CudaExecutor::release(int32_t id) {
  DevTensor &d = dev[id];
  if (!d.ptr || persistent[id])
    return;
  ctx.allocator().free(reinterpret_cast<uint64_t>(d.ptr));
  d.ptr = nullptr;
}

void CudaExecutor::upload(int32_t id) {
  Tensor &t = host.tensor(id);
  if (t.storage.empty() || !t.numel())
    return;
  // Persistent tensors are f32 on the device (forced), so bytes match.
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(dev[id].ptr, t.data(), size_t(t.bytes()),
                                    cudaMemcpyHostToDevice, ctx.compute()),
                    ctx.who());
}

void CudaExecutor::download(int32_t id) {
  Tensor &t = host.tensor(id);
  if (t.storage.empty() || !t.numel() || !dev[id].ptr)
    return;
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(t.data(), dev[id].ptr, size_t(t.bytes()),
                                    cudaMemcpyDeviceToHost, ctx.compute()),
                    ctx.who());
}

void CudaExecutor::uploadInputs() {
  for (const plan::Io &io : prog.inputs())
    upload(io.tensor());
}

void CudaExecutor::downloadParameters() {
  for (const plan::ParamSource &p : prog.params())
    download(p.tensor());
  ctx.synchronize(ctx.compute(), cudaTimeoutSeconds(), "copying the parameters back");
}

void CudaExecutor::downloadMoments() {
  cudaStream_t s = ctx.compute();
  for (auto &[name, bufs] : momentBufs) {
    ParamState &st = host.optimizerState()[name];
    size_t n = size_t(momentCount[name]);
    for (size_t k = 0; k < bufs.size() && k < 2; ++k) {
      std::vector<float> &h = k == 0 ? st.m : st.v;
      h.resize(n);
      if (bufs[k])
        FRENZY_CUDA_CHECK(cudaMemcpyAsync(h.data(), bufs[k], n * 4,
                                          cudaMemcpyDeviceToHost, s),
                          ctx.who());
    }
  }
  ctx.synchronize(s, cudaTimeoutSeconds(), "copying the optimizer moments back");
}

void CudaExecutor::uploadMoments() {
  // A resumed run's moments (empty for a fresh one: the first update
  // allocates them zeroed).
  for (auto &[name, st] : host.optimizerState()) {
    const std::vector<float> *hs[2] = {&st.m, &st.v};
    for (int k = 0; k < 2; ++k) {
      if (hs[k]->empty())
        continue;
      auto &bufs = momentBufs[name];
      if (bufs.size() <= size_t(k))
        bufs.resize(size_t(k) + 1, nullptr);
      int64_t n = int64_t(hs[k]->size());
      momentCount[name] = n;
      if (!bufs[k])
        bufs[k] = reinterpret_cast<void *>(ctx.allocator().allocate(
            n * 4, 0, "the optimizer moments of '" + name + "'"));
      FRENZY_CUDA_CHECK(cudaMemcpyAsync(bufs[k], hs[k]->data(), size_t(n) * 4,
                                        cudaMemcpyHostToDevice, ctx.compute()),
                        ctx.who());
    }
  }
  ctx.synchronize(ctx.compute(), cudaTimeoutSeconds(),
                  "copying the optimizer moments to the device");
}

void *CudaExecutor::detach(int32_t id) {
  void *p = dev[size_t(id)].ptr;
  dev[size_t(id)].ptr = nullptr;
  return p;
}

void CudaExecutor::restore(int32_t id, void *storage) {
  release(id); // (unallocated by contract; bytes stay from detach)
  dev[size_t(id)].ptr = storage;
}

void CudaExecutor::runInstr(int pos) {
  const plan::Instr &in = prog.instrs(pos);
  CudaOp op = ops[size_t(pos)];
  k::FloatType t = k::FloatType(int(pp.opType[size_t(pos)]));
  CachingAllocator &alloc = ctx.allocator();
  cudaStream_t s = ctx.compute();
  std::vector<uint64_t> temps;
  auto scratch = [&](size_t bytes, const char *what) {
    uint64_t p = alloc.allocate(int64_t(std::max<size_t>(bytes, 1)), 0,
                                std::string(what) + " of instruction " +
                                    std::to_string(pos) + " (" + in.op() + ")");
    temps.push_back(p);
    return reinterpret_cast<void *>(p);
  };
  KernelArgs args{in, {}, {}, host.context()};
  DevOp d{args, {}, {}, t, s, &ctx.blas(), badIndices + pos, {}, {}};
  d.workspace = [&](size_t bytes) { return scratch(bytes, "the workspace"); };
  d.allReduce = [this](float *p, int64_t n) {
    if (tpAllReduce)
      tpAllReduce(p, n);
  };
  d.allGather = tpAllGather;
  d.reduceScatter = tpReduceScatter;
  d.moments = [this](const std::string &name, int which, int64_t count) {
    auto &bufs = momentBufs[name];
    if (bufs.size() <= size_t(which))
      bufs.resize(size_t(which) + 1, nullptr);
    if (!bufs[which]) {
      momentCount[name] = count;
      bufs[which] = reinterpret_cast<void *>(ctx.allocator().allocate(
          count * 4, 0, "the optimizer moments of '" + name + "'"));
      FRENZY_CUDA_CHECK(cudaMemsetAsync(bufs[which], 0, size_t(count) * 4,
                                        ctx.compute()),
                        ctx.who());
    }
    return static_cast<float *>(bufs[which]);
  };
  for (int j = 0; j < in.inputs_size(); ++j) {
    int32_t id = in.inputs(j);
    Tensor &ht = host.tensor(id);
    args.in.push_back(&ht);
    void *p = dev[id].ptr;
    if (!p && ht.numel() > 0)
      throw RuntimeError("plan: instruction " + std::to_string(pos) + " (" +
                         in.op() + ") reads tensor " + std::to_string(id) +
                         " before it is written; re-run frenzy-opt");
    if (ht.dtype == plan::F32) {
      k::FloatType want = need(pos, j, false);
      if (want != storage(id)) {
        void *c = scratch(size_t(ht.numel()) * k::floatBytes(want), "a cast");
        d.check(k::castFloat(s, c, want, p, storage(id), ht.numel()));
        p = c;
      }
      if (fp16Scaling && opIds[size_t(pos)] == OpId::CrossEntropyGrad &&
          j == 0) {
        // The loss gradient times the loss scale: every gradient after it
        // is scaled, and unscaled before the update.
        void *c = scratch(4, "the scaled loss gradient");
        FRENZY_CUDA_CHECK(
            cudaMemcpyAsync(c, p, 4, cudaMemcpyDeviceToDevice, s), ctx.who());
        d.check(k::scaleBy(s, static_cast<float *>(c), 1, scaleDev));
        p = c;
      }
    }
    d.in.push_back(p);
  }
  std::vector<std::pair<int32_t, void *>> castBack;
  bool empty = in.outputs_size() > 0;
  for (int j = 0; j < in.outputs_size(); ++j) {
    int32_t id = in.outputs(j);
    Tensor &ht = host.tensor(id);
    args.out.push_back(&ht);
    empty &= ht.numel() == 0;
    void *p = allocate(id);
    if (ht.dtype == plan::F32) {
      k::FloatType want = need(pos, j, true);
      if (want != storage(id)) {
        void *c = scratch(size_t(ht.numel()) * k::floatBytes(want), "a cast");
        castBack.push_back({id, c});
        p = c;
      }
    }
    d.out.push_back(p);
  }
  bool skip = skipped && isUpdate(opIds[size_t(pos)]);
  if (!empty && !skip)
    op(d);
  for (auto [id, c] : castBack) {
    int j = 0;
    while (in.outputs(j) != id)
      ++j;
    d.check(k::castFloat(s, dev[id].ptr, storage(id), c, need(pos, j, true),
                         host.tensor(id).numel()));
  }
  for (uint64_t p : temps)
    alloc.free(p); // same stream: reusable by the next kernel in order
  for (int32_t id : freeAfter[pos])
    release(id);
}

void CudaExecutor::unscaleGradients() {
  std::vector<float *> grads;
  std::vector<int64_t> sizes;
  for (int32_t id : updateGrads) {
    grads.push_back(static_cast<float *>(dev[id].ptr));
    sizes.push_back(host.tensor(id).numel());
  }
  cudaStream_t s = ctx.compute();
  FRENZY_CUDA_CHECK(cudaMemsetAsync(foundInf, 0, 4, s), ctx.who());
  auto check = [&](const k::Status &st) {
    if (!st.ok())
      throw RuntimeError(ctx.who() + ": loss scaling: " + st.message());
  };
  check(k::unscaleAndCheck(s, grads.data(), sizes.data(), int(grads.size()),
                           scaleDev, foundInf));
  check(k::updateLossScale(s, scaleDev, goodSteps, foundInf, kGrowth,
                           kBackoff, kGrowthInterval));
  int inf = 0;
  FRENZY_CUDA_CHECK(cudaMemcpyAsync(&inf, foundInf, 4, cudaMemcpyDeviceToHost,
                                    s),
                    ctx.who());
  ctx.synchronize(s, cudaTimeoutSeconds(), "the gradient overflow check");
  skipped = inf != 0;
  FRENZY_CUDA_CHECK(cudaMemcpy(&scaleHost, scaleDev, 4,
                               cudaMemcpyDeviceToHost),
                    ctx.who());
}

void CudaExecutor::unscaleOnce() {
  if (fp16Scaling && !unscaled)
    unscaleGradients();
  unscaled = true;
}

void CudaExecutor::checkBadIndices() {
  std::vector<int64_t> bad(size_t(std::max(1, prog.instrs_size())));
  FRENZY_CUDA_CHECK(cudaMemcpy(bad.data(), badIndices, bad.size() * 8,
                               cudaMemcpyDeviceToHost),
                    ctx.who());
  for (size_t i = 0; i < size_t(prog.instrs_size()); ++i)
    if (bad[i] >= 0) {
      const plan::Instr &in = prog.instrs(int(i));
      throw RuntimeError("instruction " + std::to_string(i) + " (" + in.op() +
                         ", node '" + printable(in.node()) +
                         "'): the index or label at position " +
                         std::to_string(bad[i]) +
                         " is outside its range (a token id beyond the "
                         "vocabulary?)");
    }
}

float CudaExecutor::checkedLoss(int64_t step) {
  int32_t id = host.lossTensorId();
  download(id);
  ctx.synchronize(ctx.compute(), cudaTimeoutSeconds(),
                  "the loss of step " + std::to_string(step));
  checkBadIndices();
  float loss = host.tensor(id).f32()[0];
  // The CPU backend's rule: a non-finite loss stops before the update.
  if (!std::isfinite(loss))
    throw RuntimeError("step " + std::to_string(step) + ": the loss is " +
                       std::to_string(loss) +
                       "; stopped before the update, parameters keep their "
                       "values from step " + std::to_string(step - 1));
  return loss;
}

void CudaExecutor::beginStep(int64_t step, uint64_t seed) {
  host.beginStep(step, seed);
  ctx.allocator().beginStep();
  skipped = false;
  unscaled = false;
  FRENZY_CUDA_CHECK(cudaMemsetAsync(badIndices, 0xff,
                                    size_t(std::max(1, prog.instrs_size())) * 8,
                                    ctx.compute()),
                    ctx.who());
}

void CudaExecutor::run(const std::vector<int32_t> &instrs) {
  for (int32_t i : instrs) {
    if (i == firstUpdate)
      unscaleOnce();
    runInstr(i);
    // The CPU backend's rule on every path: a non-finite loss stops the
    // step before any update runs.
    if (i == lossInstr)
      checkedLoss(host.context().step);
  }
}

void CudaExecutor::finishStep(int64_t step) {
  for (const plan::Io &io : prog.outputs())
    download(io.tensor());
  ctx.synchronize(cudaTimeoutSeconds(), "step " + std::to_string(step));
  checkBadIndices();
}

void *CudaExecutor::deviceTensor(int32_t id) { return allocate(id); }

int64_t CudaExecutor::deviceBytes(int32_t id) {
  allocate(id);
  return dev[size_t(id)].bytes;
}

void CudaExecutor::switchMicroBatch(int64_t mb) {
  if (mb == currentMicroBatch)
    return;
  std::vector<void *> &put = stashed[currentMicroBatch];
  put.assign(dev.size(), nullptr);
  for (size_t id = 0; id < dev.size(); ++id)
    if (!persistent[id]) {
      put[id] = dev[id].ptr;
      dev[id].ptr = nullptr;
    }
  auto it = stashed.find(mb);
  if (it != stashed.end()) {
    for (size_t id = 0; id < dev.size(); ++id)
      if (!persistent[id])
        dev[id].ptr = it->second[id];
    stashed.erase(it);
  }
  currentMicroBatch = mb;
}

void CudaExecutor::runStep(int64_t step, uint64_t seed) {
  beginStep(step, seed);
  for (int32_t pos : order) {
    if (pos == firstUpdate)
      unscaleOnce();
    runInstr(pos);
    if (pos == lossInstr)
      checkedLoss(step);
  }
  finishStep(step);
}
