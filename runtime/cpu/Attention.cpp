//===- Attention.cpp - scaled dot-product attention, forward and backward -===//
//
// Per head: S = scale * q k^T + bias, masked entries -inf, P = softmax(S),
// Pd = dropout(P), out = Pd v. The dropout mask is regenerated from
// (seed, element) wherever it is needed, never stored.
// Backward: dv = Pd^T dout; dPd = dout v^T; dP = dropout(dPd);
// dS = P * (dP - rowsum(dP * P)); dq = scale dS k; dk = scale dS^T q.
//
// Both directions work through each head in blocks of R query rows. A row
// of P depends only on its query, and backward uses it only for the same
// row of dS, so the working set is one head's k and v plus a few rows, and
// backward recomputes P block by block instead of reading a [BH, Tq, Tk]
// tensor (attention_grad gets no probabilities from the forward op).
// Row i needs only columns [0, end_i): the causal cut and the mask's
// trailing masked columns are found up front, so a causal head does half
// the work and the softmax has no per-element branches; a mask's other
// entries become -inf before it.
// The shapes are small (the tiny GPT has T = 64, D = 16), where an OpenBLAS
// call costs more than its arithmetic (GEMM per head plus this softmax ran
// at about half this speed), so the products are register-tiled loops on
// 8-float vectors (this library builds with -march=native).
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "TensorOps.h"
#include "VecMath.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

