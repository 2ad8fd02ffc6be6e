//===- CachingAllocator.cpp - device memory bookkeeping, no CUDA ----------===//
#include "CachingAllocator.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

using namespace frenzy::rt::cuda;

namespace {

std::string gib(int64_t bytes) {
  char buf[48];
  double v = double(bytes);
  if (std::fabs(v) >= double(1 << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / double(1 << 30));
  else
    std::snprintf(buf, sizeof buf, "%.2f MiB", v / double(1 << 20));
  return buf;
}

int64_t roundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

} // namespace

bool CachingAllocator::BySize::operator()(const Block *a,
                                          const Block *b) const {
  if (a->size != b->size)
    return a->size < b->size;
  return a->addr < b->addr;
}

CachingAllocator::CachingAllocator(SegmentSource &source, int rank,
                                   int64_t predictedPeak)
    : source(source), rank(rank), predictedPeak(predictedPeak) {}

CachingAllocator::~CachingAllocator() {
  for (auto &[addr, head] : segmentHeads) {
    int64_t size = 0;
    for (Block *b = head; b;) {
      Block *next = b->next;
      size += b->size;
      delete b;
      b = next;
    }
    source.release(addr, size);
  }
}

int64_t CachingAllocator::roundSize(int64_t bytes) {
  return roundUp(std::max<int64_t>(bytes, 1), kRound);
}

CachingAllocator::Pool &CachingAllocator::pool(bool small, int stream) {
  return pools[{small, stream}];
}

CachingAllocator::Block *CachingAllocator::takeFromPool(Pool &p,
                                                        int64_t size) {
  Block key;
  key.size = size;
  key.addr = 0;
  auto it = p.free.lower_bound(&key);
  if (it == p.free.end())
    return nullptr;
  Block *b = *it;
  p.free.erase(it);
  return b;
}

CachingAllocator::Block *CachingAllocator::newSegment(int64_t size, bool small,
                                                      int stream) {
  int64_t segSize = small ? kSmallSegment : roundUp(size, kLargeRound);
  uint64_t addr = source.reserve(segSize);
  if (!addr) {
    // Cached but unused segments may be what fills the device.
    releaseCached();
    addr = source.reserve(segSize);
    if (!addr)
      return nullptr;
  }
  Block *b = new Block;
  b->addr = b->segment = addr;
  b->size = segSize;
  b->small = small;
  b->stream = stream;
  segmentHeads[addr] = b;
  ++st.segments;
  st.reserved += segSize;
  st.peakReserved = std::max(st.peakReserved, st.reserved);
  return b;
}

void CachingAllocator::split(Block *b, int64_t size, Pool &p) {
  int64_t rest = b->size - size;
  bool worth = b->small ? rest >= kRound : rest > kSmallLimit;
  if (!worth)
    return;
  Block *r = new Block;
  r->addr = b->addr + uint64_t(size);
  r->size = rest;
  r->segment = b->segment;
  r->small = b->small;
  r->stream = b->stream;
  r->free = true;
  r->prev = b;
  r->next = b->next;
  if (b->next)
    b->next->prev = r;
  b->next = r;
  b->size = size;
  p.free.insert(r);
  ++st.splits;
}

uint64_t CachingAllocator::allocate(int64_t bytes, int stream,
                                    const std::string &what) {
  int64_t size = roundSize(bytes);
  bool small = size <= kSmallLimit;
  Pool &p = pool(small, stream);
  Block *b = takeFromPool(p, size);
  if (b) {
    ++st.cacheHits;
  } else {
    b = newSegment(size, small, stream);
    if (!b)
      outOfMemory(size, what);
  }
  split(b, size, p);
  b->free = false;
  live[b->addr] = b;
  ++st.allocations;
  st.inUse += b->size;
  st.peakInUse = std::max(st.peakInUse, st.inUse);
  st.stepPeakInUse = std::max(st.stepPeakInUse, st.inUse);
  return b->addr;
}

void CachingAllocator::release(Block *b) {
  st.inUse -= b->size;
  b->free = true;
  Pool &p = pool(b->small, b->stream);
  // Merge with free neighbours (a segment serves one pool, so neighbours
  // share the stream; a pending neighbour is not free yet).
  for (Block *n : {b->prev, b->next}) {
    if (!n || !n->free || n->stream != b->stream)
      continue;
    p.free.erase(n);
    Block *lo = n == b->prev ? n : b, *hi = n == b->prev ? b : n;
    lo->size += hi->size;
    lo->next = hi->next;
    if (hi->next)
      hi->next->prev = lo;
    delete hi;
    b = lo;
  }
  p.free.insert(b);
}

void CachingAllocator::free(uint64_t address) {
  auto it = live.find(address);
  if (it == live.end())
    throw std::logic_error("CachingAllocator::free: unknown address");
  Block *b = it->second;
  live.erase(it);
  release(b);
}

void CachingAllocator::freeAfter(uint64_t address, uint64_t event) {
  auto it = live.find(address);
  if (it == live.end())
    throw std::logic_error("CachingAllocator::freeAfter: unknown address");
  pending.emplace(event, it->second);
  live.erase(it);
}

int CachingAllocator::reclaim(const std::function<bool(uint64_t)> &done) {
  int n = 0;
  for (auto it = pending.begin(); it != pending.end();) {
    if (!done(it->first)) {
      ++it;
      continue;
    }
    release(it->second);
    it = pending.erase(it);
    ++n;
  }
  return n;
}

void CachingAllocator::releaseCached() {
  for (auto it = segmentHeads.begin(); it != segmentHeads.end();) {
    Block *head = it->second;
    // Fully free: one free block spanning the segment.
    if (!head->free || head->next) {
      ++it;
      continue;
    }
    pool(head->small, head->stream).free.erase(head);
    source.release(head->addr, head->size);
    st.reserved -= head->size;
    ++st.segmentsReleased;
    delete head;
    it = segmentHeads.erase(it);
  }
}

int64_t CachingAllocator::blockSize(uint64_t address) const {
  auto it = live.find(address);
  return it == live.end() ? -1 : it->second->size;
}

void CachingAllocator::outOfMemory(int64_t size, const std::string &what) const {
  int64_t needed = st.inUse + size;
  std::string msg = "rank " + std::to_string(rank) +
                    ": out of device memory allocating " + gib(size) +
                    " for " + what + " (" + gib(st.inUse) + " in use, " +
                    gib(st.reserved) + " reserved, device reports " +
                    gib(source.freeBytes()) + " free)";
  if (predictedPeak > 0) {
    msg += "; the plan predicted a peak of " + gib(predictedPeak) +
           ", this rank needs at least " + gib(needed);
    if (needed > predictedPeak) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f%%",
                    100.0 * double(needed - predictedPeak) /
                        double(predictedPeak));
      msg += ": the prediction is low by at least " +
             gib(needed - predictedPeak) + " (" + pct + ")";
    } else {
      msg += " (within the prediction: the device holds less than the "
             "plan's GPU type offers, or other processes use it)";
    }
  }
  msg += "; re-plan with a smaller micro-batch or more recomputation";
  throw OutOfDeviceMemory(msg);
}

std::string CachingAllocator::peakReport(int rank, int64_t peakInUse,
                                         int64_t contextBytes,
                                         int64_t predicted) {
  std::string s = "rank " + std::to_string(rank) + ": device memory peak " +
                  gib(peakInUse) + " in use (+" + gib(contextBytes) +
                  " context)";
  if (predicted <= 0)
    return s + ", no prediction in the plan";
  int64_t measured = peakInUse + contextBytes;
  double rel = 100.0 * double(measured - predicted) / double(predicted);
  char buf[64];
  std::snprintf(buf, sizeof buf, ": %.1f%% %s", std::fabs(rel),
                rel > 0 ? "over" : "under");
  return s + " vs predicted " + gib(predicted) + buf;
}
