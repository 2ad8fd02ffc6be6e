//===- CheckpointReshard.cpp - read any plan's checkpoint -----------------===//
#include "CheckpointReshard.h"
#include "Executor.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <sys/stat.h>

namespace frenzy::rt {

StoredCheckpoint::StoredCheckpoint(const std::string &p)
    : stepPath(p), m(readManifest(p + "/manifest")) {
  for (const Manifest::File &f : m.files) {
    std::string path = stepPath + "/" + f.name;
    int rank = -1;
    char tail = 0;
    if (std::sscanf(f.name.c_str(), "rank-%d.bi%c", &rank, &tail) != 2 ||
        tail != 'n' || rank < 0 || f.name != "rank-" + std::to_string(rank) + ".bin")
      throw RuntimeError(stepPath + "/manifest: file '" + f.name +
                         "' is not named rank-R.bin (a damaged manifest)");
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
      throw RuntimeError(path + ": missing (the manifest lists it; restore it "
                         "or resume from another checkpoint)");
    if (int64_t(st.st_size) != f.bytes)
      throw RuntimeError(path + ": " + std::to_string(st.st_size) +
                         " bytes, the manifest says " +
                         std::to_string(f.bytes) +
                         " (damaged; restore it or resume from another "
                         "checkpoint)");
    std::vector<PieceHeader> index =
        readPieceIndex(path, m.modelHash, m.step, rank);
    if (int64_t(index.size()) != f.entries)
      throw RuntimeError(path + ": " + std::to_string(index.size()) +
                         " pieces, the manifest says " +
                         std::to_string(f.entries) + " (damaged)");
    for (PieceHeader &h : index)
      pieces[h.name].push_back({path, std::move(h)});
  }
}

static bool same(const PieceHeader &h, const Slice &s) {
  if (h.parts == 1 || s.parts == 1)
    return h.parts == s.parts;
  return h.parts == s.parts && h.dim == s.dim && h.blocks == s.blocks &&
         h.index == s.index;
}

int64_t StoredCheckpoint::load(const std::string &name,
                               const std::vector<int64_t> &shape,
                               const Slice &s, std::vector<float> &value,
                               std::vector<float> &mom1,
                               std::vector<float> &mom2) const {
  auto it = pieces.find(name);
  if (it == pieces.end())
    throw RuntimeError(stepPath + ": no stored value of parameter '" + name +
                       "' (the checkpoint is incomplete or of another model)");
  const std::vector<Stored> &all = it->second;
  if (all.front().header.shape != shape)
    throw RuntimeError(stepPath + ": parameter '" + name + "' is stored as " +
                       dimsText(all.front().header.shape) +
                       ", this plan's model has " + dimsText(shape));
  // The stored piece that is exactly the slice asked for: no reassembly.
  for (const Stored &st : all)
    if (same(st.header, s)) {
      readPiece(st.file, st.header, value, mom1, mom2);
      return st.header.elements * 4 * (1 + st.header.moments);
    }
  // A set of pieces that covers the whole parameter: one whole piece, or
  // every index of one way of cutting it (replicas are skipped).
  std::vector<const Stored *> use;
  // (A map, not a vector of `parts` slots: the count comes from the file.)
  std::map<std::tuple<int32_t, int32_t, int32_t>,
           std::map<int32_t, const Stored *>>
      cuts;
  for (const Stored &st : all) {
    const PieceHeader &h = st.header;
    // Every piece is cut from the same whole shape: copySlice trusts it.
    if (h.shape != shape)
      throw RuntimeError(st.file + ": piece '" + name + "' is stored as " +
                         dimsText(h.shape) + ", another piece as " +
                         dimsText(shape) + " (damaged)");
    if (h.parts == 1) {
      use = {&st};
      break;
    }
    cuts[{h.parts, h.dim, h.blocks}].emplace(h.index, &st);
  }
  for (auto &[key, c] : cuts) {
    if (!use.empty())
      break;
    if (int64_t(c.size()) == std::get<0>(key))
      for (auto &[index, st] : c)
        use.push_back(st);
  }
  if (use.empty())
    throw RuntimeError(stepPath + ": the stored pieces of parameter '" + name +
                       "' do not cover it (a shard is missing)");
  int64_t whole = 1;
  for (int64_t d : shape)
    whole *= d;
  uint32_t moments = use.front()->header.moments;
  std::vector<float> full[3], piece[3];
  for (int k = 0; k <= int(moments); ++k)
    full[k].resize(size_t(whole));
  int64_t bytes = 0;
  for (const Stored *st : use) {
    const PieceHeader &h = st->header;
    if (h.moments != moments)
      throw RuntimeError(st->file + ": piece '" + name +
                         "' stores other optimizer moments than its other "
                         "pieces (damaged)");
    readPiece(st->file, h, piece[0], piece[1], piece[2]);
    bytes += h.elements * 4 * (1 + h.moments);
    for (int k = 0; k <= int(moments); ++k) {
      if (h.parts == 1)
        full[k] = piece[k];
      else
        copySlice(shape, 4, h.dim, h.blocks, h.index, h.parts,
                  reinterpret_cast<uint8_t *>(full[k].data()),
                  reinterpret_cast<uint8_t *>(piece[k].data()), true);
    }
  }
  std::vector<float> *outs[3] = {&value, &mom1, &mom2};
  for (int k = 0; k < 3; ++k) {
    std::vector<float> &out = *outs[k];
    if (k > int(moments)) {
      out.clear();
    } else if (s.parts == 1) {
      out = std::move(full[k]);
    } else {
      out.resize(size_t(whole / s.parts));
      copySlice(shape, 4, s.dim, s.blocks, s.index, s.parts,
                reinterpret_cast<uint8_t *>(full[k].data()),
                reinterpret_cast<uint8_t *>(out.data()), false);
    }
  }
  return bytes;
}

} // namespace frenzy::rt
