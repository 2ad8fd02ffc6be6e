//===- KernelCheckBasic.cpp - GEMM, elementwise, movement, reductions -----===//
#include "CheckHarness.h"
#include "Kernels.h"
#include "TensorOps.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace frenzy::kcheck {

namespace ck = cuda::kernels;
using cpu::Shape;

namespace {
constexpr FloatType F32 = FloatType::F32, BF16 = FloatType::BF16,
                    F16 = FloatType::F16;

void gemmCase(FloatType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
              float alpha, float beta, FloatType cType) {
  Floats a = rounded(uniform(M * K, 1), t), b = rounded(uniform(K * N, 2), t);
  Floats c0 = rounded(uniform(M * N, 3), cType);
  DevFloats da(t, a), db(t, b), dc(cType, c0);
  std::string name = std::string("gemm") + (ta ? " At" : "") + (tb ? " Bt" : "") +
                     (beta != 0 ? " beta" : "") +
                     (cType != t ? " C f32" : "");
  if (!ok(ck::gemm(env().blas, env().stream, ta, tb, M, N, K, alpha, da.get(),
                   db.get(), t, beta, dc.get(), cType),
          name))
    return;
  Floats ref = c0;
  cpu::gemm(ta, tb, M, N, K, alpha, a.data(), b.data(), beta, ref.data());
  check(name, t, shapeStr({M, N, K}), dc.read(), rounded(ref, cType),
        t == F32 ? kTolF32 : toleranceOf(t) * 2);
}

void matmulCase(FloatType t, const Shape &as, const Shape &bs, const Shape &os) {
  Floats a = rounded(uniform(cpu::numElements(as), 4), t);
  Floats b = rounded(uniform(cpu::numElements(bs), 5), t);
  DevFloats da(t, a), db(t, b), dout(t, size_t(cpu::numElements(os)));
  if (!ok(ck::matmul(env().blas, env().stream, t, dout.get(), os, da.get(), as,
                     db.get(), bs),
          "matmul"))
    return;
  Floats ref(cpu::numElements(os));
  cpu::matmulF32(ref.data(), os, a.data(), as, b.data(), bs);
  check("matmul", t, shapeStr(as) + "x" + shapeStr(bs), dout.read(),
        rounded(ref, t), t == F32 ? kTolF32 : toleranceOf(t) * 2);
}
} // namespace

void checkContractions() {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      gemmCase(F32, ta, tb, 67, 45, 33, 0.7f, 0.0f, F32);
  gemmCase(F32, false, true, 64, 96, 128, 1.0f, 0.5f, F32);
  gemmCase(BF16, false, false, 128, 256, 192, 1.0f, 0.0f, BF16);
  gemmCase(BF16, true, false, 96, 64, 160, 1.0f, 1.0f, F32);
  gemmCase(F16, false, true, 128, 64, 96, 1.0f, 0.0f, F16);
  matmulCase(F32, {2, 3, 17, 19}, {2, 3, 19, 23}, {2, 3, 17, 23});
  matmulCase(F32, {2, 3, 17, 19}, {19, 23}, {2, 3, 17, 23});
  matmulCase(F32, {2, 1, 5, 7}, {1, 3, 7, 4}, {2, 3, 5, 4});
  matmulCase(F32, {7}, {3, 7, 4}, {3, 4});
  matmulCase(BF16, {4, 12, 64, 64}, {4, 12, 64, 32}, {4, 12, 64, 32});
}

