//===- ModelSummaryTest.cpp - parameter and FLOP totals -------------------===//
#include "frenzy/Analysis/Summary/ModelSummary.h"
#include "frenzy/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {
const char *kModule = R"mlir(
module attributes {frenzy.batch = 2 : i64, frenzy.seq = 8 : i64, frenzy.num_blocks = 1 : i64} {
  func.func @forward(%x: tensor<2x8x16xf32>) -> tensor<2x8x32xf32> {
    %w = frenzy.param "l.0.w" {storage = "inline", trainable, frenzy.block = #frenzy.block<0>} : tensor<16x32xf32>
    %m = frenzy.param "mask" {storage = "inline", frenzy.block = #frenzy.block<0>} : tensor<8x8xf32>
    %y = frenzy.matmul %x, %w {frenzy.block = #frenzy.block<0>} : (tensor<2x8x16xf32>, tensor<16x32xf32>) -> tensor<2x8x32xf32>
    %z = frenzy.gelu %y {approximate = "tanh", frenzy.block = #frenzy.block<head>} : tensor<2x8x32xf32>
    return %z : tensor<2x8x32xf32>
  }
}
)mlir";
} // namespace

TEST(ModelSummary, CountsParamsBuffersAndFlops) {
  DialectRegistry registry;
  frenzy::registerAllDialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(kModule, &ctx);
  ASSERT_TRUE(m);
  frenzy::ModelSummary s = frenzy::summarize(*m);
  EXPECT_EQ(s.trainableParams, 16 * 32);
  EXPECT_EQ(s.bufferElements, 64);
  EXPECT_EQ(s.tokensPerStep, 16);
  // matmul: 2 * K * (2*8*32); gelu tanh: 9 per element.
  int64_t mm = 2 * 16 * (2 * 8 * 32), gelu = 9 * (2 * 8 * 32);
  EXPECT_EQ(s.forwardFlops, mm + gelu);
  EXPECT_EQ(s.blocks[0].flops, mm);
  EXPECT_EQ(s.blocks[frenzy::BlockAttr::kHead].flops, gelu);
}

TEST(ModelSummary, Thousands) {
  EXPECT_EQ(frenzy::withThousands(124439808), "124,439,808");
  EXPECT_EQ(frenzy::withThousands(999), "999");
  EXPECT_EQ(frenzy::withThousands(1000), "1,000");
}
