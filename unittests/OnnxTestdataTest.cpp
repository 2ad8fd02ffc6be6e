//===- OnnxTestdataTest.cpp - runtime kernels vs ONNX's operator tests ----===//
//
// Debian's libonnx-testdata ships ONNX's backend node tests: a one-node
// model.onnx and input/output TensorProtos. Each case for an operator
// Frenzy implements is imported, lowered to a plan and executed on the CPU
// runtime; the outputs must match ONNX's expected values. Cases the
// importer declines (an attribute or type Frenzy does not support) are
// counted and listed, not hidden; every case that imports must match.
// Skipped, with the reason shown, when the package is not installed.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Import/OnnxImporter.h"
#include "frenzy/InitAll.h"
#include "frenzy/Target/Plan/PlanWriter.h"

#include "Executor.h"
#include "plan.pb.h"
#include "plan/PlanVersion.h"

#include "mlir/IR/MLIRContext.h"
#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>
#include <cmath>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sys/stat.h>

using namespace mlir;

namespace {

const char *kRoot = "/usr/share/libonnx-testdata/data/node";

// Operators with a Frenzy op and kernel (ONNX test-name prefixes).
const char *kOps[] = {
    "abs", "add", "and", "cast", "concat", "cos", "div", "dropout", "equal",
    "erf", "exp", "expand", "gather_0", "gather_1", "gather_2d",
    "gather_negative", "gemm", "greater", "layer_normalization", "less",
    "log", "logsoftmax", "matmul", "max", "min", "mul", "neg", "not", "or",
    "pow", "reciprocal", "reduce_max", "reduce_mean", "reduce_min",
    "reduce_sum", "relu", "reshape", "sigmoid", "sin", "slice", "softmax",
    "split", "sqrt", "squeeze", "sub", "tanh", "transpose", "tril", "triu",
    "unsqueeze", "where"};

bool exists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

bool readTensor(const std::string &path, onnx::TensorProto &t) {
  std::ifstream in(path, std::ios::binary);
  return in && t.ParseFromIstream(&in);
}

/// Copies a TensorProto's data into a runtime tensor of the same size.
bool fillFrom(const onnx::TensorProto &t, frenzy::rt::Tensor &dst) {
  if (!t.raw_data().empty()) {
    if (int64_t(t.raw_data().size()) != dst.bytes())
      return false;
    std::memcpy(dst.data(), t.raw_data().data(), dst.bytes());
    return true;
  }
  if (t.float_data_size() == dst.numel() && dst.dtype == frenzy::plan::F32) {
    std::copy(t.float_data().begin(), t.float_data().end(), dst.f32());
    return true;
  }
  if (t.int64_data_size() == dst.numel() && dst.dtype == frenzy::plan::I64) {
    std::copy(t.int64_data().begin(), t.int64_data().end(), dst.i64());
    return true;
  }
  if (t.int32_data_size() == dst.numel() && dst.dtype == frenzy::plan::BOOL) {
    for (int64_t i = 0; i < dst.numel(); ++i)
      dst.u8()[i] = uint8_t(t.int32_data(i));
    return true;
  }
  return false;
}

/// "" when the outputs match, else what differs.
std::string compare(const frenzy::rt::Tensor &expected,
                    const frenzy::rt::Tensor &actual) {
  if (expected.bytes() != actual.bytes())
    return "size " + actual.describe() + " vs " + expected.describe();
  if (actual.dtype != frenzy::plan::F32)
    return std::memcmp(expected.data(), actual.data(), actual.bytes())
               ? "values differ"
               : "";
  for (int64_t i = 0; i < actual.numel(); ++i) {
    float e = expected.f32()[i], a = actual.f32()[i];
    if (std::isnan(e) && std::isnan(a))
      continue;
    if (!(std::fabs(e - a) <= 1e-4f + 1e-4f * std::fabs(e)))
      return "element " + std::to_string(i) + ": " + std::to_string(a) +
             " vs expected " + std::to_string(e);
  }
  return "";
}

enum class Outcome { Match, Declined, Mismatch };

/// Exported models carry axes, shapes and split sizes as constants, while
/// ONNX's node tests feed them as graph inputs. Integer inputs become
/// initializers holding the test's values (written to `tmpModel`); returns
/// the test-data index of every input that stays an input, by name.
std::map<std::string, int> embedIntegerInputs(const std::string &dir,
                                              const std::string &tmpModel) {
  onnx::ModelProto model;
  std::ifstream in(dir + "/model.onnx", std::ios::binary);
  model.ParseFromIstream(&in);
  std::map<std::string, int> kept;
  auto *inputs = model.mutable_graph()->mutable_input();
  int index = 0;
  for (auto it = inputs->begin(); it != inputs->end(); ++index) {
    int et = it->type().tensor_type().elem_type();
    onnx::TensorProto t;
    bool integer = et == onnx::TensorProto::INT64 ||
                   et == onnx::TensorProto::INT32;
    if (integer && readTensor(dir + "/test_data_set_0/input_" +
                                  std::to_string(index) + ".pb",
                              t)) {
      t.set_name(it->name());
      *model.mutable_graph()->add_initializer() = t;
      it = inputs->erase(it);
      continue;
    }
    kept[it->name()] = index;
    ++it;
  }
  std::ofstream out(tmpModel, std::ios::binary);
  model.SerializeToOstream(&out);
  return kept;
}

Outcome runCase(MLIRContext &ctx, const std::string &dir, std::string &why) {
  ScopedDiagnosticHandler quiet(&ctx, [&](Diagnostic &d) {
    why = d.str();
    return success();
  });
  std::string tmpModel = ::testing::TempDir() + "/frenzy-onnx-case.onnx";
  std::map<std::string, int> inputIndex = embedIntegerInputs(dir, tmpModel);
  OwningOpRef<ModuleOp> module = frenzy::importOnnxFile(tmpModel, {}, &ctx);
  if (!module)
    return Outcome::Declined;
  frenzy::plan::Plan plan;
  plan.set_version(frenzy::plan::kPlanVersion);
  if (failed(frenzy::lowerProgram(*module, *plan.mutable_program())))
    return Outcome::Declined;
  try {
    frenzy::rt::Executor ex(plan);
    const auto &prog = plan.program();
    std::string data = dir + "/test_data_set_0/";
    for (int i = 0; i < prog.inputs_size(); ++i) {
      onnx::TensorProto t;
      int idx = inputIndex[prog.inputs(i).name()];
      if (!readTensor(data + "input_" + std::to_string(idx) + ".pb", t) ||
          !fillFrom(t, *ex.input(prog.inputs(i).name()))) {
        why = "cannot feed input " + prog.inputs(i).name();
        return Outcome::Mismatch;
      }
    }
    ex.runStep(1, 0);
    for (int i = 0; i < prog.outputs_size(); ++i) {
      onnx::TensorProto t;
      if (!readTensor(data + "output_" + std::to_string(i) + ".pb", t))
        break; // optional outputs (e.g. Dropout's mask) may be absent
      const frenzy::rt::Tensor *actual = ex.output(prog.outputs(i).name());
      frenzy::rt::Tensor expected = *actual;
      if (!fillFrom(t, expected)) {
        why = "cannot read expected output " + std::to_string(i);
        return Outcome::Mismatch;
      }
      why = compare(expected, *actual);
      if (!why.empty())
        return Outcome::Mismatch;
    }
  } catch (const frenzy::rt::RuntimeError &e) {
    why = e.what();
    // The runtime refusing an element type it has no kernels for (f16,
    // bf16 on the CPU backend) is a decline, not a wrong answer.
    return why.find("the CPU backend has no") != std::string::npos
               ? Outcome::Declined
               : Outcome::Mismatch;
  }
  return Outcome::Match;
}

} // namespace

