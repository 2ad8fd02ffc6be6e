//===- TrainModelTest.cpp - the training side task against frenzy-launch ===//
//
// Plans the tiny GPT for one CPU rank with frenzy-opt (a process: the
// runtime's tests link no MLIR), writes a token file, trains three steps
// through the side task's phase-sized steps, and checks each step's loss
// against what `frenzy-launch PLAN` prints for the same plan, data and
// seed (the same executor, so the same digits).
//
//===----------------------------------------------------------------------===//
#include "SideTaskSpec.h"
#include "tasks/TrainModel.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

using namespace frenzy::rt;

namespace {

std::string run(const std::string &cmd) {
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p))
    out.append(buf, n);
  pclose(p);
  return out;
}

void writeTokens(const std::string &path, int64_t n, int vocab) {
  std::ofstream out(path, std::ios::binary);
  int32_t header[256] = {20240520, 1, int32_t(n)};
  out.write(reinterpret_cast<const char *>(header), sizeof header);
  uint32_t s = 12345;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    uint16_t t = uint16_t((s >> 8) % uint32_t(vocab));
    out.write(reinterpret_cast<const char *>(&t), 2);
  }
}

} // namespace

TEST(TrainModel, StepsMatchFrenzyLaunch) {
  char dir[] = "/tmp/frenzy-train-task-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string d = dir, bin = FRENZY_BIN_DIR, src = FRENZY_SOURCE_DIR;
  std::string plan = d + "/one.plan", tokens = d + "/tokens.bin";
  writeTokens(tokens, 4096, 256);
  std::string opt = run(bin + "/frenzy-opt " + src +
                        "/examples/gpt2-tiny.onnx --batch=2 --seq=16 "
                        "--cluster=" + src + "/examples/cpu-1.yaml -o " +
                        plan + " 2>&1");
  ASSERT_NE(opt.find("wrote"), std::string::npos) << opt;
  std::string log = run(bin + "/frenzy-launch " + plan +
                        " --steps=3 --seed=7 --data=" + tokens + " 2>&1");
  std::vector<double> want;
  std::regex line(R"(step\s+\d+/3 \| loss (\S+))");
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end;
       ++it)
    want.push_back(std::stod((*it)[1]));
  ASSERT_EQ(want.size(), 3u) << log;

  SideTaskState st = makeSideTask("train:plan=" + plan + ",data=" + tokens +
                                  ",steps=3,seed=7");
  st.task->init(0);
  int64_t steps = 1;
  while (st.task->step())
    ++steps;
  auto &task = dynamic_cast<TrainModelTask &>(*st.task);
  ASSERT_EQ(task.losses().size(), 3u);
  EXPECT_GT(steps, 3); // several phases per training step
  for (size_t k = 0; k < 3; ++k) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", task.losses()[k]);
    EXPECT_NEAR(std::stod(buf), want[k], 0) << "step " << k + 1;
  }
  EXPECT_GT(task.bytesInUse(), 0);
  st.task->finish();
  // A budget below the model's parameters and optimizer state: refused.
  SideTaskState small = makeSideTask("train:plan=" + plan + ",data=" + tokens);
  EXPECT_THROW(small.task->init(1000), std::runtime_error);
  run("rm -rf " + d);
}
