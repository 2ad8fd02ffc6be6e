//===- CheckpointFormatTest.cpp - checkpoint files and resharding ---------===//
//
// The layout-independent checkpoint files (runtime/exec/CheckpointFormat,
// CheckpointReshard) without ranks or plans: a manifest survives a round
// trip and a half-written one is refused; TP shards written by two "ranks"
// come back whole, as the stored shard, and cut another way; a flipped
// byte fails the checksum; the directory scan finds the newest complete
// step and names the half-written ones.
//
//===----------------------------------------------------------------------===//
#include "CheckpointReshard.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sys/stat.h>

using namespace frenzy::rt;

namespace {

/// A scratch directory, removed with what is in it at the end of a test.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/frenzy-ckpt-test-XXXXXX";
    if (const char *d = mkdtemp(name))
      path = d;
  }
  ~TempDir() {
    if (!path.empty())
      std::system(("rm -rf '" + path + "'").c_str());
  }
  operator std::string() const { return path; }
};

Manifest sample() {
  Manifest m;
  m.step = 7;
  m.modelHash = 0xabcdef0123456789ull;
  m.modelPath = "/models/my model.onnx";
  m.optimizer.set_kind("adamw");
  m.optimizer.set_lr(3e-4);
  m.optimizer.set_beta1(0.9);
  m.optimizer.set_beta2(0.95);
  m.optimizer.set_eps(1e-8);
  m.globalBatch = 16;
  m.seq = 64;
  m.precision = "fp32";
  m.dataWindows = 112;
  m.seed = 99;
  m.lr = 2.5e-4;
  m.planSummary = "2 ranks, 1 pipelines (1 stages x TP 2 @4)";
  return m;
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
}

/// Element (i, j) of the 6 x 4 test parameter, its m and v.
float at(int k, int i, int j) { return float(k * 100 + i * 4 + j); }

} // namespace

TEST(CheckpointFormat, ManifestRoundTrip) {
  TempDir tmp;
  std::string dir = tmp;
  ASSERT_FALSE(dir.empty());
  Manifest m = sample();
  m.params.push_back({"layer 0/w%", {6, 4}, 2});
  m.files.push_back({"rank-0.bin", 1234, 3});
  writeText(dir + "/manifest", formatManifest(m));
  Manifest r = readManifest(dir + "/manifest");
  EXPECT_EQ(r.step, 7);
  EXPECT_EQ(r.modelHash, m.modelHash);
  EXPECT_EQ(r.modelPath, m.modelPath);
  EXPECT_EQ(r.optimizer.kind(), "adamw");
  EXPECT_EQ(r.optimizer.beta2(), 0.95);
  EXPECT_EQ(r.optimizer.lr(), 3e-4);
  EXPECT_EQ(r.globalBatch, 16);
  EXPECT_EQ(r.dataWindows, 112);
  EXPECT_EQ(r.seed, 99u);
  EXPECT_EQ(r.lr, 2.5e-4);
  EXPECT_EQ(r.planSummary, m.planSummary);
  ASSERT_EQ(r.params.size(), 1u);
  EXPECT_EQ(r.params[0].name, "layer 0/w%");
  EXPECT_EQ(r.params[0].shape, (std::vector<int64_t>{6, 4}));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].bytes, 1234);
}

TEST(CheckpointFormat, HalfWrittenManifestIsRefused) {
  TempDir tmp;
  std::string dir = tmp;
  ASSERT_FALSE(dir.empty());
  std::string text = formatManifest(sample());
  writeText(dir + "/manifest", text.substr(0, text.size() - 4));
  try {
    readManifest(dir + "/manifest");
    FAIL() << "a manifest without 'end' was accepted";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("half-written"), std::string::npos)
        << e.what();
  }
}

/// Any 64-bit seed comes back; a window count no run reaches (it would
/// overflow the data position) is refused as damage.
TEST(CheckpointFormat, LargeSeedKeptHugeCountRefused) {
  TempDir tmp;
  std::string dir = tmp;
  ASSERT_FALSE(dir.empty());
  Manifest m = sample();
  m.seed = 18000000000000000000ull;
  writeText(dir + "/manifest", formatManifest(m));
  EXPECT_EQ(readManifest(dir + "/manifest").seed, m.seed);
  m.dataWindows = int64_t(1) << 62;
  writeText(dir + "/manifest", formatManifest(m));
  try {
    readManifest(dir + "/manifest");
    FAIL() << "data_windows 2^62 was accepted";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("'data_windows': bad number"),
              std::string::npos)
        << e.what();
  }
}