void checkElementwise() {
  using U = cpu::UnaryKind;
  const int64_t n = 5000;
  const U kinds[] = {U::Neg, U::Abs, U::Exp, U::Log, U::Sqrt, U::Reciprocal,
                     U::Tanh, U::Erf, U::Sigmoid, U::Relu, U::Sin, U::Cos,
                     U::Silu, U::GeluTanh, U::GeluErf};
  const char *names[] = {"neg", "abs", "exp", "log", "sqrt", "reciprocal",
                         "tanh", "erf", "sigmoid", "relu", "sin", "cos",
                         "silu", "gelu_tanh", "gelu_erf"};
  for (FloatType t : {F32, BF16})
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
      bool positive = kinds[k] == U::Log || kinds[k] == U::Sqrt ||
                      kinds[k] == U::Reciprocal;
      Floats x = rounded(uniform(n, 10 + k, positive ? 0.1f : -4.0f, 4.0f), t);
      DevFloats dx(t, x), dy(t, size_t(n));
      if (!ok(ck::unary(env().stream, kinds[k], t, dy.get(), dx.get(), n),
              names[k]))
        continue;
      Floats ref(n);
      cpu::unaryF32(kinds[k], ref.data(), x.data(), n);
      check(names[k], t, shapeStr({n}), dy.read(), rounded(ref, t));
    }
  for (U k : {U::Silu, U::GeluTanh, U::GeluErf}) {
    Floats x = uniform(n, 30, -4, 4), g = uniform(n, 31);
    DevFloats dx(F32, x), dg(F32, g), din(F32, size_t(n));
    if (!ok(ck::unaryGrad(env().stream, k, F32, din.get(), dg.get(), dx.get(), n),
            "activation_grad"))
      continue;
    Floats ref(n);
    cpu::unaryGradF32(k, ref.data(), g.data(), x.data(), n);
    check(std::string("activation_grad ") +
              (k == U::Silu ? "silu" : k == U::GeluTanh ? "gelu_tanh" : "gelu_erf"),
          F32, shapeStr({n}), din.read(), ref);
  }
  using B = cpu::BinaryKind;
  const B bk[] = {B::Add, B::Sub, B::Mul, B::Div, B::Pow, B::Max, B::Min};
  const char *bn[] = {"add", "sub", "mul", "div", "pow", "max", "min"};
  const Shape as = {4, 1, 6}, bs = {3, 1}, os = {4, 3, 6};
  for (size_t k = 0; k < 7; ++k) {
    Floats a = uniform(24, 40 + k, 0.5f, 2.0f), b = uniform(3, 50 + k, 0.5f, 2.0f);
    DevFloats da(F32, a), db(F32, b), dout(F32, size_t(72));
    if (!ok(ck::binary(env().stream, bk[k], F32, dout.get(), os, da.get(), as,
                       db.get(), bs),
            bn[k]))
      continue;
    Floats ref(72);
    cpu::binaryF32(bk[k], ref.data(), os, a.data(), as, b.data(), bs);
    check(std::string(bn[k]) + " broadcast", F32, "[4,1,6]x[3,1]", dout.read(), ref);
  }
  { // same-shape bf16 add (the residual path) and int64 division by zero
    Floats a = rounded(uniform(n, 60), BF16), b = rounded(uniform(n, 61), BF16);
    DevFloats da(BF16, a), db(BF16, b), dout(BF16, size_t(n));
    if (ok(ck::binary(env().stream, B::Add, BF16, dout.get(), {n}, da.get(), {n},
                      db.get(), {n}), "add")) {
      Floats ref(n);
      cpu::binaryF32(B::Add, ref.data(), {n}, a.data(), {n}, b.data(), {n});
      check("add same-shape", BF16, shapeStr({n}), dout.read(), rounded(ref, BF16));
    }
    std::vector<int64_t> ia = {7, -7, 9, 100, 5, 0}, ib = {2, 2, 0, -3, 5, 1};
    DevBuf dia(6, 8), dib(6, 8), dio(6, 8);
    toDevice(dia, ia);
    toDevice(dib, ib);
    if (ok(ck::binaryI64(env().stream, B::Div, dio.as<int64_t>(), {6},
                         dia.as<int64_t>(), {6}, dib.as<int64_t>(), {6}), "div i64")) {
      std::vector<int64_t> ref(6);
      cpu::binaryI64(B::Div, ref.data(), {6}, ia.data(), {6}, ib.data(), {6});
      checkExact("div i64", "[6]", fromDevice<int64_t>(dio, 6) == ref, "");
    }
  }
  { // compare, where, cast, trilu, dropout
    Floats a = uniform(24, 70), b = uniform(6, 71);
    DevFloats da(F32, a), db(F32, b);
    DevBuf cmp(24, 1);
    if (ok(ck::compare(env().stream, cpu::CompareKind::Less, true,
                       cmp.as<uint8_t>(), {4, 6}, da.get(), {4, 6}, db.get(), {6}),
           "less")) {
      std::vector<uint8_t> ref(24);
      cpu::compareF32(cpu::CompareKind::Less, ref.data(), {4, 6}, a.data(),
                      {4, 6}, b.data(), {6});
      std::vector<uint8_t> got = fromDevice<uint8_t>(cmp, 24);
      checkExact("less broadcast", "[4,6]x[6]", got == ref, "");
      DevFloats w(F32, size_t(24));
      if (ok(ck::where(env().stream, w.get(), {4, 6}, cmp.as<uint8_t>(), {4, 6},
                       da.get(), {4, 6}, db.get(), {6}, 4), "where")) {
        Floats wr(24);
        cpu::where(wr.data(), {4, 6}, ref.data(), {4, 6}, a.data(), {4, 6},
                   b.data(), {6}, 4);
        check("where", F32, "[4,6]", w.read(), wr, 0.0);
      }
    }
    Floats big = uniform(1000, 72, -50, 50);
    DevFloats dbig(F32, big);
    DevBuf di(1000, 8);
    if (ok(ck::cast(env().stream, di.get(), cpu::DType::I64, dbig.get(),
                    cpu::DType::F32, 1000), "cast")) {
      std::vector<int64_t> ref(1000);
      cpu::cast(ref.data(), cpu::DType::I64, big.data(), cpu::DType::F32, 1000);
      checkExact("cast f32->i64", "[1000]", fromDevice<int64_t>(di, 1000) == ref, "");
    }
    for (FloatType t : {BF16, F16}) {
      DevFloats half(t, size_t(1000));
      if (ok(ck::castFloat(env().stream, half.get(), t, dbig.get(), F32, 1000),
             "castFloat"))
        check(std::string("cast f32->") + typeName(t), t, "[1000]", half.read(),
              rounded(big, t), 0.0);
    }
    Floats m = uniform(2 * 5 * 7, 73);
    DevFloats dm(F32, m), dt(F32, m.size());
    if (ok(ck::trilu(env().stream, dt.get(), dm.get(), 2, 5, 7, true, -1, 4),
           "trilu")) {
      Floats ref(m.size());
      cpu::trilu(ref.data(), m.data(), 2, 5, 7, true, -1, 4);
      check("trilu upper k=-1", F32, "[2,5,7]", dt.read(), ref, 0.0);
    }
  }
  for (FloatType t : {F32, BF16}) {
    // Dropout: the mask must equal the CPU's bit for bit, at an offset.
    const int64_t dn = 10007;
    Floats x = rounded(uniform(dn, 80, 0.5f, 1.5f), t);
    DevFloats dx(t, x), dy(t, size_t(dn));
    const uint64_t seed = 0x1234abcdull, first = 777;
    if (!ok(ck::dropout(env().stream, t, dy.get(), dx.get(), dn, 0.3f, seed, first),
            "dropout"))
      continue;
    Floats got = dy.read(), ref(dn);
    cpu::dropoutF32(ref.data(), x.data(), dn, 0.3f, seed, first);
    bool same = true;
    for (int64_t i = 0; i < dn; ++i)
      same &= (got[i] == 0.0f) == (ref[i] == 0.0f);
    checkExact("dropout mask", shapeStr({dn}), same,
               "zero pattern equals the CPU stream at offset 777");
    check("dropout values", t, shapeStr({dn}), got, rounded(ref, t));
  }
}

