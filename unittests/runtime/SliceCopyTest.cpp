//===- SliceCopyTest.cpp - copySlice and its strided-copy geometry --------===//
//
// The DP pieces of a split gradient are copied by copySlice on the CPU and
// by one cudaMemcpy2DAsync with sliceCopy's geometry on CUDA (CudaBackend),
// which cannot run here: both are checked against an index-by-index
// reference of what a piece is (slice `index` of `count` along `dim`,
// separately in each of `blocks` blocks of that dim).
//
//===----------------------------------------------------------------------===//
#include "Executor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

using namespace frenzy::rt;

namespace {

struct Case {
  std::vector<int64_t> shape;
  int64_t dim, blocks, count;
};

/// The piece's elements in order, by their index in the full tensor.
std::vector<float> reference(const Case &c, int64_t index,
                             const std::vector<float> &full) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < c.dim; ++d)
    outer *= c.shape[size_t(d)];
  for (size_t d = size_t(c.dim) + 1; d < c.shape.size(); ++d)
    inner *= c.shape[d];
  int64_t len = c.shape[size_t(c.dim)], perBlock = len / c.blocks,
          n = perBlock / c.count;
  std::vector<float> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t b = 0; b < c.blocks; ++b)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i)
          out.push_back(full[size_t(
              (o * len + b * perBlock + index * n + j) * inner + i)]);
  return out;
}

/// What cudaMemcpy2D does with a SliceCopy, on host memory.
void copy2D(const SliceCopy &s, const uint8_t *full, uint8_t *part) {
  for (size_t r = 0; r < s.rows; ++r)
    std::memcpy(part + r * s.width, full + s.fullOffset + r * s.fullPitch,
                s.width);
}

TEST(SliceCopyTest, PiecesMatchTheReference) {
  const Case cases[] = {{{12}, 0, 1, 3},       {{4, 6}, 1, 1, 2},
                        {{4, 6}, 0, 2, 2},     {{2, 12, 3}, 1, 3, 2},
                        {{6, 4, 2}, 0, 1, 6},  {{3, 8}, 1, 2, 4}};
  for (const Case &c : cases) {
    int64_t total = 1;
    for (int64_t d : c.shape)
      total *= d;
    std::vector<float> full(static_cast<size_t>(total));
    std::iota(full.begin(), full.end(), 1.0f);
    for (int64_t index = 0; index < c.count; ++index) {
      std::vector<float> want = reference(c, index, full);
      std::vector<float> got(want.size(), -1), got2D(want.size(), -1);
      copySlice(c.shape, 4, c.dim, c.blocks, index, c.count,
                reinterpret_cast<uint8_t *>(full.data()),
                reinterpret_cast<uint8_t *>(got.data()), false);
      EXPECT_EQ(got, want) << "dim " << c.dim << " index " << index;
      copy2D(sliceCopy(c.shape, 4, c.dim, c.blocks, index, c.count),
             reinterpret_cast<const uint8_t *>(full.data()),
             reinterpret_cast<uint8_t *>(got2D.data()));
      EXPECT_EQ(got2D, want) << "dim " << c.dim << " index " << index;
      // Back into a zeroed tensor: exactly the piece's elements return.
      std::vector<float> back(full.size(), 0);
      copySlice(c.shape, 4, c.dim, c.blocks, index, c.count,
                reinterpret_cast<uint8_t *>(back.data()),
                reinterpret_cast<uint8_t *>(got.data()), true);
      int64_t nonzero = 0;
      for (size_t k = 0; k < back.size(); ++k)
        if (back[k] != 0) {
          ++nonzero;
          EXPECT_EQ(back[k], full[k]);
        }
      EXPECT_EQ(nonzero, int64_t(want.size()));
    }
  }
}

TEST(SliceCopyTest, UnevenSplitThrows) {
  EXPECT_THROW(sliceCopy({10}, 4, 0, 1, 0, 3), RuntimeError);
  EXPECT_THROW(sliceCopy({4, 6}, 4, 1, 4, 0, 2), RuntimeError);
}

} // namespace