TEST(CheckpointFormat, ShardsComeBackWholeAndCutAnotherWay) {
  TempDir tmp;
  std::string dir = tmp, step = dir + "/step-00000007";
  ASSERT_FALSE(dir.empty());
  ASSERT_EQ(::mkdir(step.c_str(), 0755), 0);
  Manifest m = sample();
  m.params.push_back({"qkv", {6, 4}, 2});
  // A fused weight cut in 3 blocks of dim 0, 2 parts each: part p holds
  // rows p, p + 2, p + 4.
  for (int part = 0; part < 2; ++part) {
    std::vector<float> v[3];
    for (int k = 0; k < 3; ++k)
      for (int i = part; i < 6; i += 2)
        for (int j = 0; j < 4; ++j)
          v[k].push_back(at(k, i, j));
    std::string name = "rank-" + std::to_string(part) + ".bin";
    PieceWriter w(step + "/" + name, m.modelHash, m.step, part);
    PieceHeader h;
    h.name = "qkv";
    h.shape = {6, 4};
    h.dim = 0, h.parts = 2, h.blocks = 3, h.index = part;
    h.elements = 12;
    h.moments = 2;
    w.add(h, v[0].data(), v[1].data(), v[2].data());
    w.commit();
    m.files.push_back({name, w.bytes(), 1});
  }
  writeText(step + "/manifest", formatManifest(m));

  StoredCheckpoint c(step);
  std::vector<float> value, m1, m2;
  c.load("qkv", {6, 4}, Slice{}, value, m1, m2);
  ASSERT_EQ(value.size(), 24u);
  ASSERT_EQ(m2.size(), 24u);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(value[i * 4 + j], at(0, i, j));
      EXPECT_EQ(m1[i * 4 + j], at(1, i, j));
      EXPECT_EQ(m2[i * 4 + j], at(2, i, j));
    }
  // The stored cut itself.
  c.load("qkv", {6, 4}, Slice{0, 2, 3, 1}, value, m1, m2);
  ASSERT_EQ(value.size(), 12u);
  EXPECT_EQ(value[0], at(0, 1, 0));
  EXPECT_EQ(value[4], at(0, 3, 0));
  // Columns 2-3 (dim 1, 2 parts): another plan's TP layout.
  c.load("qkv", {6, 4}, Slice{1, 2, 1, 1}, value, m1, m2);
  ASSERT_EQ(value.size(), 12u);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(m2[i * 2 + j], at(2, i, j + 2));
  // The shape must be the model's.
  EXPECT_THROW(c.load("qkv", {4, 6}, Slice{}, value, m1, m2), RuntimeError);
  EXPECT_THROW(c.load("missing", {6, 4}, Slice{}, value, m1, m2),
               RuntimeError);

  // One flipped bit in rank 1's values: its checksum fails.
  std::string r1 = step + "/rank-1.bin";
  std::fstream f(r1, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(-10, std::ios::end);
  char b = 0;
  f.read(&b, 1);
  f.seekp(-10, std::ios::end);
  b ^= 4;
  f.write(&b, 1);
  f.close();
  try {
    c.load("qkv", {6, 4}, Slice{}, value, m1, m2);
    FAIL() << "a damaged piece was read";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("fails its checksum"),
              std::string::npos)
        << e.what();
  }
}

TEST(CheckpointFormat, ScanFindsNewestCompleteStep) {
  TempDir tmp;
  std::string dir = tmp;
  ASSERT_FALSE(dir.empty());
  for (const char *d : {"/step-00000002", "/step-00000005.tmp",
                        "/step-00000006", "/step-00000001"})
    ASSERT_EQ(::mkdir((dir + d).c_str(), 0755), 0);
  writeText(dir + "/step-00000001/manifest", formatManifest(sample()));
  writeText(dir + "/step-00000002/manifest", formatManifest(sample()));
  CheckpointScan s = scanCheckpoints(dir);
  EXPECT_EQ(s.step, 2);
  EXPECT_EQ(s.path, dir + "/step-00000002");
  ASSERT_EQ(s.halfWritten.size(), 2u);
  EXPECT_EQ(s.halfWritten[0], dir + "/step-00000005.tmp");
  EXPECT_EQ(s.halfWritten[1], dir + "/step-00000006");
  EXPECT_EQ(scanCheckpoints(dir + "/none").step, 0);
  // A crash while step 2 was being replaced: its complete .old copy is
  // the newest; beside a complete step-2 it is ignored.
  ASSERT_EQ(::mkdir((dir + "/step-00000003.old").c_str(), 0755), 0);
  writeText(dir + "/step-00000003.old/manifest", formatManifest(sample()));
  EXPECT_EQ(scanCheckpoints(dir).path, dir + "/step-00000003.old");
  ASSERT_EQ(::mkdir((dir + "/step-00000003").c_str(), 0755), 0);
  writeText(dir + "/step-00000003/manifest", formatManifest(sample()));
  EXPECT_EQ(scanCheckpoints(dir).path, dir + "/step-00000003");
}
