//===- RangeMaxTest.cpp - the sparse-table range maximum ------------------===//
//
// Every (first, last) range of random arrays of many lengths against a
// direct scan: the power-of-two boundaries are where an off-by-one hides.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Support/RangeMax.h"

#include <gtest/gtest.h>

#include <random>

using frenzy::RangeMax;

TEST(RangeMax, EveryRangeMatchesAScan) {
  std::mt19937_64 rng(7);
  for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 64}) {
    std::vector<int64_t> v(n);
    for (int64_t &x : v)
      x = int64_t(rng() % 1000) - 500;
    RangeMax t(v);
    ASSERT_EQ(t.size(), n);
    for (int a = 0; a < n; ++a)
      for (int b = a; b < n; ++b)
        EXPECT_EQ(t.max(a, b), *std::max_element(v.begin() + a, v.begin() + b + 1))
            << "n=" << n << " range [" << a << ", " << b << "]";
  }
}

TEST(RangeMax, EmptyTableHasNoRanges) { EXPECT_EQ(RangeMax().size(), 0); }
