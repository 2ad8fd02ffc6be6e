//===- CachingAllocator.h - device memory bookkeeping, no CUDA --*- C++ -*-===//
//
// The CUDA backend's caching allocator, as pure bookkeeping over address
// ranges: segments come from a SegmentSource (cudaMalloc on a GPU, a fake
// address space in the unit tests), blocks are carved out of them, freed
// blocks are kept and reused instead of going back to cudaFree (which
// synchronises the device). The peak of bytes in use is what the plan's
// predicted_peak_bytes is checked against each step.
//
// Why a class of its own: every decision (rounding, which cached block a
// request takes, when a block is split, what an out-of-memory error says)
// is testable on a machine without a GPU.
//
// Rules:
//  - sizes round up to 512 bytes (cuBLAS and vector loads want alignment);
//  - requests of at most 1 MiB come from 2 MiB segments ("small" pool),
//    larger ones from segments of their size rounded up to 2 MiB ("large");
//  - a request takes the smallest cached free block of its pool and stream
//    that fits (best fit, lowest address on ties); the rest is split off
//    when it is at least 512 bytes (small) or more than 1 MiB (large);
//  - freed blocks merge with free neighbours of the same segment;
//  - blocks belong to a stream: work on one stream is ordered, so a block
//    freed there can be reused there at once. A block another stream still
//    uses is freed with freeAfter(event): it is reused only once
//    reclaim() has seen that event complete;
//  - when no segment can be had, fully free cached segments are returned
//    to the source and the request is retried once before failing.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_HOST_CACHINGALLOCATOR_H
#define FRENZY_RUNTIME_CUDA_HOST_CACHINGALLOCATOR_H

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace frenzy::rt::cuda {

/// Where segments come from. reserve returns 0 when the device has no
/// room; freeBytes is what the device says is free (for messages).
struct SegmentSource {
  virtual ~SegmentSource() = default;
  virtual uint64_t reserve(int64_t bytes) = 0;
  virtual void release(uint64_t address, int64_t bytes) = 0;
  virtual int64_t freeBytes() const = 0;
};

/// Out of device memory: the message says by how much the plan's
/// prediction was wrong.
struct OutOfDeviceMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct AllocatorStats {
  int64_t inUse = 0;         // bytes of blocks handed out (rounded sizes)
  int64_t reserved = 0;      // bytes of segments held
  int64_t peakInUse = 0;     // high-water mark of inUse since construction
  int64_t stepPeakInUse = 0; // ... since the last beginStep()
  int64_t peakReserved = 0;
  int64_t segments = 0, allocations = 0, cacheHits = 0, splits = 0;
  int64_t segmentsReleased = 0;
};

class CachingAllocator {
public:
  static constexpr int64_t kRound = 512;
  static constexpr int64_t kSmallLimit = 1 << 20;  // 1 MiB
  static constexpr int64_t kSmallSegment = 2 << 20; // 2 MiB
  static constexpr int64_t kLargeRound = 2 << 20;

  /// `rank` and `predictedPeak` (the plan's predicted_peak_bytes less its
  /// context_bytes; 0: none) only go into messages.
  CachingAllocator(SegmentSource &source, int rank, int64_t predictedPeak);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator &) = delete;
  CachingAllocator &operator=(const CachingAllocator &) = delete;

  static int64_t roundSize(int64_t bytes);

  /// A block of at least `bytes` for work on `stream` (an opaque id); what
  /// is for names the tensor in an out-of-memory message. Throws
  /// OutOfDeviceMemory.
  uint64_t allocate(int64_t bytes, int stream, const std::string &what);
  /// Returns a block for reuse on its own stream at once.
  void free(uint64_t address);
  /// Returns a block that is reusable only once `event` has completed.
  void freeAfter(uint64_t address, uint64_t event);
  /// Makes the blocks whose events `done` says have completed reusable;
  /// returns how many.
  int reclaim(const std::function<bool(uint64_t event)> &done);
  /// Gives every fully free segment back to the source.
  void releaseCached();

  void beginStep() { st.stepPeakInUse = st.inUse; }
  const AllocatorStats &stats() const { return st; }
  /// The usable size of a live block.
  int64_t blockSize(uint64_t address) const;
  int pendingFrees() const { return int(pending.size()); }

  /// One line: this step's peak against the prediction, e.g.
  /// "rank 0: device memory peak 1.50 GiB in use (+0.50 GiB context) vs
  /// predicted 2.10 GiB: 4.8% under".
  static std::string peakReport(int rank, int64_t peakInUse,
                                int64_t contextBytes, int64_t predicted);

private:
  struct Block {
    uint64_t addr = 0;
    int64_t size = 0;
    uint64_t segment = 0; // address of its segment
    bool small = false, free = false;
    int stream = 0;
    Block *prev = nullptr, *next = nullptr; // neighbours in the segment
  };
  struct BySize {
    bool operator()(const Block *a, const Block *b) const;
  };
  struct Pool {
    std::set<Block *, BySize> free;
  };
  Pool &pool(bool small, int stream);
  Block *takeFromPool(Pool &p, int64_t size);
  Block *newSegment(int64_t size, bool small, int stream);
  void split(Block *b, int64_t size, Pool &p);
  void release(Block *b);
  [[noreturn]] void outOfMemory(int64_t size, const std::string &what) const;

  SegmentSource &source;
  int rank;
  int64_t predictedPeak;
  std::map<uint64_t, Block *> live;          // by address
  std::map<uint64_t, Block *> segmentHeads;  // first block, by segment
  std::map<std::pair<bool, int>, Pool> pools; // by (small, stream)
  std::multimap<uint64_t, Block *> pending;  // freeAfter: by event
  AllocatorStats st;
};

} // namespace frenzy::rt::cuda

#endif
