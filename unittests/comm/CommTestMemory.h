//===- CommTestMemory.h - where a Comm test case's buffers live -*- C++ -*-===//
//
// The cases of CommTest.cpp fill and check host vectors; a transport whose
// buffers live on the device (NCCL) mirrors them there. Host transports
// use the vectors themselves (no copies, so a case checks exactly the
// buffer the transport saw).
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_UNITTESTS_COMM_COMMTESTMEMORY_H
#define FRENZY_UNITTESTS_COMM_COMMTESTMEMORY_H

#include "Comm.h"

#include <memory>
#include <string>
#include <vector>

namespace frenzy::rt {

class Memory {
public:
  virtual ~Memory() = default;
  /// The transport's buffer of `bytes`; null: the host vector is it.
  virtual void *alloc(int64_t bytes) { return nullptr; }
  virtual void release(void *p) {}
  /// Copies in the order of the transport's work (the device's compute
  /// stream), waiting until done.
  virtual void toComm(void *dst, const void *src, int64_t bytes) {}
  virtual void fromComm(void *dst, const void *src, int64_t bytes) {}
};

class HostMemory final : public Memory {};

template <class T> class Buf {
public:
  Buf(Memory &m, size_t n, T init = T()) : m(&m), h(n, init) {
    d = m.alloc(bytes());
    push();
  }
  Buf(Buf &&o) noexcept : m(o.m), h(std::move(o.h)), d(o.d) { o.d = nullptr; }
  Buf(const Buf &) = delete;
  ~Buf() {
    if (d)
      m->release(d);
  }
  T *ptr() { return d ? static_cast<T *>(d) : h.data(); }
  std::vector<T> &host() { return h; }
  /// After changing host(): the transport's buffer gets it.
  void push() {
    if (d)
      m->toComm(d, h.data(), bytes());
  }
  /// The transport's buffer, in host().
  std::vector<T> &pull() {
    if (d)
      m->fromComm(h.data(), d, bytes());
    return h;
  }
  int64_t bytes() const { return int64_t(h.size() * sizeof(T)); }

private:
  Memory *m;
  std::vector<T> h;
  void *d = nullptr;
};

/// The NCCL transport and its device memory; comm null when this machine
/// has none (`why`).
struct NcclTransport {
  std::shared_ptr<void> keep; // what the transport needs alive (the GPU)
  std::unique_ptr<Comm> comm;
  std::unique_ptr<Memory> memory;
  std::string why;
  NcclTransport() = default;
  NcclTransport(NcclTransport &&) = default; // members die comm first
  NcclTransport &operator=(NcclTransport &&o) {
    comm = std::move(o.comm); // before the context it runs on
    memory = std::move(o.memory);
    keep = std::move(o.keep);
    why = std::move(o.why);
    return *this;
  }
};

/// Collective over `host`'s ranks.
NcclTransport makeNcclTransport(Comm &host);

} // namespace frenzy::rt

#endif
