//===- Checkpoint.cpp - checkpoints any plan can resume -------------------===//
#include "Checkpoint.h"
#include "TokenData.h"
#include "plan/PlanPrograms.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace frenzy::rt {

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string hex16(uint64_t h) {
  char s[20];
  std::snprintf(s, sizeof s, "%016" PRIx64, h);
  return s;
}

std::string number(double d) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", d);
  return s;
}

/// FRENZY_TEST_CHECKPOINT_CRASH=STEP:RANK:PIECES (tests only): rank RANK
/// kills itself while writing step STEP's checkpoint, after PIECES of its
/// pieces (all of them, before its file is renamed, when it has fewer;
/// PIECES -1: rank 0 once the manifest is written, before the rename).
/// Once per checkpoint directory (a marker file records it), so a run
/// resumed with the variable still set, as a supervisor's next generation
/// is, writes that checkpoint.
struct CrashHook {
  int64_t step = -1, rank = -1, pieces = -2;
  CrashHook() {
    if (const char *e = std::getenv("FRENZY_TEST_CHECKPOINT_CRASH"))
      if (std::sscanf(e, "%" SCNd64 ":%" SCNd64 ":%" SCNd64, &step, &rank,
                      &pieces) != 3)
        step = -1;
  }
  /// `last`: the rank has written all its pieces.
  void at(const std::string &dir, int64_t s, int r, int64_t written,
          bool last = false) const {
    if (s == step && r == rank &&
        (written == pieces || (last && pieces >= 0 && written < pieces))) {
      std::string marker = dir + "/.frenzy-test-crash-" + std::to_string(s) +
                           "-" + std::to_string(r);
      if (::access(marker.c_str(), F_OK) == 0)
        return;
      std::FILE *f = std::fopen(marker.c_str(), "w");
      if (f)
        std::fclose(f);
      std::fprintf(stderr, "frenzy-launch: rank %d: test hook: killed while "
                   "writing the checkpoint of step %" PRId64 "\n", r, s);
      std::fflush(stderr);
      ::raise(SIGKILL);
    }
  }
};

const CrashHook &crashHook() {
  static const CrashHook hook;
  return hook;
}

/// The settings a checkpoint must share with the plan resuming it (an
/// error naming every difference) and those that may change (warnings).
void checkCompatible(const Manifest &m, const plan::Plan &p, int64_t batch,
                     uint64_t seed, const std::string &where,
                     std::vector<std::string> &warnings) {
  std::vector<std::string> diff;
  if (m.modelHash != p.model_hash())
    diff.push_back("model differs (checkpoint " + hex16(m.modelHash) + " of '" +
                   m.modelPath + "', this plan " + hex16(p.model_hash()) +
                   " of '" + p.model_path() + "')");
  if (m.seq != p.seq())
    diff.push_back("sequence length differs (checkpoint " + std::to_string(m.seq) +
                   ", this plan " + std::to_string(p.seq()) + ")");
  const plan::Optimizer &a = m.optimizer, &b = p.optimizer();
  auto kind = [](const std::string &k) { return k.empty() ? "none" : k; };
  if (a.kind() != b.kind())
    diff.push_back("optimizer differs (checkpoint " + kind(a.kind()) +
                   ", this plan " + kind(b.kind()) + ")");
  else if (a.beta1() != b.beta1() || a.beta2() != b.beta2() ||
           a.eps() != b.eps() || a.momentum() != b.momentum())
    diff.push_back("optimizer settings differ (checkpoint beta1 " +
                   number(a.beta1()) + " beta2 " + number(a.beta2()) +
                   " eps " + number(a.eps()) + " momentum " +
                   number(a.momentum()) + ", this plan " + number(b.beta1()) +
                   " " + number(b.beta2()) + " " + number(b.eps()) + " " +
                   number(b.momentum()) + ")");
  // Checkpoints are the same bytes from either backend (f32 master weights
  // and moments), but a precision policy (and fp16's loss scale, which is
  // not saved) belongs to the run: a CUDA bf16 run is not resumed as a CPU
  // fp32 one without saying so.
  if (m.precision != p.precision())
    diff.push_back("precision policy differs (checkpoint " + m.precision +
                   ", this plan " + p.precision() + ")");
  if (!diff.empty()) {
    std::string line = where + ": this plan cannot resume the checkpoint: ";
    for (size_t i = 0; i < diff.size(); ++i)
      line += (i ? "; " : "") + diff[i];
    throw RuntimeError(line + "; resume with a plan of the same model, "
                       "sequence length and optimizer");
  }
  if (m.globalBatch != batch)
    warnings.push_back(where + ": the global batch changes from " +
                       std::to_string(m.globalBatch) + " to " +
                       std::to_string(batch) +
                       "; the step count, learning-rate schedule and data "
                       "position continue");
  if (a.lr() != b.lr() || a.min_lr() != b.min_lr() ||
      a.warmup_steps() != b.warmup_steps() ||
      a.total_steps() != b.total_steps() || a.clip_norm() != b.clip_norm())
    warnings.push_back(where + ": the learning-rate schedule or clipping "
                       "differs from the checkpoint's; this plan's applies "
                       "from the next step");
  if (m.seed != seed)
    warnings.push_back(where + ": the run seed changes from " +
                       std::to_string(m.seed) + " to " + std::to_string(seed) +
                       " (dropout draws differ from the original run)");
}

