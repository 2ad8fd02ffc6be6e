//===- CachingAllocatorTest.cpp - the CUDA allocator's bookkeeping --------===//
#include "CachingAllocator.h"

#include <gtest/gtest.h>

#include <map>

using namespace frenzy::rt::cuda;

namespace {

/// A device of `capacity` bytes: segments at increasing addresses.
struct FakeDevice : SegmentSource {
  explicit FakeDevice(int64_t capacity) : capacity(capacity) {}
  uint64_t reserve(int64_t bytes) override {
    if (used + bytes > capacity)
      return 0;
    used += bytes;
    uint64_t a = next;
    next += uint64_t(bytes) + 4096;
    segments[a] = bytes;
    ++reserves;
    return a;
  }
  void release(uint64_t address, int64_t bytes) override {
    ASSERT_EQ(segments.count(address), 1u);
    ASSERT_EQ(segments[address], bytes);
    segments.erase(address);
    used -= bytes;
  }
  int64_t freeBytes() const override { return capacity - used; }
  int64_t capacity, used = 0;
  uint64_t next = 1 << 20;
  int reserves = 0;
  std::map<uint64_t, int64_t> segments;
};

constexpr int64_t MiB = 1 << 20;

TEST(CachingAllocator, RoundsToSizeClasses) {
  EXPECT_EQ(CachingAllocator::roundSize(1), 512);
  EXPECT_EQ(CachingAllocator::roundSize(512), 512);
  EXPECT_EQ(CachingAllocator::roundSize(513), 1024);
  EXPECT_EQ(CachingAllocator::roundSize(0), 512);
  FakeDevice dev(1 << 30);
  CachingAllocator a(dev, 0, 0);
  // Small requests share one 2 MiB segment; a large one gets its own,
  // rounded up to 2 MiB.
  a.allocate(1000, 0, "x");
  a.allocate(MiB, 0, "y");
  EXPECT_EQ(a.stats().segments, 1);
  EXPECT_EQ(a.stats().reserved, 2 * MiB);
  uint64_t z = a.allocate(3 * MiB, 0, "z");
  EXPECT_EQ(a.stats().segments, 2);
  EXPECT_EQ(a.stats().reserved, 2 * MiB + 4 * MiB);
  // The 1 MiB left of the 4 MiB segment is not worth a split (large pool:
  // more than 1 MiB), so the 3 MiB request holds all 4 MiB.
  EXPECT_EQ(a.blockSize(z), 4 * MiB);
  EXPECT_EQ(a.stats().inUse, 1024 + MiB + 4 * MiB);
}

TEST(CachingAllocator, ReusesFreedBlocksWithoutNewSegments) {
  FakeDevice dev(1 << 30);
  CachingAllocator a(dev, 0, 0);
  uint64_t p = a.allocate(8 * MiB, 0, "act");
  a.free(p);
  EXPECT_EQ(a.stats().inUse, 0);
  uint64_t q = a.allocate(8 * MiB, 0, "act");
  EXPECT_EQ(q, p);
  EXPECT_EQ(dev.reserves, 1);
  EXPECT_EQ(a.stats().cacheHits, 1);
  // A step that allocates the same sizes again reaches no new segment.
  a.free(q);
  for (int step = 0; step < 3; ++step) {
    uint64_t x = a.allocate(3 * MiB, 0, "a"), y = a.allocate(MiB / 2, 0, "b");
    a.free(x);
    a.free(y);
  }
  EXPECT_EQ(dev.reserves, 2); // the 8 MiB segment and one small one
}

TEST(CachingAllocator, SplitsAndMergesBlocks) {
  FakeDevice dev(1 << 30);
  CachingAllocator a(dev, 0, 0);
  uint64_t big = a.allocate(16 * MiB, 0, "big");
  a.free(big);
  // 4 MiB out of the cached 16 MiB: split, the 12 MiB rest stays cached.
  uint64_t p = a.allocate(4 * MiB, 0, "p");
  EXPECT_EQ(p, big);
  EXPECT_EQ(a.stats().splits, 1);
  uint64_t q = a.allocate(12 * MiB, 0, "q");
  EXPECT_EQ(q, big + 4 * MiB);
  EXPECT_EQ(dev.reserves, 1);
  a.free(p);
  a.free(q);
  // Merged again: the whole 16 MiB is one block.
  uint64_t r = a.allocate(16 * MiB, 0, "r");
  EXPECT_EQ(r, big);
  EXPECT_EQ(a.blockSize(r), 16 * MiB);
  // A remainder of at most 1 MiB in the large pool is not split off.
  a.free(r);
  uint64_t s = a.allocate(15 * MiB + MiB / 2, 0, "s");
  EXPECT_EQ(a.blockSize(s), 16 * MiB);
}

TEST(CachingAllocator, BestFitTakesTheSmallestBlockThatFits) {
  FakeDevice dev(1 << 30);
  CachingAllocator a(dev, 0, 0);
  uint64_t x = a.allocate(20 * MiB, 0, "x"), y = a.allocate(6 * MiB, 0, "y");
  a.free(x);
  a.free(y);
  EXPECT_EQ(a.allocate(5 * MiB, 0, "z"), y);
}

TEST(CachingAllocator, StreamsHaveTheirOwnPools) {
  FakeDevice dev(1 << 30);
  CachingAllocator a(dev, 0, 0);
  uint64_t p = a.allocate(4 * MiB, 1, "recv");
  a.free(p);
  // Another stream never takes it (its work is not ordered after).
  uint64_t q = a.allocate(4 * MiB, 0, "act");
  EXPECT_NE(q, p);
  EXPECT_EQ(a.allocate(4 * MiB, 1, "recv"), p);
}

TEST(CachingAllocator, FreeAfterWaitsForTheEvent) {
  FakeDevice dev(1 << 30);
  CachingAllocator a(dev, 0, 0);
  uint64_t p = a.allocate(4 * MiB, 0, "sent");
  a.freeAfter(p, 7);
  EXPECT_EQ(a.pendingFrees(), 1);
  EXPECT_EQ(a.stats().inUse, 4 * MiB); // still in use until the event
  uint64_t q = a.allocate(4 * MiB, 0, "next");
  EXPECT_NE(q, p);
  EXPECT_EQ(a.reclaim([](uint64_t e) { return e != 7; }), 0);
  EXPECT_EQ(a.reclaim([](uint64_t e) { return e == 7; }), 1);
  EXPECT_EQ(a.pendingFrees(), 0);
  EXPECT_EQ(a.allocate(4 * MiB, 0, "again"), p);
}

TEST(CachingAllocator, PeakAccountingPerStepAndOverall) {
  FakeDevice dev(1 << 30);
  CachingAllocator a(dev, 0, 0);
  uint64_t w = a.allocate(10 * MiB, 0, "weights");
  uint64_t t = a.allocate(30 * MiB, 0, "activations");
  a.free(t);
  EXPECT_EQ(a.stats().peakInUse, 40 * MiB);
  a.beginStep();
  EXPECT_EQ(a.stats().stepPeakInUse, 10 * MiB);
  uint64_t u = a.allocate(4 * MiB, 0, "smaller");
  EXPECT_EQ(a.stats().stepPeakInUse, 14 * MiB);
  EXPECT_EQ(a.stats().peakInUse, 40 * MiB);
  a.free(u);
  a.free(w);
  EXPECT_EQ(a.stats().inUse, 0);
}

TEST(CachingAllocator, ReleasesCachedSegmentsBeforeGivingUp) {
  FakeDevice dev(40 * MiB);
  CachingAllocator a(dev, 0, 0);
  uint64_t p = a.allocate(30 * MiB, 0, "old");
  a.free(p);
  // 35 MiB does not fit the cached 30 MiB, nor beside it on the device:
  // the cached segment goes back and the request is retried.
  a.allocate(35 * MiB, 0, "new");
  EXPECT_EQ(a.stats().segmentsReleased, 1);
  EXPECT_EQ(a.stats().reserved, 36 * MiB);
}

TEST(CachingAllocator, OutOfMemorySaysByHowMuchThePredictionWasWrong) {
  FakeDevice dev(100 * MiB);
  CachingAllocator a(dev, 3, 80 * MiB);
  a.allocate(90 * MiB, 0, "weights");
  try {
    a.allocate(20 * MiB, 0, "tensor 'h1' f32[4,1280,1024]");
    FAIL() << "no error";
  } catch (const OutOfDeviceMemory &e) {
    std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos);
    EXPECT_NE(m.find("rank 3: out of device memory allocating 20.00 MiB for "
                     "tensor 'h1' f32[4,1280,1024]"),
              std::string::npos)
        << m;
    // 90 + 20 = 110 MiB needed against 80 MiB predicted: 30 MiB, 37.5%.
    EXPECT_NE(m.find("the prediction is low by at least 30.00 MiB (37.5%)"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("device reports 10.00 MiB free"), std::string::npos) << m;
  }
}

TEST(CachingAllocator, PeakReportComparesWithThePrediction) {
  std::string r =
      CachingAllocator::peakReport(1, 900 * MiB, 100 * MiB, 1000 * MiB);
  EXPECT_EQ(r, "rank 1: device memory peak 900.00 MiB in use (+100.00 MiB "
               "context) vs predicted 1000.00 MiB: 0.0% under");
  r = CachingAllocator::peakReport(0, int64_t(3) << 30, 0, int64_t(2) << 30);
  EXPECT_NE(r.find("50.0% over"), std::string::npos) << r;
}

TEST(CachingAllocator, GivesEverySegmentBackAtTheEnd) {
  FakeDevice dev(1 << 30);
  {
    CachingAllocator a(dev, 0, 0);
    a.allocate(5 * MiB, 0, "a");
    uint64_t b = a.allocate(100, 1, "b");
    a.freeAfter(b, 1);
  }
  EXPECT_TRUE(dev.segments.empty());
  EXPECT_EQ(dev.used, 0);
}

} // namespace