void checkMovementAndReduce() {
  using R = cpu::ReduceKind;
  const Shape s = {3, 40, 5, 7};
  Floats x = uniform(cpu::numElements(s), 90);
  DevFloats dx(F32, x);
  const R kinds[] = {R::Sum, R::Mean, R::Max, R::Min};
  const char *names[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"};
  for (int k = 0; k < 4; ++k)
    for (const std::vector<int64_t> &axes :
         {std::vector<int64_t>{1}, std::vector<int64_t>{0, 2},
          std::vector<int64_t>{0, 1, 2, 3}}) {
      int64_t outN = 1;
      for (size_t d = 0; d < s.size(); ++d)
        if (std::find(axes.begin(), axes.end(), int64_t(d)) == axes.end())
          outN *= s[d];
      DevFloats dout(F32, size_t(outN));
      if (!ok(ck::reduce(env().stream, kinds[k], dout.f32(), dx.f32(), s, axes),
              names[k]))
        continue;
      Floats ref(outN);
      cpu::reduceF32(kinds[k], ref.data(), x.data(), s, axes);
      check(std::string(names[k]) + " axes" + shapeStr(axes), F32, shapeStr(s),
            dout.read(), ref);
    }
  { // unbroadcast (bias gradient: sum over all but the last dim)
    DevFloats dout(F32, size_t(7));
    if (ok(ck::sumToShape(env().stream, dout.f32(), {7}, dx.f32(), s), "unbroadcast")) {
      Floats ref(7);
      cpu::sumToShapeF32(ref.data(), {7}, x.data(), s);
      check("unbroadcast ->[7]", F32, shapeStr(s), dout.read(), ref);
    }
  }
  { // transpose (attention's head split), expand, slice with negative step
    DevFloats dt(F32, x.size());
    const std::vector<int64_t> perm = {0, 2, 1, 3};
    if (ok(ck::transpose(env().stream, dt.get(), dx.get(), s, perm, 4), "transpose")) {
      Floats ref(x.size());
      cpu::transpose(ref.data(), x.data(), s, perm, 4);
      check("transpose 0213", F32, shapeStr(s), dt.read(), ref, 0.0);
    }
    Floats b = uniform(7, 91);
    DevFloats db(F32, b), de(F32, size_t(4 * 5 * 7));
    if (ok(ck::expand(env().stream, de.get(), {4, 5, 7}, db.get(), {7}, 4), "expand")) {
      Floats ref(140);
      cpu::expand(ref.data(), {4, 5, 7}, b.data(), {7}, 4);
      check("expand [7]->[4,5,7]", F32, "[4,5,7]", de.read(), ref, 0.0);
    }
    const std::vector<int64_t> st = {1, 38, 0, 6}, li = {3, 2, 5, -1}, sp = {1, -3, 2, -2};
    Shape os;
    for (size_t d = 0; d < 4; ++d) {
      int64_t n = sp[d] > 0 ? (li[d] - st[d] + sp[d] - 1) / sp[d]
                            : (st[d] - li[d] - sp[d] - 1) / -sp[d];
      os.push_back(std::max<int64_t>(0, n));
    }
    DevFloats dsl(F32, size_t(cpu::numElements(os)));
    if (ok(ck::slice(env().stream, dsl.get(), dx.get(), s, st, li, sp, 4), "slice")) {
      Floats ref(cpu::numElements(os));
      cpu::slice(ref.data(), x.data(), s, st, li, sp, 4);
      check("slice stepped", F32, shapeStr(os), dsl.read(), ref, 0.0);
      Floats g = uniform(ref.size(), 92);
      DevFloats dg(F32, g), din(F32, x.size());
      if (ok(ck::sliceGrad(env().stream, din.f32(), s, dg.f32(), st, li, sp),
             "slice_grad")) {
        Floats gr(x.size());
        cpu::sliceGradF32(gr.data(), s, g.data(), st, li, sp);
        check("slice_grad", F32, shapeStr(s), din.read(), gr, 0.0);
      }
    }
  }
  { // concat / split along axis 1, gather / gather_grad along axis 1
    Floats a = uniform(3 * 4 * 5, 93), b = uniform(3 * 2 * 5, 94);
    DevFloats da(F32, a), db(F32, b), dc(F32, size_t(3 * 6 * 5));
    if (ok(ck::concat(env().stream, dc.get(), {da.get(), db.get()},
                      {{3, 4, 5}, {3, 2, 5}}, 1, 4), "concat")) {
      Floats ref(90);
      cpu::concat(ref.data(), {a.data(), b.data()}, {{3, 4, 5}, {3, 2, 5}}, 1, 4);
      check("concat axis 1", F32, "[3,6,5]", dc.read(), ref, 0.0);
      DevFloats s1(F32, size_t(45)), s2(F32, size_t(45));
      if (ok(ck::split(env().stream, {s1.get(), s2.get()}, dc.get(), {3, 6, 5}, 1,
                       {3, 3}, 4), "split")) {
        Floats r1(45), r2(45);
        cpu::split({r1.data(), r2.data()}, ref.data(), {3, 6, 5}, 1, {3, 3}, 4);
        Floats got = s1.read(), got2 = s2.read();
        got.insert(got.end(), got2.begin(), got2.end());
        r1.insert(r1.end(), r2.begin(), r2.end());
        check("split axis 1", F32, "[3,6,5]", got, r1, 0.0);
      }
    }
    std::vector<int64_t> idx = {3, 0, -1, 3, 2, 3, 1};
    DevBuf di(idx.size(), 8), bad(1, 8);
    toDevice(di, idx);
    toDevice(bad, std::vector<int64_t>{-1});
    const Shape ds = {3, 4, 5};
    DevFloats dg(F32, size_t(3 * 7 * 5));
    if (ok(ck::gather(env().stream, dg.get(), da.get(), ds, di.as<int64_t>(), 7, 1,
                      4, bad.as<int64_t>()), "gather")) {
      Floats ref(105);
      cpu::gather(ref.data(), a.data(), ds, idx.data(), 7, 1, 4);
      check("gather axis 1", F32, "[3,4,5]x[7]", dg.read(), ref, 0.0);
      Floats g = uniform(105, 95);
      DevFloats dgo(F32, g), dd(F32, size_t(60));
      if (ok(ck::gatherGrad(env().stream, dd.f32(), ds, dgo.f32(),
                            di.as<int64_t>(), 7, 1), "gather_grad")) {
        Floats gr(60);
        cpu::gatherGradF32(gr.data(), ds, g.data(), idx.data(), 7, 1);
        // Repeated index 3 sums in index order on both sides: bit-equal.
        check("gather_grad (repeats)", F32, "[3,4,5]", dd.read(), gr, 0.0);
      }
    }
    std::vector<int64_t> badIdx = {0, 4, 1, -5};
    toDevice(di, badIdx);
    if (ok(ck::gather(env().stream, dg.get(), da.get(), ds, di.as<int64_t>(), 4, 1,
                      4, bad.as<int64_t>()), "gather")) {
      int64_t first = fromDevice<int64_t>(bad, 1)[0];
      checkExact("gather bad index reported", "[4]", first == 1,
                 "first bad position " + std::to_string(first) + " (want 1)");
    }
  }
}

} // namespace frenzy::kcheck