/// The newest complete checkpoint of `dir`, with a warning naming newer
/// half-written ones; an error when there is none.
std::string newestComplete(const std::string &dir,
                           std::vector<std::string> *warnings) {
  CheckpointScan scan = scanCheckpoints(dir);
  std::string half;
  for (const std::string &h : scan.halfWritten)
    half += (half.empty() ? "" : ", ") + h;
  if (scan.step == 0) {
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0)
      throw RuntimeError(dir + ": no such checkpoint directory");
    if (!S_ISDIR(st.st_mode))
      throw RuntimeError(dir + ": not a directory (--resume takes the "
                         "checkpoint directory, DIR of --checkpoint-dir=DIR)");
    // A checkpoint of the format before manifests (one plan's rank files).
    for (const std::string &h : scan.halfWritten) {
      char magic[8] = {0};
      std::FILE *f = std::fopen((h + "/rank-0.bin").c_str(), "rb");
      bool old = f && std::fread(magic, 1, 8, f) == 8 &&
                 std::memcmp(magic, "FRZCKPT1", 8) == 0;
      if (f)
        std::fclose(f);
      if (old)
        throw RuntimeError(h + ": a checkpoint of the format before "
                           "manifests (FRZCKPT1, readable only by the older "
                           "frenzy-launch and plan that wrote it); nothing to "
                           "resume from here");
    }
    throw RuntimeError(dir + ": no complete checkpoint to resume from" +
                       (half.empty() ? std::string()
                                     : " (" + half + " half-written: never "
                                       "completed)"));
  }
  if (!half.empty() && warnings)
    warnings->push_back(half + ": half-written checkpoint (never completed), "
                        "ignored; resuming from step " +
                        std::to_string(scan.step));
  return scan.path;
}

} // namespace

std::string planSummary(const plan::Plan &p) {
  std::ostringstream s;
  if (p.stages_size() == 0) {
    s << "1 rank, one program, batch " << p.batch();
    return s.str();
  }
  int pipelines = 0;
  for (const plan::StageProgram &sp : p.stages())
    pipelines = std::max(pipelines, sp.pipeline() + 1);
  s << p.ranks_size() << " ranks, " << pipelines << " pipelines (";
  for (int q = 0; q < pipelines; ++q) {
    int stages = 0, tp = 1;
    int64_t mbs = 0;
    for (const plan::StageProgram &sp : p.stages())
      if (sp.pipeline() == q) {
        ++stages;
        tp = std::max(tp, sp.ranks_size());
        mbs = sp.micro_batches();
      }
    s << (q ? " / " : "") << stages << " stages x TP " << tp << " @" << mbs;
  }
  s << "), micro-batch " << p.micro_batch() << ", global batch "
    << p.global_batch();
  if (!p.cluster_path().empty())
    s << ", cluster " << p.cluster_path();
  return s.str();
}

