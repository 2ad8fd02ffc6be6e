//===- CheckpointFormat.cpp - layout-independent checkpoint files ---------===//
//
// Rank file: "FRZCKPT2" | u32 version (2) | u64 model hash | i64 step |
// i32 rank | i32 count (the same 32-byte header as version 1, with the
// model's hash where the plan's was), then count pieces:
//   u32 name length | name | u32 rank of the shape | i64 shape[rank] |
//   i32 dim | i32 parts | i32 blocks | i32 index | i64 elements |
//   u32 moments | u64 checksum | f32 value[elements] | f32 m[..] | f32 v[..]
//
//===----------------------------------------------------------------------===//
#include "CheckpointFormat.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace frenzy::rt {

static constexpr char kMagic[8] = {'F', 'R', 'Z', 'C', 'K', 'P', 'T', '2'};
static constexpr uint32_t kVersion = 2;

uint64_t checksum64(const void *data, size_t n, uint64_t h) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  size_t words = n / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, p + i * 8, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (size_t i = words * 8; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

//===--- manifest ---------------------------------------------------------===//

/// Names go on one line between spaces: bytes outside '!'..'~' and '%'
/// become %XX.
std::string escapeName(const std::string &s) {
  if (s.empty())
    return "-";
  std::string out;
  for (unsigned char c : s) {
    if (c > ' ' && c <= '~' && c != '%' && !(s == "-")) {
      out += char(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

bool unescapeName(const std::string &s, std::string &out) {
  out.clear();
  if (s == "-")
    return true;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size())
      return false;
    char hex[3] = {s[i + 1], s[i + 2], 0};
    char *end = nullptr;
    long v = std::strtol(hex, &end, 16);
    if (end != hex + 2)
      return false;
    out += char(v);
    i += 2;
  }
  return true;
}

std::string dimsText(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return shape.empty() ? "scalar" : s;
}

static std::string num(double d) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", d);
  return b;
}

static std::string hex16(uint64_t h) {
  char s[20];
  std::snprintf(s, sizeof s, "%016" PRIx64, h);
  return s;
}

/// Free text to the end of its line (the plan summary, read by people).
static std::string oneLine(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r')
      c = ' ';
  return s;
}

std::string formatManifest(const Manifest &m) {
  std::ostringstream o;
  const plan::Optimizer &op = m.optimizer;
  o << "frenzy-checkpoint 2\n"
    << "step " << m.step << "\n"
    << "model_hash " << hex16(m.modelHash) << "\n"
    << "model_path " << escapeName(m.modelPath) << "\n"
    << "optimizer " << escapeName(op.kind()) << " lr " << num(op.lr())
    << " min_lr " << num(op.min_lr()) << " warmup_steps " << op.warmup_steps()
    << " total_steps " << op.total_steps() << " clip_norm "
    << num(op.clip_norm()) << " beta1 " << num(op.beta1()) << " beta2 "
    << num(op.beta2()) << " eps " << num(op.eps()) << " momentum "
    << num(op.momentum()) << "\n"
    << "global_batch " << m.globalBatch << "\n"
    << "seq " << m.seq << "\n"
    << "precision " << escapeName(m.precision) << "\n"
    << "data_windows " << m.dataWindows << "\n"
    << "seed " << m.seed << "\n"
    << "lr " << num(m.lr) << "\n"
    << "plan_hash " << hex16(m.planHash) << "\n"
    << "plan " << oneLine(m.planSummary) << "\n";
  for (const Manifest::Param &p : m.params)
    o << "param " << escapeName(p.name) << " shape " << dimsText(p.shape)
      << " moments " << p.moments << "\n";
  for (const Manifest::File &f : m.files)
    o << "file " << escapeName(f.name) << " bytes " << f.bytes << " entries "
      << f.entries << "\n";
  o << "seconds " << num(m.seconds) << "\n"
    << "end\n";
  return o.str();
}

static bool readInt(const std::string &s, int64_t &v) {
  char *end = nullptr;
  errno = 0;
  v = std::strtoll(s.c_str(), &end, 10);
  return !s.empty() && *end == 0 && errno == 0;
}

static bool readDouble(const std::string &s, double &v) {
  char *end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == 0;
}

static bool readShape(const std::string &s, std::vector<int64_t> &shape) {
  shape.clear();
  if (s == "scalar")
    return true;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    int64_t d;
    if (!readInt(part, d) || d < 0 || d > (int64_t(1) << 40))
      return false;
    shape.push_back(d);
  }
  return !shape.empty() && shape.size() <= 8;
}

Manifest readManifest(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw RuntimeError(path + ": cannot read the checkpoint manifest");
  Manifest m;
  std::string line;
  int lineNo = 0;
  bool ended = false, started = false;
  unsigned seen = 0;
  auto fail = [&](const std::string &what) {
    return RuntimeError(path + ":" + std::to_string(lineNo) + ": " + what +
                        " (a damaged manifest; resume from another "
                        "checkpoint)");
  };
  while (std::getline(in, line)) {
    ++lineNo;
    if (ended)
      throw fail("text after 'end'");
    std::vector<std::string> w;
    std::istringstream ls(line);
    for (std::string s; ls >> s;)
      w.push_back(s);
    if (w.empty())
      continue;
    const std::string &key = w[0];
    if (key == "plan" && started) {
      m.planSummary = line.size() > 5 ? line.substr(5) : "";
      continue;
    }
    if (!started) {
      if (w.size() != 2 || key != "frenzy-checkpoint" || w[1] != "2")
        throw fail("not a Frenzy checkpoint manifest of version 2");
      started = true;
      continue;
    }
    int64_t i = 0;
    double d = 0;
    auto want = [&](size_t n) {
      if (w.size() != n)
        throw fail("'" + key + "' expects " + std::to_string(n - 1) +
                   " fields");
    };
    // Counts above 2^50 are damage, not a run: refused here so no step or
    // data position arithmetic later overflows.
    auto integer = [&](size_t k, int64_t min) {
      if (!readInt(w[k], i) || i < min || i > (int64_t(1) << 50))
        throw fail("'" + key + "': bad number '" + w[k] + "'");
      return i;
    };
    auto real = [&](size_t k) {
      if (!readDouble(w[k], d))
        throw fail("'" + key + "': bad number '" + w[k] + "'");
      return d;
    };
    auto text = [&](size_t k) {
      std::string s;
      if (!unescapeName(w[k], s))
        throw fail("'" + key + "': bad name '" + w[k] + "'");
      return s;
    };
    auto hash = [&](size_t k) {
      char *end = nullptr;
      uint64_t h = std::strtoull(w[k].c_str(), &end, 16);
      if (w[k].size() != 16 || *end != 0)
        throw fail("'" + key + "': bad hash '" + w[k] + "'");
      return h;
    };
    if (key == "end") {
      want(1);
      ended = true;
    } else if (key == "step") {
      want(2), m.step = integer(1, 1), seen |= 1;
    } else if (key == "model_hash") {
      want(2), m.modelHash = hash(1), seen |= 2;
    } else if (key == "model_path") {
      want(2), m.modelPath = text(1);
    } else if (key == "optimizer") {
      want(20);
      plan::Optimizer &op = m.optimizer;
      op.set_kind(text(1));
      const char *names[] = {"lr",        "min_lr", "warmup_steps",
                             "total_steps", "clip_norm", "beta1",
                             "beta2",     "eps",    "momentum"};
      for (int k = 0; k < 9; ++k)
        if (w[2 + 2 * k] != names[k])
          throw fail("'optimizer': expected '" + std::string(names[k]) + "'");
      op.set_lr(real(3)), op.set_min_lr(real(5));
      op.set_warmup_steps(integer(7, 0)), op.set_total_steps(integer(9, 0));
      op.set_clip_norm(real(11)), op.set_beta1(real(13));
      op.set_beta2(real(15)), op.set_eps(real(17)), op.set_momentum(real(19));
      seen |= 4;
    } else if (key == "global_batch") {
      want(2), m.globalBatch = integer(1, 1), seen |= 8;
    } else if (key == "seq") {
      want(2), m.seq = integer(1, 1), seen |= 16;
    } else if (key == "precision") {
      want(2), m.precision = text(1);
    } else if (key == "data_windows") {
      want(2), m.dataWindows = integer(1, 0), seen |= 32;
    } else if (key == "seed") {
      // Any 64-bit seed (not bounded like the counts).
      want(2);
      char *end = nullptr;
      errno = 0;
      m.seed = std::strtoull(w[1].c_str(), &end, 10);
      if (w[1].empty() || w[1][0] == '-' || *end != 0 || errno != 0)
        throw fail("'seed': bad number '" + w[1] + "'");
    } else if (key == "lr") {
      want(2), m.lr = real(1);
    } else if (key == "plan_hash") {
      want(2), m.planHash = hash(1);
    } else if (key == "seconds") {
      want(2), m.seconds = real(1);
    } else if (key == "param") {
      want(6);
      Manifest::Param p;
      p.name = text(1);
      if (w[2] != "shape" || !readShape(w[3], p.shape) || w[4] != "moments")
        throw fail("'param': expected 'param NAME shape AxB moments M'");
      p.moments = uint32_t(integer(5, 0));
      if (p.moments > 2)
        throw fail("'param': moments must be 0, 1 or 2");
      m.params.push_back(p);
    } else if (key == "file") {
      want(6);
      Manifest::File f;
      f.name = text(1);
      if (w[2] != "bytes" || w[4] != "entries" ||
          f.name.find('/') != std::string::npos)
        throw fail("'file': expected 'file rank-R.bin bytes N entries E'");
      f.bytes = integer(3, 32), f.entries = integer(5, 0);
      m.files.push_back(f);
    } // other keys: written by a newer frenzy-launch, not needed here
  }
  if (!started)
    throw fail("empty manifest");
  if (!ended)
    throw fail("no final 'end' line: the checkpoint is half-written");
  if (seen != 63)
    throw fail("a required line (step, model_hash, optimizer, global_batch, "
               "seq, data_windows) is missing");
  return m;
}

//===--- directories ------------------------------------------------------===//

std::string stepDirName(const std::string &dir, int64_t step) {
  char name[40];
  std::snprintf(name, sizeof name, "/step-%08" PRId64, step);
  return dir + name;
}

/// Whether the manifest of `stepDir` exists and ends with `end`.
static bool complete(const std::string &stepDir) {
  std::ifstream in(stepDir + "/manifest", std::ios::binary | std::ios::ate);
  if (!in)
    return false;
  std::streamoff size = in.tellg();
  if (size < 4)
    return false;
  in.seekg(std::max<std::streamoff>(0, size - 5));
  std::string tail((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  return tail == "\nend\n";
}

CheckpointScan scanCheckpoints(const std::string &dir) {
  CheckpointScan scan;
  DIR *d = opendir(dir.c_str());
  if (!d)
    return scan;
  std::vector<std::pair<int64_t, std::string>> half, olds;
  while (dirent *e = readdir(d)) {
    std::string n = e->d_name;
    if (n.compare(0, 5, "step-") != 0)
      continue;
    size_t digits = 5;
    while (digits < n.size() && std::isdigit((unsigned char)n[digits]))
      ++digits;
    if (digits == 5 || digits - 5 > 18)
      continue;
    int64_t step = std::strtoll(n.c_str() + 5, nullptr, 10);
    std::string rest = n.substr(digits), path = dir + "/" + n;
    if (rest.empty() && complete(path)) {
      if (step > scan.step)
        scan.step = step, scan.path = path;
    } else if (rest.empty() || rest == ".tmp") {
      half.emplace_back(step, path);
    } else if (rest == ".old") {
      olds.emplace_back(step, path);
    }
  }
  closedir(d);
  // A rewrite of step N renames the complete step-N to step-N.old before
  // step-N.tmp becomes step-N: a crash between the two leaves only the
  // .old one, still complete. Taken only when newer than every step-N
  // (a present step-N wins; a half-removed .old beside it is never read).
  for (auto &[step, path] : olds)
    if (step > scan.step && complete(path))
      scan.step = step, scan.path = path;
  std::sort(half.begin(), half.end());
  for (auto &[step, path] : half)
    if (step >= scan.step)
      scan.halfWritten.push_back(path);
  return scan;
}

void fsyncPath(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    throw RuntimeError(path + ": cannot open to flush it: " +
                       std::strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  // Some file systems refuse fsync on a directory (EINVAL): the rename is
  // still ordered after the file's own fsync.
  if (rc != 0 && errno != EINVAL)
    throw RuntimeError(path + ": cannot flush to disk: " +
                       std::strerror(errno));
}

void renameInto(const std::string &from, const std::string &to) {
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw RuntimeError(to + ": cannot rename " + from + " into place: " +
                       std::strerror(errno));
}

void removeCheckpointDir(const std::string &path) {
  if (DIR *d = opendir(path.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..")
        ::unlink((path + "/" + n).c_str());
    }
    closedir(d);
  }
  ::rmdir(path.c_str());
}

void writeFileAtomically(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out)
      throw RuntimeError(tmp + ": cannot write");
  }
  fsyncPath(tmp);
  renameInto(tmp, path);
}

//===--- rank files -------------------------------------------------------===//

PieceWriter::PieceWriter(const std::string &p, uint64_t modelHash,
                         int64_t step, int32_t rank)
    : path(p), tmp(p + ".part") {
  f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw RuntimeError(tmp + ": cannot create: " + std::strerror(errno));
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  int32_t zero = 0;
  put(kMagic, 8);
  put(&kVersion, 4);
  put(&modelHash, 8);
  put(&step, 8);
  put(&rank, 4);
  put(&zero, 4); // the count, filled in by commit()
}

PieceWriter::~PieceWriter() {
  if (f) {
    std::fclose(f);
    ::unlink(tmp.c_str());
  }
}

void PieceWriter::put(const void *p, size_t n) {
  // In 4 MiB pieces: one fwrite of a whole parameter was 4x slower here
  // (390 MB/s against 1.6 GB/s, page cache).
  const char *c = static_cast<const char *>(p);
  for (size_t done = 0; done < n;) {
    size_t k = std::min<size_t>(n - done, 4 << 20);
    if (std::fwrite(c + done, 1, k, f) != k)
      throw RuntimeError(tmp + ": cannot write: " + std::strerror(errno));
    done += k;
  }
  written += int64_t(n);
}

void PieceWriter::add(PieceHeader h, const float *value, const float *m,
                      const float *v) {
  size_t n = size_t(h.elements) * 4;
  h.checksum = checksum64(value, n);
  if (h.moments >= 1)
    h.checksum = checksum64(m, n, h.checksum);
  if (h.moments >= 2)
    h.checksum = checksum64(v, n, h.checksum);
  uint32_t len = uint32_t(h.name.size()), rank = uint32_t(h.shape.size());
  put(&len, 4);
  put(h.name.data(), len);
  put(&rank, 4);
  put(h.shape.data(), rank * 8);
  put(&h.dim, 4);
  put(&h.parts, 4);
  put(&h.blocks, 4);
  put(&h.index, 4);
  put(&h.elements, 8);
  put(&h.moments, 4);
  put(&h.checksum, 8);
  put(value, n);
  if (h.moments >= 1)
    put(m, n);
  if (h.moments >= 2)
    put(v, n);
  ++count;
  // Pieces reach the file as they are written: a crash mid-checkpoint
  // leaves a real half-written file behind (the crash test needs one).
  std::fflush(f);
}

void PieceWriter::commit() {
  if (std::fseek(f, 32, SEEK_SET) != 0 || std::fwrite(&count, 4, 1, f) != 1 ||
      std::fflush(f) != 0 || ::fsync(fileno(f)) != 0)
    throw RuntimeError(tmp + ": cannot write: " + std::strerror(errno));
  std::fclose(f);
  f = nullptr;
  renameInto(tmp, path);
}

template <typename T> static bool get(std::ifstream &in, T &v) {
  return bool(in.read(reinterpret_cast<char *>(&v), sizeof v));
}

std::vector<PieceHeader> readPieceIndex(const std::string &path,
                                        uint64_t modelHash, int64_t step,
                                        int32_t rank) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  auto fail = [&](const std::string &what) {
    return RuntimeError(path + ": " + what);
  };
  if (!in)
    throw fail("cannot open the checkpoint file (missing: resume from another "
               "checkpoint)");
  int64_t size = in.tellg();
  in.seekg(0);
  char magic[8];
  uint32_t version = 0;
  uint64_t hash = 0;
  int64_t fileStep = 0;
  int32_t fileRank = 0, count = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0)
    throw fail("not a Frenzy checkpoint file of version 2");
  if (!get(in, version) || !get(in, hash) || !get(in, fileStep) ||
      !get(in, fileRank) || !get(in, count) || version != kVersion)
    throw fail("unsupported checkpoint version " + std::to_string(version));
  if (hash != modelHash || fileStep != step || fileRank != rank || count < 0)
    throw fail("belongs to another model, step or rank (step " +
               std::to_string(fileStep) + ", rank " +
               std::to_string(fileRank) + ")");
  std::vector<PieceHeader> out;
  for (int32_t e = 0; e < count; ++e) {
    auto corrupt = [&] {
      return fail("truncated or corrupt at piece " + std::to_string(e));
    };
    PieceHeader h;
    uint32_t len = 0, dims = 0;
    if (!get(in, len) || int64_t(len) > size - int64_t(in.tellg()))
      throw corrupt();
    h.name.resize(len);
    if (!in.read(h.name.data(), len) || !get(in, dims) || dims > 8)
      throw corrupt();
    h.shape.resize(dims);
    int64_t whole = 1;
    for (int64_t &d : h.shape) {
      // Both factors are at most 2^40, so the product is bounded before it
      // is formed (two such dims would overflow int64).
      if (!get(in, d) || d < 0 || d > (int64_t(1) << 40) ||
          (d != 0 && whole > (int64_t(1) << 40) / d))
        throw corrupt();
      whole *= d;
    }
    if (!get(in, h.dim) || !get(in, h.parts) || !get(in, h.blocks) ||
        !get(in, h.index) || !get(in, h.elements) || !get(in, h.moments) ||
        !get(in, h.checksum))
      throw corrupt();
    bool shardOk =
        h.parts == 1 ? h.index == 0
                     : (h.dim >= 0 && h.dim < int32_t(dims) && h.blocks >= 1 &&
                        h.parts >= 1 && h.index >= 0 && h.index < h.parts &&
                        h.shape[h.dim] % (int64_t(h.blocks) * h.parts) == 0);
    if (!shardOk || h.moments > 2 || h.elements != whole / h.parts)
      throw fail("piece '" + h.name + "' has an inconsistent shape or shard");
    h.offset = in.tellg();
    int64_t bytes = h.elements * 4 * (1 + h.moments);
    if (bytes > size - h.offset)
      throw fail("truncated at piece '" + h.name + "'");
    in.seekg(h.offset + bytes);
    out.push_back(std::move(h));
  }
  if (int64_t(in.tellg()) != size)
    throw fail("has " + std::to_string(size - int64_t(in.tellg())) +
               " bytes after its last piece (damaged)");
  return out;
}

void readPiece(const std::string &path, const PieceHeader &h,
               std::vector<float> &value, std::vector<float> &m,
               std::vector<float> &v) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(h.offset);
  uint64_t sum = 0xcbf29ce484222325ull;
  int k = 0;
  for (std::vector<float> *buf : {&value, &m, &v}) {
    if (k++ > int(h.moments)) {
      buf->clear();
      continue;
    }
    buf->resize(size_t(h.elements));
    if (!in.read(reinterpret_cast<char *>(buf->data()), h.elements * 4))
      throw RuntimeError(path + ": truncated at piece '" + h.name + "'");
    sum = checksum64(buf->data(), size_t(h.elements) * 4, sum);
  }
  if (sum != h.checksum)
    throw RuntimeError(path + ": piece '" + h.name +
                       "' fails its checksum (the file is damaged; restore "
                       "it or resume from another checkpoint)");
}

} // namespace frenzy::rt
