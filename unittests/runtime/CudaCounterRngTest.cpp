//===- CudaCounterRngTest.cpp - CUDA kernels' host/device helpers on CPU --===//
//
// runtime/cuda/kernels/CounterRng.h is compiled for the GPU kernels and for
// the host; here its host side is checked against the CPU backend's own
// dropout stream (cpu::dropoutUniform, cpu::dropoutF32), the attention
// dropout's head numbering (cpu::AttentionConfig::globalHead), and the
// float -> bf16 / fp16 roundings against independent references (nearest
// neighbour by exact double arithmetic; the compiler's _Float16).
// No GPU is needed: the same header code runs on the device.
//
//===----------------------------------------------------------------------===//
#include "CounterRng.h"
#include "Kernels.h"
#include "TensorOps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace frenzy;
namespace rng = frenzy::cuda::rng;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(CudaCounterRng, UniformEqualsTheCpuStream) {
  std::mt19937_64 gen(7);
  for (int s = 0; s < 64; ++s) {
    uint64_t seed = gen();
    for (uint64_t i = 0; i < 2000; ++i) {
      uint64_t idx = s % 2 ? i : gen(); // dense and scattered counters
      float a = rng::uniform(seed, idx), b = cpu::dropoutUniform(seed, idx);
      ASSERT_EQ(bitsOf(a), bitsOf(b)) << "seed " << seed << " index " << idx;
      ASSERT_GE(a, 0.0f);
      ASSERT_LT(a, 1.0f);
    }
  }
}

TEST(CudaCounterRng, DropMaskEqualsCpuDropout) {
  // The CPU kernel's output reveals its mask: with input 1, dropped
  // elements are 0 and kept ones 1 / (1 - p).
  const int64_t n = 4096;
  std::vector<float> ones(n, 1.0f), out(n);
  for (float ratio : {0.1f, 0.5f, 0.9f}) {
    for (uint64_t first : {uint64_t(0), uint64_t(123456789)}) {
      const uint64_t seed = 0xfeedbeefull + uint64_t(ratio * 100) + first;
      cpu::dropoutF32(out.data(), ones.data(), n, ratio, seed, first);
      int64_t dropped = 0;
      for (int64_t i = 0; i < n; ++i) {
        bool d = rng::dropped(seed, first + uint64_t(i), ratio);
        ASSERT_EQ(d, out[i] == 0.0f) << "element " << i << " ratio " << ratio;
        dropped += d;
      }
      // The stream is not degenerate: the drop rate is near the ratio.
      EXPECT_NEAR(double(dropped) / n, ratio, 0.05);
    }
  }
}

TEST(CudaCounterRng, GlobalHeadEqualsAttentionConfig) {
  cpu::AttentionConfig c;
  for (int64_t local : {1, 3, 4})
    for (int64_t parts : {1, 2})
      for (int64_t rank = 0; rank < parts; ++rank)
        for (int64_t first : {0, 5}) {
          c.headsLocal = local;
          c.headsTotal = local * parts;
          c.headStart = rank * local;
          c.firstRow = first;
          for (int64_t bh = 0; bh < 4 * local; ++bh)
            ASSERT_EQ(rng::globalHead(bh, c.headsLocal, c.headsTotal,
                                      c.headStart, c.firstRow),
                      c.globalHead(bh));
        }
  // Element numbering: (head * Tq + i) * Tk + j, row-major over the batch.
  EXPECT_EQ(rng::attentionElement(2, 5, 7, 3, 4), uint64_t((2 * 5 + 3) * 7 + 4));
}

/// The bf16 nearest to f by exact arithmetic, ties to the even mantissa.
uint16_t bf16Reference(float f) {
  uint32_t u = bitsOf(f);
  uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
  double dl = std::fabs(double(f) - double(floatOf(lo)));
  double dh = std::fabs(double(floatOf(hi)) - double(f));
  if ((hi & 0x7f800000u) == 0x7f800000u && (lo & 0x7f800000u) != 0x7f800000u)
    dh = double(std::numeric_limits<float>::max()) - std::fabs(double(f)) +
         std::ldexp(1.0, 104); // 2^128 - f: past the largest bf16 is inf
  if (dl < dh || (dl == dh && !((lo >> 16) & 1u)))
    return uint16_t(lo >> 16);
  return uint16_t(hi >> 16);
}

TEST(CudaCounterRng, Bf16RoundsToNearestEven) {
  std::mt19937 gen(11);
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = gen();
    if ((u & 0x7f800000u) == 0x7f800000u)
      continue; // inf and NaN below
    float f = floatOf(u);
    ASSERT_EQ(rng::floatToBf16Bits(f), bf16Reference(f)) << std::hexfloat << f;
    // Round trip of a representable value is exact.
    float b = rng::bf16BitsToFloat(rng::floatToBf16Bits(f));
    ASSERT_EQ(bitsOf(rng::bf16BitsToFloat(rng::floatToBf16Bits(b))), bitsOf(b));
  }
  // Exact ties: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7; even is 1.
  EXPECT_EQ(rng::floatToBf16Bits(1.00390625f), 0x3f80);
  EXPECT_EQ(rng::floatToBf16Bits(1.01171875f), 0x3f82); // odd neighbour up
  EXPECT_TRUE(std::isnan(rng::bf16BitsToFloat(
      rng::floatToBf16Bits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(rng::floatToBf16Bits(std::numeric_limits<float>::infinity()),
            0x7f80);
}

TEST(CudaCounterRng, HalfMatchesTheCompilersFloat16) {
  std::mt19937 gen(13);
  auto check = [](float f) {
    _Float16 h = static_cast<_Float16>(f);
    uint16_t ref;
    std::memcpy(&ref, &h, 2);
    uint16_t got = rng::floatToHalfBits(f);
    if (std::isnan(f))
      ASSERT_TRUE(std::isnan(rng::halfBitsToFloat(got)));
    else
      ASSERT_EQ(got, ref) << std::hexfloat << f;
    ASSERT_EQ(bitsOf(rng::halfBitsToFloat(ref)), bitsOf(float(h)))
        << "half bits " << ref;
  };
  for (int i = 0; i < 200000; ++i) {
    // Exponents around half's range (subnormals, overflow) and beyond.
    float f = std::ldexp(float(gen() % 100000) / 100000.0f + 0.5f,
                         int(gen() % 50) - 30);
    check(gen() % 2 ? f : -f);
  }
  for (uint32_t h = 0; h < 0x10000u; ++h) { // every half value round-trips
    float f = rng::halfBitsToFloat(uint16_t(h));
    if (!std::isnan(f))
      ASSERT_EQ(rng::floatToHalfBits(f), uint16_t(h)) << h;
  }
  check(65504.0f);
  check(65520.0f); // the tie to infinity
  check(std::ldexp(1.0f, -25));
  check(std::ldexp(1.5f, -25));
  check(std::numeric_limits<float>::infinity());
  check(std::numeric_limits<float>::quiet_NaN());
}

} // namespace