Checkpointer::Checkpointer(CheckpointOptions opts) : o(std::move(opts)) {
  if (!o.plan)
    throw RuntimeError("checkpoints: no plan given (internal error)");
  if (!o.resumeDir.empty()) {
    std::string path = newestComplete(o.resumeDir, &warnings);
    from = std::make_unique<StoredCheckpoint>(path);
    checkCompatible(from->manifest(), *o.plan, globalBatch(), o.seed, path,
                    warnings);
  }
  if (o.dir.empty())
    return;
  // Refused before training, not at the first checkpoint after hours of it.
  struct stat st;
  if (::stat(o.dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      throw RuntimeError(o.dir + ": --checkpoint-dir is not a directory; "
                         "choose another (nothing was written)");
    if (::access(o.dir.c_str(), W_OK | X_OK) != 0)
      throw RuntimeError(o.dir + ": --checkpoint-dir is not writable: " +
                         std::strerror(errno));
  } else {
    std::string d = o.dir;
    while (d.size() > 1 && d.back() == '/')
      d.pop_back();
    size_t slash = d.find_last_of('/');
    std::string parent = slash == std::string::npos ? "."
                         : slash == 0               ? "/"
                                                    : d.substr(0, slash);
    if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        ::access(parent.c_str(), W_OK | X_OK) != 0)
      throw RuntimeError(o.dir + ": cannot create --checkpoint-dir: " +
                         parent + " is not a writable directory (create it "
                         "or choose another)");
  }
  CheckpointScan scan = scanCheckpoints(o.dir);
  if (scan.step == 0)
    return; // a new directory, or one without a complete checkpoint
  Manifest theirs = readManifest(scan.path + "/manifest");
  if (theirs.modelHash != o.plan->model_hash())
    throw RuntimeError(o.dir + " holds checkpoints of another model (" +
                       hex16(theirs.modelHash) + " of '" + theirs.modelPath +
                       "', this plan's " + hex16(o.plan->model_hash()) +
                       "); choose another --checkpoint-dir (nothing was "
                       "written)");
}

Checkpointer::~Checkpointer() = default;

int64_t Checkpointer::globalBatch() const {
  return o.plan->global_batch() > 0 ? o.plan->global_batch()
                                    : o.plan->batch();
}

int64_t Checkpointer::resume(Executor &ex) {
  if (!from)
    return 1;
  if (o.print)
    for (const std::string &w : warnings)
      std::fprintf(stderr, "frenzy-launch: warning: %s\n", w.c_str());
  double t0 = now();
  int64_t tpRank = ex.context().tpRank, bytes = 0;
  // A rank that cannot read its part reports it to rank 0 instead of
  // ending the job itself: the job ends with rank 0's one line, not with
  // one line per rank that read the same damaged piece.
  std::string error;
  try {
    for (const plan::ParamSource &p : ex.program().params()) {
      Tensor &t = ex.tensor(p.tensor());
      if (!p.trainable() || t.storage.empty())
        continue;
      if (t.dtype != plan::F32)
        throw RuntimeError("checkpoints: parameter '" + p.name() + "' is " +
                           t.describe() + "; only f32 parameters are stored");
      Slice s;
      std::vector<int64_t> shape = t.shape;
      if (p.shard_size() > 0) {
        shape = unsharded(p, t).shape;
        s = {int32_t(p.shard(0)), int32_t(p.shard(1)), int32_t(p.shard(2)),
             int32_t(tpRank)};
      }
      std::vector<float> value;
      ParamState &st = ex.optimizerState()[p.name()];
      bytes += from->load(p.name(), shape, s, value, st.m, st.v);
      if (int64_t(value.size()) != t.numel())
        throw RuntimeError(from->path() + ": parameter '" + p.name() +
                           "' does not cut into this plan's shard");
      std::memcpy(t.f32(), value.data(), size_t(t.numel()) * 4);
    }
  } catch (const RuntimeError &e) {
    error = e.what();
  }
  std::vector<std::string> all = o.gather(
      number(now() - t0) + " " + std::to_string(bytes) + "\n" + error);
  for (const std::string &s : all)
    if (size_t nl = s.find('\n'); nl + 1 < s.size())
      throw RuntimeError(s.substr(nl + 1));
  o.barrier(); // ranks with an error wait here for rank 0 to end the job
  if (!error.empty())
    throw RuntimeError(error);
  const Manifest &m = from->manifest();
  // The slowest rank's read time is the checkpoint's.
  if (o.print && !all.empty()) {
    double worst = 0, total = 0;
    for (const std::string &s : all) {
      double sec = 0, b = 0;
      std::sscanf(s.c_str(), "%lf %lf", &sec, &b);
      worst = std::max(worst, sec), total += b;
    }
    std::printf("checkpoint: step %" PRId64 " read from %s (%.2f MiB, %.4f s; "
                "written by %s)\n",
                m.step, from->path().c_str(), total / (1 << 20), worst,
                m.planSummary.c_str());
    std::fflush(stdout);
  }
  baseStep = m.step;
  baseWindows = m.dataWindows;
  lastWritten = m.step;
  return m.step + 1;
}