TEST(OnnxTestdata, NodeCasesMatch) {
  if (!exists(kRoot))
    GTEST_SKIP() << kRoot << " not found: install Debian's libonnx-testdata "
                 << "(scripts/setup.sh does) to run ONNX's operator cases";
  DialectRegistry registry;
  frenzy::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  std::vector<std::string> cases;
  DIR *d = ::opendir(kRoot);
  while (dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    for (const char *op : kOps)
      if (name.rfind(std::string("test_") + op, 0) == 0 &&
          name.find("_expanded") == std::string::npos) {
        cases.push_back(name);
        break;
      }
  }
  ::closedir(d);
  std::sort(cases.begin(), cases.end());

  int matched = 0, declined = 0;
  for (const std::string &c : cases) {
    std::string why;
    switch (runCase(ctx, std::string(kRoot) + "/" + c, why)) {
    case Outcome::Match:
      ++matched;
      break;
    case Outcome::Declined:
      ++declined;
      std::printf("  declined by the importer: %s: %s\n", c.c_str(),
                  why.c_str());
      break;
    case Outcome::Mismatch:
      ADD_FAILURE() << c << ": " << why;
      break;
    }
  }
  std::printf("ONNX node cases: %zu for Frenzy's operators, %d match, %d "
              "declined by the importer\n",
              cases.size(), matched, declined);
  EXPECT_GT(matched, 150);
}
