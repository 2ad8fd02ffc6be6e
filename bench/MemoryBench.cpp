//===- MemoryBench.cpp - predicted memory across layouts, query speed -----===//
//
// frenzy-memory-bench MODEL.onnx --seq=T --global-batch=G [--precision=P]
//     [--loss=cross-entropy]
// Builds the training step (import, fusion, autodiff, AdamW), prints the
// predicted per-rank peak of a fixed list of layouts (the table in
// docs/memory.md), then times MemoryModel queries. Not a test.
//
//===----------------------------------------------------------------------===//
#include "BenchModel.h"
#include "frenzy/InitAll.h"
#include "frenzy/Planning/ResourcePrediction.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

using namespace mlir;
using namespace frenzy;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: frenzy-memory-bench MODEL.onnx --seq=T "
                         "--global-batch=G [--precision=P] "
                         "[--loss=cross-entropy]\n");
    return 1;
  }
  bench::BenchArgs args = bench::parseBenchArgs(argc, argv, 8);
  int64_t seq = args.seq, global = args.globalBatch;
  const std::string &precision = args.precision, &loss = args.loss;
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext ctx(registry);
  auto t0 = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> m =
      bench::buildTrainingModule(argv[1], seq, loss, precision, &ctx);
  if (!m)
    return 1;
  auto model = MemoryModel::build(*m, std::nullopt);
  if (failed(model))
    return 1;
  double buildSec = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
  std::printf("%s: %lld layers, seq %lld, global batch %lld, %s, AdamW "
              "(import + autodiff + model build %.2f s)\n",
              argv[1], (long long)model->numLayers(), (long long)seq,
              (long long)global, precision.c_str(), buildSec);

  struct Row {
    int64_t tp, pp, dp, mb;
    int zero;
    Recompute r;
  };
  using R = Recompute;
  const Row rows[] = {
      {1, 1, 1, 1, 0, R::None},      {1, 1, 1, 1, 0, R::Selective},
      {1, 1, 1, 1, 0, R::Full},      {1, 1, 8, 1, 0, R::Selective},
      {1, 1, 8, 1, 1, R::Selective}, {1, 1, 8, 1, 2, R::Selective},
      {1, 1, 8, 1, 3, R::Selective}, {8, 1, 1, 1, 0, R::Selective},
      {1, 8, 1, 1, 0, R::Selective}, {2, 4, 1, 1, 0, R::Selective},
      {2, 2, 2, 1, 1, R::Selective}, {4, 2, 1, 2, 0, R::Full},
  };
  MemoryOverheads o; // 512 MiB context, 256 MiB per communicator, 5%
  std::printf("| TP | PP | DP | micro-batch | ZeRO | recompute | state GiB | "
              "activations GiB | per-rank peak GiB |\n|---|---|---|---|---|---|"
              "---|---|---|\n");
  for (const Row &row : rows) {
    if (global % row.dp || (global / row.dp) % row.mb)
      continue;
    Layout l;
    l.tp = row.tp;
    l.pp = row.pp;
    l.dp = row.dp;
    l.microBatch = row.mb;
    l.microBatches = global / row.dp / row.mb;
    l.zero = row.zero;
    l.recompute = row.r;
    l.sequenceParallel = row.tp > 1;
    evaluateLayout(*model, o, l);
    // Components of stage 0 (the fullest under 1F1B in these layouts).
    StageQuery q;
    q.firstLayer = 0;
    q.lastLayer = model->numLayers() / row.pp - 1;
    q.embed = true;
    q.head = row.pp == 1;
    q.microBatch = row.mb;
    q.tp = row.tp;
    q.sequenceParallel = row.tp > 1;
    q.dp = row.dp;
    q.zeroStage = row.zero;
    q.recompute = row.r;
    q.inFlight = std::min(row.pp, l.microBatches);
    StageMemory sm = model->query(q, o);
    auto gib = [](int64_t b) { return double(b) / double(1ll << 30); };
    std::printf("| %lld%s | %lld | %lld | %lld | %d | %s | %.1f | %.1f | %.1f |\n",
                (long long)row.tp, row.tp > 1 ? "+SP" : "", (long long)row.pp,
                (long long)row.dp, (long long)row.mb, row.zero,
                recomputeName(row.r).str().c_str(), gib(sm.state),
                gib(sm.activations + sm.transient), gib(l.peakBytes));
  }

  // Query speed: random stages of random layouts.
  std::mt19937 rng(7);
  const int n = 200000;
  std::vector<StageQuery> qs(n);
  for (StageQuery &q : qs) {
    int64_t L = std::max<int64_t>(1, model->numLayers());
    q.firstLayer = rng() % L;
    q.lastLayer = q.firstLayer + rng() % (L - q.firstLayer);
    q.tp = 1 << (rng() % 4);
    q.dp = 1 + rng() % 64;
    q.zeroStage = rng() % 4;
    q.microBatch = 1 + rng() % 8;
    q.recompute = Recompute(rng() % 3);
    q.inFlight = 1 + rng() % 8;
  }
  int64_t sink = 0;
  auto t1 = std::chrono::steady_clock::now();
  for (const StageQuery &q : qs)
    sink += model->query(q, o).total();
  double sec = std::chrono::duration<double>(
                   std::chrono::steady_clock::now() - t1)
                   .count();
  std::printf("\nquery speed: %d stage queries in %.3f s, %.2f us per query "
              "(checksum %lld)\n",
              n, sec, 1e6 * sec / n, (long long)(sink % 1000));
  return 0;
}