void Checkpointer::continueData(TokenData &data) const {
  if (from)
    data.continueFrom(baseStep, baseWindows);
}

/// The pipeline that writes each parameter. Every pipeline holds the whole
/// model, so the DP replicas share the writing: the largest parameters
/// first, each goes to the pipeline whose stage updating it has written
/// the fewest bytes per rank so far. Every rank computes the same from the
/// plan. Without an optimizer (nothing updates) pipeline 0 writes all.
static std::map<std::string, int> writerPipelines(const plan::Plan &p) {
  // The stage (index into Plan.stages) updating each parameter, by pipeline.
  std::map<std::string, std::map<int, int>> holder;
  for (int s = 0; s < p.stages_size(); ++s) {
    const plan::StageProgram &sp = p.stages(s);
    const plan::Program *prog = plan::programAt(p, sp.program());
    if (!prog)
      continue;
    std::map<int32_t, const plan::ParamSource *> byTensor;
    for (const plan::ParamSource &ps : prog->params())
      byTensor[ps.tensor()] = &ps;
    for (int32_t i : sp.update_instrs()) {
      if (i < 0 || i >= prog->instrs_size())
        continue;
      const plan::Instr &in = prog->instrs(i);
      if ((in.op() == "adamw_update" || in.op() == "sgd_update") &&
          in.inputs_size() > 0 && byTensor.count(in.inputs(0)))
        holder[byTensor[in.inputs(0)]->name()].emplace(sp.pipeline(), s);
    }
  }
  std::vector<std::pair<int64_t, std::string>> sizes;
  for (const plan::ParamSource &ps : p.program().params()) {
    if (!ps.trainable() || ps.tensor() < 0 ||
        ps.tensor() >= p.program().tensors_size())
      continue;
    int64_t n = ps.shard_size() == 3 ? std::max<int64_t>(1, ps.shard(1)) : 1;
    for (int64_t d : p.program().tensors(ps.tensor()).shape())
      n *= d;
    sizes.emplace_back(-n, ps.name());
  }
  std::sort(sizes.begin(), sizes.end());
  std::vector<double> load(size_t(p.stages_size()), 0.0); // bytes per rank
  std::map<std::string, int> out;
  for (auto &[negSize, name] : sizes) {
    int best = 0, bestStage = -1;
    for (auto &[pipeline, stage] : holder[name])
      if (bestStage < 0 || load[size_t(stage)] < load[size_t(bestStage)])
        best = pipeline, bestStage = stage;
    if (bestStage >= 0)
      load[size_t(bestStage)] +=
          double(-negSize) /
          std::max(1, p.stages(bestStage).ranks_size());
    out[name] = best;
  }
  return out;
}

