// frenzy-precision: the policy is recorded; unknown ones are listed.
// RUN: frenzy-opt %s -frenzy-precision=policy=bf16-mixed | FileCheck %s --check-prefix=BF16
// RUN: frenzy-opt %s -frenzy-precision=policy=fp16-mixed | FileCheck %s --check-prefix=FP16
// RUN: not frenzy-opt %s -frenzy-precision=policy=fp8 2>&1 | FileCheck %s --check-prefix=BAD
// BF16: module attributes {frenzy.precision = "bf16-mixed"}
// FP16: module attributes {frenzy.loss_scale = 6.553600e+04 : f64, frenzy.precision = "fp16-mixed"}
// BAD: unknown precision 'fp8'; valid values: fp32, bf16-mixed, fp16-mixed
module {
}
