//===- Checkpoint.cpp - parameters and optimizer state on disk ------------===//
#include "Checkpoint.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace frenzy::rt {

static constexpr char kMagic[8] = {'F', 'R', 'Z', 'C', 'K', 'P', 'T', '1'};

static std::string stepDir(const std::string &dir, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "/step-%08" PRId64, step);
  return dir + name;
}

static std::string rankFile(const std::string &dir, int64_t step, int rank) {
  return stepDir(dir, step) + "/rank-" + std::to_string(rank) + ".bin";
}

static std::string hex(uint64_t h) {
  char s[20];
  std::snprintf(s, sizeof s, "%016" PRIx64, h);
  return s;
}

int64_t latestCheckpoint(const std::string &dir, uint64_t *planHash) {
  std::ifstream in(dir + "/latest");
  std::string w1, w2, hash;
  int64_t step = 0;
  if (!in || !(in >> w1 >> step >> w2 >> hash) || w1 != "step" ||
      w2 != "plan" || step < 1)
    throw RuntimeError(dir + ": no complete checkpoint (" + dir +
                       "/latest missing or unreadable)");
  *planHash = std::strtoull(hash.c_str(), nullptr, 16);
  return step;
}

/// Renames `tmp` over `path` (atomic on one file system).
static void commit(const std::string &tmp, const std::string &path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw RuntimeError(path + ": cannot rename " + tmp + " into place: " +
                       std::strerror(errno));
}

Checkpointer::Checkpointer(CheckpointOptions opts) : o(std::move(opts)) {
  if (o.dir.empty())
    return;
  if (!std::ifstream(o.dir + "/latest"))
    return; // a new directory, or one without a complete checkpoint
  uint64_t theirs = 0;
  latestCheckpoint(o.dir, &theirs);
  if (theirs != o.planHash)
    throw RuntimeError(o.dir + " holds checkpoints of another plan (hash " +
                       hex(theirs) + ", this plan " + hex(o.planHash) +
                       "); choose another --checkpoint-dir (nothing was "
                       "written)");
}

int64_t Checkpointer::resume(Executor &ex) {
  if (o.resumeDir.empty())
    return 1;
  uint64_t hash = 0;
  int64_t step = latestCheckpoint(o.resumeDir, &hash);
  if (hash != o.planHash)
    throw RuntimeError(o.resumeDir + ": the checkpoint was written by another "
                       "plan (hash " + hex(hash) + ", this plan " +
                       hex(o.planHash) + "); resume with the plan that wrote "
                       "it");
  auto stored = readRankCheckpoint(o.resumeDir, step, o.rank, hash);
  for (const plan::ParamSource &p : ex.program().params()) {
    Tensor &t = ex.tensor(p.tensor());
    if (!p.trainable() || t.storage.empty())
      continue;
    auto it = stored.find(p.name());
    if (it == stored.end() || int64_t(it->second.value.size()) != t.numel())
      throw RuntimeError(rankFile(o.resumeDir, step, o.rank) +
                         ": no value of " + std::to_string(t.numel()) +
                         " elements for parameter '" + p.name() + "'");
    std::memcpy(t.f32(), it->second.value.data(), t.numel() * 4);
    ParamState &st = ex.optimizerState()[p.name()];
    st.m = it->second.m;
    st.v = it->second.v;
  }
  lastWritten = step;
  return step + 1;
}