/// Writes this rank's pieces: the parameters it updates that its pipeline
/// writes (writerPipelines), each TP rank its own shard and TP rank 0 the
/// unsplit ones, so every parameter is written once. Returns the lines
/// rank 0 puts in the manifest.
std::string Checkpointer::ownedText(int64_t step, Executor &ex,
                                    const std::string &tmp) {
  const plan::Plan &p = *o.plan;
  std::vector<const plan::ParamSource *> owned;
  int32_t tpRank = 0;
  if (p.stages_size() == 0) {
    for (const plan::ParamSource &ps : ex.program().params())
      if (ps.trainable() && !ex.tensor(ps.tensor()).storage.empty())
        owned.push_back(&ps);
  } else {
    const plan::Rank &me = p.ranks(o.rank);
    tpRank = me.tp_rank();
    if (writers.empty())
      writers = writerPipelines(p);
    const plan::Program &prog = ex.program();
    std::map<int32_t, const plan::ParamSource *> byTensor;
    for (const plan::ParamSource &ps : prog.params())
      if (ps.trainable() && !ex.tensor(ps.tensor()).storage.empty())
        byTensor[ps.tensor()] = &ps;
    auto mine = [&](const plan::ParamSource *ps, int pipeline) {
      auto it = writers.find(ps->name());
      return (it == writers.end() ? 0 : it->second) == pipeline &&
             (ps->shard_size() > 0 || tpRank == 0);
    };
    for (const plan::StageProgram &sp : p.stages())
      if (std::find(sp.ranks().begin(), sp.ranks().end(), o.rank) !=
          sp.ranks().end())
        for (int32_t i : sp.update_instrs()) {
          const plan::Instr &in = prog.instrs(i);
          bool update = in.op() == "adamw_update" || in.op() == "sgd_update";
          if (update && in.inputs_size() > 1 && byTensor.count(in.inputs(0)) &&
              mine(byTensor[in.inputs(0)], me.pipeline()))
            owned.push_back(byTensor[in.inputs(0)]);
        }
    // Without an optimizer nothing updates: the writing pipeline's ranks
    // write what they hold; a tied copy may come twice, and the reader
    // takes either.
    if (p.optimizer().kind().empty())
      for (auto &[id, ps] : byTensor)
        if (mine(ps, me.pipeline()))
          owned.push_back(ps);
  }
  std::string text;
  if (owned.empty()) {
    crashHook().at(o.dir, step, o.rank, 0, /*last=*/true);
    return text;
  }
  std::string name = "rank-" + std::to_string(o.rank) + ".bin";
  PieceWriter w(tmp + "/" + name, p.model_hash(), step, o.rank);
  int64_t written = 0;
  for (const plan::ParamSource *ps : owned) {
    Tensor &t = ex.tensor(ps->tensor());
    if (t.dtype != plan::F32)
      throw RuntimeError("checkpoints: parameter '" + ps->name() + "' is " +
                         t.describe() + "; only f32 parameters are stored");
    const ParamState &st = ex.optimizerState()[ps->name()];
    PieceHeader h;
    h.name = ps->name();
    h.shape = t.shape;
    if (ps->shard_size() > 0) {
      h.shape = unsharded(*ps, t).shape;
      h.dim = int32_t(ps->shard(0)), h.parts = int32_t(ps->shard(1));
      h.blocks = int32_t(ps->shard(2)), h.index = tpRank;
    }
    h.elements = t.numel();
    h.moments = st.v.size() == size_t(h.elements)   ? 2
                : st.m.size() == size_t(h.elements) ? 1
                                                    : 0;
    w.add(h, t.f32(), st.m.data(), st.v.data());
    crashHook().at(o.dir, step, o.rank, ++written);
    text += "piece " + escapeName(h.name) + " " + dimsText(h.shape) + " " +
            std::to_string(h.moments) + " " + std::to_string(h.parts) + " " +
            std::to_string(h.index) + "\n";
  }
  crashHook().at(o.dir, step, o.rank, written, /*last=*/true);
  w.commit();
  return "file " + name + " " + std::to_string(w.bytes()) + " " +
         std::to_string(w.entries()) + "\n" + text;
}

void Checkpointer::writeManifest(int64_t step, double lr,
                                 const std::vector<std::string> &texts,
                                 const std::string &tmp, double seconds) {
  const plan::Plan &p = *o.plan;
  Manifest m;
  m.step = step;
  m.modelHash = p.model_hash();
  m.modelPath = p.model_path();
  m.optimizer = p.optimizer();
  m.globalBatch = globalBatch();
  m.seq = p.seq();
  m.precision = p.precision();
  m.dataWindows = baseWindows + (step - baseStep) * globalBatch();
  m.seed = o.seed;
  m.lr = lr;
  m.planHash = o.planHash;
  m.planSummary = planSummary(p);
  m.seconds = seconds;
  // Which pieces of each parameter came (by the number of parts: every
  // index of one cut, or the whole).
  std::map<std::string, std::map<int64_t, std::set<int64_t>>> got;
  std::map<std::string, Manifest::Param> params;
  for (const std::string &t : texts) {
    std::istringstream in(t);
    for (std::string key; in >> key;) {
      if (key == "file") {
        Manifest::File f;
        in >> f.name >> f.bytes >> f.entries;
        m.files.push_back(f);
        continue;
      }
      std::string name, shape;
      Manifest::Param prm;
      int64_t parts = 1, index = 0;
      in >> name >> shape >> prm.moments >> parts >> index;
      unescapeName(name, prm.name);
      std::stringstream ss(shape);
      for (std::string d; std::getline(ss, d, 'x');)
        if (d != "scalar")
          prm.shape.push_back(std::stoll(d));
      got[prm.name][parts].insert(index);
      params.emplace(prm.name, prm);
    }
  }
  // Every trainable parameter of the model must be there in full: a plan
  // whose owners miss one would otherwise leave a checkpoint that cannot
  // be resumed.
  for (const plan::ParamSource &ps : p.program().params()) {
    if (!ps.trainable())
      continue;
    bool whole = false;
    for (auto &[parts, idx] : got[ps.name()])
      whole |= int64_t(idx.size()) == parts;
    if (!whole)
      throw RuntimeError("checkpoint of step " + std::to_string(step) +
                         ": no rank of this plan wrote all of parameter '" +
                         ps.name() + "' (a plan error; the checkpoint was "
                         "not completed)");
  }
  for (auto &[name, prm] : params)
    m.params.push_back(prm);
  writeFileAtomically(tmp + "/manifest", formatManifest(m));
  fsyncPath(tmp);
}