namespace frenzy::cpu {

namespace {

// Eight floats, one AVX register (two SSE ones without AVX), through GCC's
// vector extension: for these short fixed-width loops the auto-vectoriser
// picked poor shapes (vectorising across rows with shuffles, or not at all).
typedef float F8 __attribute__((vector_size(32)));
constexpr int64_t kF8 = 8;

inline F8 load8(const float *p) {
  F8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store8(float *p, F8 v) { std::memcpy(p, &v, sizeof v); }
inline F8 splat8(float x) { return F8{x, x, x, x, x, x, x, x}; }
inline int64_t roundUp8(int64_t n) { return (n + kF8 - 1) / kF8 * kF8; }

// Row reductions over whole vectors (n a multiple of 8), finished with a
// tree: rows here are short, so VecMath's 16 lanes summed one by one in
// double would cost more than the row itself.
inline float hsum(F8 v) {
  return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}
inline float max2(float a, float b) { return a > b ? a : b; }

float sumRow(const float *x, int64_t n) {
  F8 acc = {};
  for (int64_t j = 0; j < n; j += kF8)
    acc += load8(x + j);
  return hsum(acc);
}

float dotRow(const float *x, const float *y, int64_t n) {
  F8 acc = {};
  for (int64_t j = 0; j < n; j += kF8)
    acc += load8(x + j) * load8(y + j);
  return hsum(acc);
}

/// Largest of x[0, n), n >= 8 (NaN-free).
float maxRow(const float *x, int64_t n) {
  F8 m = load8(x);
  for (int64_t j = kF8; j < n; j += kF8) {
    const F8 v = load8(x + j);
    m = m > v ? m : v;
  }
  return max2(max2(max2(m[0], m[4]), max2(m[2], m[6])),
              max2(max2(m[1], m[5]), max2(m[3], m[7])));
}

/// Query rows handled together: each vector of k^T, v^T, k or v loaded then
/// serves R rows, and each row of dk and dv is updated once per R rows.
constexpr int R = 4;

/// Columns [j, j + 8B) of out[r] = alpha * a[r] B^T for the R rows, B given
/// transposed, bt [K, ld]: R * B independent FMA chains in registers.
template <int B>
inline void scoreTile(float *const out[R], const float *const a[R],
                      const float *bt, int64_t K, int64_t ld, int64_t j,
                      float alpha) {
  F8 acc[R][B] = {};
  for (int64_t d = 0; d < K; ++d) {
    F8 b[B];
    for (int u = 0; u < B; ++u)
      b[u] = load8(bt + d * ld + j + u * kF8);
    for (int r = 0; r < R; ++r) {
      const F8 ar = splat8(a[r][d]);
      for (int u = 0; u < B; ++u)
        acc[r][u] += ar * b[u];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < B; ++u)
      store8(out[r] + j + u * kF8, acc[r][u] * alpha);
}

/// out[r][0, n) = alpha * a[r] B^T for R rows, with B given transposed and
/// padded, bt [K, ld]; n and ld are multiples of 8.
void rowsTimesTransposed(float *const out[R], const float *const a[R],
                         const float *bt, int64_t K, int64_t ld, int64_t n,
                         float alpha) {
  int64_t j = 0;
  for (; j + 2 * kF8 <= n; j += 2 * kF8)
    scoreTile<2>(out, a, bt, K, ld, j, alpha);
  if (j < n)
    scoreTile<1>(out, a, bt, K, ld, j, alpha);
}

/// Columns [d, d + 8B) of out[r] = alpha * sum_{j < n} p[r][j] x[j, :].
template <int B>
inline void combineTile(float *const out[R], const float *const p[R],
                        const float *x, int64_t n, int64_t w, int64_t d,
                        float alpha) {
  F8 acc[R][B] = {};
  for (int64_t j = 0; j < n; ++j) {
    F8 xv[B];
    for (int u = 0; u < B; ++u)
      xv[u] = load8(x + j * w + d + u * kF8);
    for (int r = 0; r < R; ++r) {
      const F8 pr = splat8(p[r][j]);
      for (int u = 0; u < B; ++u)
        acc[r][u] += pr * xv[u];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < B; ++u)
      store8(out[r] + d + u * kF8, acc[r][u] * alpha);
}

/// out[r][0, w) = alpha * sum_{j < n} p[r][j] x[j, 0, w) for R rows and
/// row-major x [n, w].
void combineRows(float *const out[R], const float *const p[R], const float *x,
                 int64_t n, int64_t w, float alpha) {
  int64_t d = 0;
  for (; d + 2 * kF8 <= w; d += 2 * kF8)
    combineTile<2>(out, p, x, n, w, d, alpha);
  for (; d + kF8 <= w; d += kF8)
    combineTile<1>(out, p, x, n, w, d, alpha);
  for (; d < w; ++d) // w not a multiple of 8
    for (int r = 0; r < R; ++r) {
      float s = 0.0f;
      for (int64_t j = 0; j < n; ++j)
        s += p[r][j] * x[j * w + d];
      out[r][d] = alpha * s;
    }
}

/// y[j, 0, w) += alpha * sum_r a[r][j] x[r][0, w) for j < n: R rank-one
/// updates of row-major y [n, w] at once.
void rankUpdates(float *y, const float *const a[R], const float *const x[R],
                 int64_t n, int64_t w, float alpha) {
  for (int64_t j = 0; j < n; ++j) {
    float *yj = y + j * w;
    float s[R];
    for (int r = 0; r < R; ++r)
      s[r] = alpha * a[r][j];
    int64_t d = 0;
    for (; d + kF8 <= w; d += kF8) {
      F8 acc = load8(yj + d);
      for (int r = 0; r < R; ++r)
        acc += splat8(s[r]) * load8(x[r] + d);
      store8(yj + d, acc);
    }
    for (; d < w; ++d)
      for (int r = 0; r < R; ++r)
        yj[d] += s[r] * x[r][d];
  }
}

/// bt [cols, ld] = x^T for row-major x [rows, cols]; columns past rows are
/// left as they are (zero padding). Writes run along bt's rows: strided
/// stores cost more than strided loads.
void transpose(float *bt, const float *x, int64_t rows, int64_t cols,
               int64_t ld) {
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r)
      bt[c * ld + r] = x[r * cols + c];
}

/// The query rows [i0, i0 + R) of one head being processed: rows past Tq
/// are dummies that attend to nothing.
struct RowBlock {
  int64_t i0 = 0;
  int64_t n[R] = {}; // live width of each row (0: attends to nothing)
  int64_t nMax = 0;  // the largest n
  int64_t nb = 0;    // nMax rounded up to whole vectors: the row buffers'
                     // valid width, zero past each row's n
};

/// One head at a time: its masking geometry, the transposed operands of the
/// row products (padded to whole vectors), and R rows of each row buffer.
/// Allocated once per kernel call; rows hold roundUp8(Tk) floats, so every
/// row loop runs over whole vectors, and sit Tkp apart.
class HeadRows {
public:
  explicit HeadRows(const AttentionConfig &c)
      : c(c), Tkp(rowStride(c.Tk)), end(c.Tq), holes(c.Tq), kT(c.D * Tkp),
        vT(c.Dv * Tkp), rows(kBuffers * R * Tkp),
        sink(std::max(c.D, c.Dv)) {}

  /// Prepares head h. k or v may be null when their transpose is not used
  /// (kT: computing scores; vT: backward's dout v^T).
  void begin(int64_t h, const float *k, const float *v) {
    this->h = h;
    int64_t mh = (c.maskHeads > 1 ? h : 0) * c.Tq * c.Tk;
    mask = c.mask ? c.mask + mh : nullptr;
    bias = c.bias ? c.bias + mh : nullptr;
    if (h == 0 || c.maskHeads > 1)
      findLiveColumns();
    if (k)
      transpose(kT.data(), k, c.Tk, c.D, Tkp);
    if (v)
      transpose(vT.data(), v, c.Tk, c.Dv, Tkp);
  }

  /// Row buffers: P, Pd (P after dropout), dS, dropout factors.
  enum Buffer { kP, kPd, kDS, kFactors, kBuffers };
  float *row(Buffer b, int r) { return rows.data() + (b * R + r) * Tkp; }

  /// Pointers to the R rows of [T, width] matrix m from row i0; rows past T
  /// read the last row (dummies) or, for outputs, write to a sink.
  template <typename F>
  void rowsOf(F *ptr[R], F *m, int64_t i0, int64_t T, int64_t width,
              bool output) {
    for (int r = 0; r < R; ++r)
      ptr[r] = i0 + r < T ? m + (i0 + r) * width
               : output   ? sink.data()
                          : m + (T - 1) * width;
  }

  /// The block's live widths, from the masking geometry.
  RowBlock block(int64_t i0) const {
    RowBlock b;
    b.i0 = i0;
    for (int r = 0; r < R; ++r) {
      b.n[r] = i0 + r < c.Tq ? end[i0 + r] : 0;
      b.nMax = std::max(b.nMax, b.n[r]);
    }
    b.nb = roundUp8(b.nMax);
    return b;
  }

  /// Rows of P (before dropout) for the block from its queries qs, into
  /// row(kP, r)[0, nb). A row whose every score is masked attends to
  /// nothing: all zero, n = 0.
  RowBlock probs(int64_t i0, const float *const qs[R]) {
    RowBlock b = block(i0);
    if (b.nb == 0)
      return b;
    float *p[R];
    for (int r = 0; r < R; ++r)
      p[r] = row(kP, r);
    rowsTimesTransposed(p, qs, kT.data(), c.D, Tkp, b.nb, c.scale);
    for (int r = 0; r < R; ++r)
      b.n[r] = softmaxLive(p[r], i0 + r, b.n[r], b.nb);
    return b;
  }

  /// The block's rows of a stored P [Tq, Tk] into row(kP, r), like probs().
  RowBlock copyProbs(int64_t i0, const float *P) {
    RowBlock b = block(i0);
    for (int r = 0; r < R; ++r) {
      if (b.n[r] > 0)
        std::copy(P + (i0 + r) * c.Tk, P + (i0 + r) * c.Tk + b.n[r],
                  row(kP, r));
      std::fill(row(kP, r) + b.n[r], row(kP, r) + b.nb, 0.0f);
    }
    return b;
  }

  /// row(kPd, r) = dropout(row(kP, r)) for the block, leaving the factors
  /// (0 or 1 / (1 - p)) in row(kFactors, r). Element (global head, i, j)
  /// draws the decision of the whole batch's stream, so every split of the
  /// batch or of the heads draws the same.
  void dropout(const RowBlock &b) {
    const float keep = 1.0f / (1.0f - c.dropout);
    for (int r = 0; r < R; ++r) {
      const float *p = row(kP, r);
      float *f = row(kFactors, r), *pd = row(kPd, r);
      const uint64_t base = (c.globalHead(h) * c.Tq + b.i0 + r) * c.Tk;
      for (int64_t j = 0; j < b.n[r]; ++j)
        f[j] = dropoutUniform(c.seed, base + j) < c.dropout ? 0.0f : keep;
      std::fill(f + b.n[r], f + b.nb, 0.0f);
      for (int64_t j = 0; j < b.nb; ++j)
        pd[j] = p[j] * f[j];
    }
  }

  /// Tk rounded up to whole vectors, and to an odd number of them: the
  /// score tiles read one vector from each of D rows of k^T, which with a
  /// stride of a multiple of 4 KiB (Tk = 1024) would all fall in one L1 set.
  static int64_t rowStride(int64_t Tk) {
    int64_t n = roundUp8(Tk);
    return n / kF8 % 2 ? n : n + kF8;
  }

  const AttentionConfig &c;
  const int64_t Tkp;
  std::vector<int64_t> end;   // columns [end, Tk) of a row are masked
  std::vector<uint8_t> holes; // a masked column inside [0, end)
  std::vector<float> kT, vT, rows, sink;

private:
  void findLiveColumns() {
    for (int64_t i = 0; i < c.Tq; ++i) {
      int64_t n = c.causal ? std::min(i + 1, c.Tk) : c.Tk;
      bool hole = false;
      if (mask) {
        const uint8_t *m = mask + i * c.Tk;
        while (n > 0 && m[n - 1])
          --n;
        for (int64_t j = 0; j < n; ++j)
          hole |= m[j] != 0;
      }
      end[i] = n;
      holes[i] = hole;
    }
  }

  /// Softmax of row i's scaled scores s[0, nb) over its live columns
  /// [0, n) (bias added, holes masked); returns n, or 0 when every score is
  /// masked and the row is all zero.
  int64_t softmaxLive(float *s, int64_t i, int64_t n, int64_t nb) const {
    const float ninf = -std::numeric_limits<float>::infinity();
    if (bias && n > 0)
      for (int64_t j = 0; j < n; ++j)
        s[j] += bias[i * c.Tk + j];
    if (n > 0 && holes[i]) {
      const uint8_t *m = mask + i * c.Tk;
      for (int64_t j = 0; j < n; ++j)
        s[j] = m[j] ? ninf : s[j];
    }
    std::fill(s + n, s + nb, ninf);
    const float maxv = maxRow(s, nb);
    if (maxv == ninf) { // e.g. a bias of -inf everywhere live
      std::fill(s, s + nb, 0.0f);
      return 0;
    }
    for (int64_t j = 0; j < nb; ++j)
      s[j] = fastExp(s[j] - maxv);
    const float inv = 1.0f / sumRow(s, nb);
    for (int64_t j = 0; j < nb; ++j)
      s[j] *= inv;
    return n;
  }

  const uint8_t *mask = nullptr;
  const float *bias = nullptr;
  int64_t h = 0;
};

} // namespace

void attentionForward(float *out, float *probs, const float *q, const float *k,
                      const float *v, const AttentionConfig &c) {
  const int64_t Tq = c.Tq, Tk = c.Tk, D = c.D, Dv = c.Dv;
  HeadRows w(c);
  for (int64_t h = 0; h < c.BH; ++h) {
    w.begin(h, k + h * Tk * D, nullptr);
    for (int64_t i0 = 0; i0 < Tq; i0 += R) {
      const float *qs[R], *used[R];
      float *outs[R];
      w.rowsOf(qs, q + h * Tq * D, i0, Tq, D, false);
      w.rowsOf(outs, out + h * Tq * Dv, i0, Tq, Dv, true);
      RowBlock b = w.probs(i0, qs);
      if (probs)
        for (int r = 0; r < R && i0 + r < Tq; ++r) {
          float *dst = probs + (h * Tq + i0 + r) * Tk;
          std::copy(w.row(w.kP, r), w.row(w.kP, r) + b.n[r], dst);
          std::fill(dst + b.n[r], dst + Tk, 0.0f);
        }
      if (c.dropout > 0.0f)
        w.dropout(b);
      for (int r = 0; r < R; ++r)
        used[r] = w.row(c.dropout > 0.0f ? w.kPd : w.kP, r);
      combineRows(outs, used, v + h * Tk * Dv, b.nMax, Dv, 1.0f);
    }
  }
}

void attentionBackward(float *dq, float *dk, float *dv, const float *dout,
                       const float *probs, const float *q, const float *k,
                       const float *v, const AttentionConfig &c) {
  const int64_t Tq = c.Tq, Tk = c.Tk, D = c.D, Dv = c.Dv;
  HeadRows w(c);
  for (int64_t h = 0; h < c.BH; ++h) {
    const float *kh = k + h * Tk * D;
    w.begin(h, probs ? nullptr : kh, v + h * Tk * Dv);
    float *dkh = dk + h * Tk * D, *dvh = dv + h * Tk * Dv;
    std::fill(dkh, dkh + Tk * D, 0.0f);
    std::fill(dvh, dvh + Tk * Dv, 0.0f);
    for (int64_t i0 = 0; i0 < Tq; i0 += R) {
      const float *qs[R], *dOs[R], *p[R], *pd[R];
      float *dqs[R], *ds[R];
      w.rowsOf(qs, q + h * Tq * D, i0, Tq, D, false);
      w.rowsOf(dOs, dout + h * Tq * Dv, i0, Tq, Dv, false);
      w.rowsOf(dqs, dq + h * Tq * D, i0, Tq, D, true);
      RowBlock b = probs ? w.copyProbs(i0, probs + h * Tq * Tk)
                         : w.probs(i0, qs);
      for (int r = 0; r < R; ++r) {
        p[r] = pd[r] = w.row(w.kP, r);
        ds[r] = w.row(w.kDS, r);
      }
      // dPd = dout v^T, then dP = dropout(dPd), Pd = dropout(P).
      rowsTimesTransposed(ds, dOs, w.vT.data(), Dv, w.Tkp, b.nb, 1.0f);
      if (c.dropout > 0.0f) {
        w.dropout(b);
        for (int r = 0; r < R; ++r) {
          const float *f = w.row(w.kFactors, r);
          for (int64_t j = 0; j < b.nb; ++j)
            ds[r][j] *= f[j];
          pd[r] = w.row(w.kPd, r);
        }
      }
      // dS = P * (dP - rowsum(dP * P)): zero wherever P is (masked, past n).
      for (int r = 0; r < R; ++r) {
        const float rowDot = dotRow(ds[r], p[r], b.nb);
        for (int64_t j = 0; j < b.nb; ++j)
          ds[r][j] = p[r][j] * (ds[r][j] - rowDot);
      }
      combineRows(dqs, ds, kh, b.nMax, D, c.scale);
      rankUpdates(dvh, pd, dOs, b.nMax, Dv, 1.0f);
      rankUpdates(dkh, ds, qs, b.nMax, D, c.scale);
    }
  }
}

} // namespace frenzy::cpu
