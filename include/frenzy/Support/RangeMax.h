//===- RangeMax.h - constant-time maximum over an index range ---*- C++ -*-===//
//
// A sparse table: level k holds the maximum of every run of 2^k consecutive
// values, so the maximum of [first, last] is the larger of two (possibly
// overlapping) runs. The memory model and the planner's cost both ask for
// the largest per-layer transient of every candidate stage, many thousands
// of times per plan; a query must not scan the stage's layers. Header-only
// and free of MLIR, so the planner library and the analyses share it.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SUPPORT_RANGEMAX_H
#define FRENZY_SUPPORT_RANGEMAX_H

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

namespace frenzy {

class RangeMax {
public:
  RangeMax() = default;
  /// O(n log n) build over `values`.
  explicit RangeMax(std::vector<int64_t> values) {
    int64_t n = int64_t(values.size());
    levels.push_back(std::move(values));
    for (int64_t len = 2; len <= n; len *= 2) {
      const std::vector<int64_t> &prev = levels.back();
      std::vector<int64_t> next(n - len + 1);
      for (int64_t i = 0; i + len <= n; ++i)
        next[i] = std::max(prev[i], prev[i + len / 2]);
      levels.push_back(std::move(next));
    }
  }
  int64_t size() const { return levels.empty() ? 0 : int64_t(levels[0].size()); }
  /// The maximum of values[first..last] (inclusive); first <= last < size().
  int64_t max(int64_t first, int64_t last) const {
    assert(first >= 0 && first <= last && last < size());
    int64_t len = last - first + 1, k = 0;
    while ((int64_t(2) << k) <= len)
      ++k;
    return std::max(levels[k][first], levels[k][last + 1 - (int64_t(1) << k)]);
  }

private:
  std::vector<std::vector<int64_t>> levels; // [log2 run length][start]
};

} // namespace frenzy

#endif