void Checkpointer::write(int64_t step, Executor &ex) {
  o.beforeWrite();
  std::string final = stepDirName(o.dir, step), tmp = final + ".tmp";
  if (o.rank == 0) {
    ::mkdir(o.dir.c_str(), 0755);
    removeCheckpointDir(tmp); // a crashed write's leftovers
    if (::mkdir(tmp.c_str(), 0755) != 0)
      throw RuntimeError(tmp + ": cannot create the checkpoint directory: " +
                         std::strerror(errno));
  }
  o.barrier();
  // Timed from when every rank is here: the time the checkpoint costs, not
  // the ranks' skew at the end of the step (which the next step's first
  // transfer would wait for anyway).
  double t0 = now();
  std::vector<std::string> texts = o.gather(ownedText(step, ex, tmp));
  lastWritten = step;
  if (o.rank != 0)
    return;
  writeManifest(step, ex.learningRate(step), texts, tmp, now() - t0);
  crashHook().at(o.dir, step, 0, -1);
  // A complete checkpoint of this step from an earlier run (resumed from
  // an older one) is replaced; the new one is complete before it goes.
  // A step-N.old beside a step-N is a crashed removal's leftover (the
  // rename below needs its name free); without a step-N it may be the
  // only copy of step N (the scan takes it), removed once the new step-N
  // is in place.
  std::string old = final + ".old";
  struct stat st;
  if (::stat(final.c_str(), &st) == 0)
    removeCheckpointDir(old);
  std::rename(final.c_str(), old.c_str());
  renameInto(tmp, final);
  fsyncPath(o.dir);
  removeCheckpointDir(old);
  writeFileAtomically(o.dir + "/latest",
                      "step " + std::to_string(step) + "\nmodel " +
                          hex16(o.plan->model_hash()) + "\n");
  int64_t bytes = 0;
  for (const std::string &t : texts) {
    int64_t b = 0;
    if (std::sscanf(t.c_str(), "file %*s %" SCNd64, &b) == 1)
      bytes += b;
  }
  std::printf("checkpoint: step %" PRId64 " written to %s (%.2f MiB, %.4f s)\n",
              step, final.c_str(), double(bytes) / (1 << 20), now() - t0);
  std::fflush(stdout);
}

void Checkpointer::afterStep(int64_t step, Executor &ex) {
  if (!o.dir.empty() && o.every > 0 && step % o.every == 0)
    write(step, ex);
}

void Checkpointer::finish(int64_t step, Executor &ex) {
  // Resumed at or after the last step: the state is the checkpoint's, not
  // step `step`'s, so nothing is written.
  if (!o.dir.empty() && step > lastWritten)
    write(step, ex);
}

std::map<std::string, std::vector<float>>
readCheckpointParameters(const std::string &dir, uint64_t modelHash) {
  StoredCheckpoint c(newestComplete(dir, nullptr));
  if (c.manifest().modelHash != modelHash)
    throw RuntimeError(c.path() + ": a checkpoint of another model");
  std::map<std::string, std::vector<float>> out;
  std::vector<float> m, v;
  for (const Manifest::Param &p : c.manifest().params)
    c.load(p.name, p.shape, Slice{}, out[p.name], m, v);
  return out;
}

} // namespace frenzy::rt