std::map<std::string, StoredParam>
readRankCheckpoint(const std::string &dir, int64_t step, int rank,
                   uint64_t planHash) {
  std::string path = rankFile(dir, step, rank);
  std::ifstream in(path, std::ios::binary);
  auto fail = [&](const std::string &what) -> RuntimeError {
    return RuntimeError(path + ": " + what);
  };
  char magic[8];
  uint32_t version = 0;
  uint64_t hash = 0;
  int64_t fileStep = 0;
  int32_t fileRank = 0, entries = 0;
  if (!in || !in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0)
    throw fail("not a Frenzy checkpoint");
  in.read(reinterpret_cast<char *>(&version), 4);
  in.read(reinterpret_cast<char *>(&hash), 8);
  in.read(reinterpret_cast<char *>(&fileStep), 8);
  in.read(reinterpret_cast<char *>(&fileRank), 4);
  in.read(reinterpret_cast<char *>(&entries), 4);
  if (!in || version != 1)
    throw fail("unsupported checkpoint version " + std::to_string(version));
  if (hash != planHash || fileStep != step || fileRank != rank)
    throw fail("belongs to another plan, step or rank (step " +
               std::to_string(fileStep) + ", rank " +
               std::to_string(fileRank) + ")");
  // Sizes read from the file are checked against what is left of it
  // before anything is allocated: a damaged file must not ask for more
  // memory than its own size.
  std::streamoff here = in.tellg();
  in.seekg(0, std::ios::end);
  std::streamoff end = in.tellg();
  in.seekg(here);
  auto left = [&] { return int64_t(end - in.tellg()); };
  std::map<std::string, StoredParam> out;
  for (int32_t e = 0; e < entries; ++e) {
    uint32_t len = 0, moments = 0;
    int64_t n = 0;
    in.read(reinterpret_cast<char *>(&len), 4);
    if (!in || int64_t(len) > left())
      throw fail("truncated or corrupt at entry " + std::to_string(e));
    std::string name(len, '\0');
    in.read(name.data(), len);
    in.read(reinterpret_cast<char *>(&n), 8);
    in.read(reinterpret_cast<char *>(&moments), 4);
    if (!in || n < 0 || moments > 2 || n > left() / 4 / (1 + moments))
      throw fail("truncated or corrupt at entry " + std::to_string(e));
    StoredParam &p = out[name];
    for (std::vector<float> *v : {&p.value, &p.m, &p.v}) {
      if (v != &p.value && moments-- == 0)
        break;
      v->resize(n);
      in.read(reinterpret_cast<char *>(v->data()), n * 4);
    }
    if (!in)
      throw fail("truncated at parameter '" + name + "'");
  }
  return out;
}

void Checkpointer::write(int64_t step, Executor &ex) {
  std::string sdir = stepDir(o.dir, step);
  ::mkdir(o.dir.c_str(), 0755);
  ::mkdir(sdir.c_str(), 0755);
  std::string path = rankFile(o.dir, step, o.rank), tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  std::vector<const plan::ParamSource *> held;
  for (const plan::ParamSource &p : ex.program().params())
    if (p.trainable() && !ex.tensor(p.tensor()).storage.empty())
      held.push_back(&p);
  uint32_t version = 1;
  int32_t rank = o.rank, entries = int32_t(held.size());
  out.write(kMagic, 8);
  out.write(reinterpret_cast<const char *>(&version), 4);
  out.write(reinterpret_cast<const char *>(&o.planHash), 8);
  out.write(reinterpret_cast<const char *>(&step), 8);
  out.write(reinterpret_cast<const char *>(&rank), 4);
  out.write(reinterpret_cast<const char *>(&entries), 4);
  for (const plan::ParamSource *p : held) {
    const Tensor &t = ex.tensor(p->tensor());
    const ParamState &st = ex.optimizerState()[p->name()];
    uint32_t len = uint32_t(p->name().size());
    int64_t n = t.numel();
    uint32_t moments = st.v.size() == size_t(n) ? 2
                       : st.m.size() == size_t(n) ? 1
                                                  : 0;
    out.write(reinterpret_cast<const char *>(&len), 4);
    out.write(p->name().data(), len);
    out.write(reinterpret_cast<const char *>(&n), 8);
    out.write(reinterpret_cast<const char *>(&moments), 4);
    out.write(static_cast<const char *>(t.data()), n * 4);
    if (moments >= 1)
      out.write(reinterpret_cast<const char *>(st.m.data()), n * 4);
    if (moments == 2)
      out.write(reinterpret_cast<const char *>(st.v.data()), n * 4);
  }
  out.close();
  if (!out)
    throw RuntimeError(tmp + ": cannot write the checkpoint");
  commit(tmp, path);
  o.barrier();
  if (o.rank == 0) {
    std::string latest = o.dir + "/latest", ltmp = latest + ".tmp";
    std::ofstream l(ltmp, std::ios::trunc);
    l << "step " << step << "\nplan " << hex(o.planHash) << "\n";
    l.close();
    if (!l)
      throw RuntimeError(ltmp + ": cannot write");
    commit(ltmp, latest);
    std::printf("checkpoint: step %" PRId64 " written to %s\n", step,
                sdir.c_str());
    std::fflush(stdout);
  }
  lastWritten = step;
}

void Checkpointer::afterStep(int64_t step, Executor &ex) {
  if (!o.dir.empty() && o.every > 0 && step % o.every == 0)
    write(step, ex);
}

void Checkpointer::finish(int64_t step, Executor &ex) {
  if (!o.dir.empty() && lastWritten != step)
    write(step, ex);
}

} // namespace frenzy::rt
