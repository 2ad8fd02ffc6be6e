//===- CounterRng.h - host/device bit-exact helpers -------------*- C++ -*-===//
//
// Logic the CUDA kernels must compute bit for bit as the CPU backend does,
// written once for both sides (__host__ __device__ under nvcc, plain inline
// functions under a host compiler):
//  - the counter-based dropout stream of runtime/cpu/Dropout.cpp: the keep
//    decision of element i is splitmix64(seed, i), so a GPU mask equals the
//    CPU mask for the same (seed, element index) with nothing stored;
//  - the global head index of attention dropout (cpu::AttentionConfig);
//  - float <-> bf16 / fp16 bit conversions (round to nearest even), so the
//    host test reference rounds exactly as __float2bfloat16_rn does.
// unittests/runtime/CudaCounterRngTest.cpp checks the host side against the
// CPU backend's own functions.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_CUDA_KERNELS_COUNTERRNG_H
#define FRENZY_RUNTIME_CUDA_KERNELS_COUNTERRNG_H

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define FRENZY_HD __host__ __device__ __forceinline__
#else
#define FRENZY_HD inline
#endif

namespace frenzy::cuda::rng {

/// splitmix64 of counter i under seed; the integer steps are exact on both
/// sides, and z >> 40 has 24 bits, exactly representable in a float.
FRENZY_HD uint64_t mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// cpu::dropoutUniform: a uniform number in [0, 1) with 24 random bits.
FRENZY_HD float uniform(uint64_t seed, uint64_t i) {
  return float(mix(seed, i) >> 40) * (1.0f / 16777216.0f);
}

/// True when element i is dropped at this ratio (cpu::dropoutF32's test).
FRENZY_HD bool dropped(uint64_t seed, uint64_t i, float ratio) {
  return uniform(seed, i) < ratio;
}

/// cpu::AttentionConfig::globalHead: local head bh of a micro-batch or a TP
/// rank's share of heads as its index in the whole batch's heads.
FRENZY_HD uint64_t globalHead(int64_t bh, int64_t headsLocal,
                              int64_t headsTotal, int64_t headStart,
                              int64_t firstRow) {
  return uint64_t((firstRow + bh / headsLocal) * headsTotal + headStart +
                  bh % headsLocal);
}

/// Stream index of attention-dropout element (head, i, j) (cpu Attention's
/// HeadRows::dropout): ((globalHead * Tq) + i) * Tk + j.
FRENZY_HD uint64_t attentionElement(uint64_t head, int64_t Tq, int64_t Tk,
                                    int64_t i, int64_t j) {
  return (head * uint64_t(Tq) + uint64_t(i)) * uint64_t(Tk) + uint64_t(j);
}

/// float -> bf16 bits, round to nearest even; NaN stays a (quiet) NaN.
FRENZY_HD uint16_t floatToBf16Bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

FRENZY_HD float bf16BitsToFloat(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/// float -> IEEE half bits, round to nearest even, overflow to infinity,
/// subnormals kept (as __float2half_rn).
FRENZY_HD uint16_t floatToHalfBits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN
    return uint16_t(sign | 0x7e00u);
  if (a >= 0x477ff000u) // rounds to >= 65520: infinity
    return uint16_t(sign | 0x7c00u);
  if (a < 0x38800000u) { // below 2^-14: subnormal half (or zero)
    if (a < 0x33000000u)  // below 2^-25: rounds to zero
      return uint16_t(sign);
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e; // 14..24
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u)))
      ++r;
    return uint16_t(sign | r);
  }
  uint32_t r = a - 0x38000000u; // rebias exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return uint16_t(sign | (r >> 13));
}

FRENZY_HD float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t u;
  if (e == 0x1fu) {
    u = sign | 0x7f800000u | (m << 13);
  } else if (e != 0) {
    u = sign | ((e + 112u) << 23) | (m << 13);
  } else if (m == 0) {
    u = sign;
  } else { // subnormal: normalise
    e = 113u;
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    u = sign | (e << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &u, 4);
  return f;
}

} // namespace frenzy::cuda::rng

#endif
